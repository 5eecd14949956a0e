"""The threads that read context files: none outlives its read, a stuck one costs the timeout
and never holds up the interpreter's exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core.diagnostics import collecting
from hermes_plugins.context_files import reading

#: Only a hang guard for a child interpreter on two shared cores.
CHILD_GUARD = 60.0


def test_the_read_thread_has_ended_when_the_read_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rules")
    ran_on: list[threading.Thread] = []
    real = reading._read_bounded

    def recording(p: Path, max_chars: int) -> Any:
        ran_on.append(threading.current_thread())
        return real(p, max_chars)

    monkeypatch.setattr(reading, "_read_bounded", recording)
    for _ in range(3):
        found = reading.read_candidate(path, max_chars=100, plugin="t", timeout=5)
        assert found is not None and found.head == "rules"
    assert len(ran_on) == 3 and threading.current_thread() not in ran_on
    # No join here: the caller already waited for each thread, so none is left to wait for.
    assert [t.name for t in ran_on if t.is_alive()] == []


def test_a_failing_read_hands_its_error_back_and_leaves_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rules")
    ran_on: list[threading.Thread] = []

    def failing(p: Path, max_chars: int) -> Any:
        ran_on.append(threading.current_thread())
        raise PermissionError(13, "Permission denied", str(p))

    monkeypatch.setattr(reading, "_read_bounded", failing)
    with collecting() as warnings:
        assert reading.read_candidate(path, max_chars=100, plugin="t", timeout=5) is None
    assert [(w.kind, w.details.get("error")) for w in warnings] == [("context_file_unreadable", "Permission denied")]
    assert ran_on and not ran_on[0].is_alive()


def test_a_stuck_read_costs_the_timeout_and_its_thread_ends_when_the_read_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rules")
    release = threading.Event()
    ran_on: list[threading.Thread] = []
    real = reading._read_bounded

    def stuck(p: Path, max_chars: int) -> Any:
        ran_on.append(threading.current_thread())
        release.wait(CHILD_GUARD)
        return real(p, max_chars)

    monkeypatch.setattr(reading, "_read_bounded", stuck)
    try:
        with collecting() as warnings:
            assert reading.read_candidate(path, max_chars=100, plugin="t", timeout=0.2) is None
        assert [w.kind for w in warnings] == ["context_file_read_timeout"]
        assert ran_on[0].is_alive() and ran_on[0].daemon  # abandoned, never waited for again
    finally:
        release.set()
    ran_on[0].join(CHILD_GUARD)
    assert not ran_on[0].is_alive()


def test_a_read_stuck_forever_never_holds_up_the_interpreter_exit(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("rules")
    child = textwrap.dedent(f"""
        import threading, time
        from hermes_plugins.context_files import reading
        forever = threading.Event()
        reading._read_bounded = lambda p, n: forever.wait()  # a dead network mount
        start = time.monotonic()
        found = reading.read_candidate({str(path)!r}, max_chars=100, plugin="t", timeout=0.2)
        print(found is None, round(time.monotonic() - start, 1) < 30)
    """)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=CHILD_GUARD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
