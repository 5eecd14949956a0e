"""The environment block: host facts locally, one cached probe for remote backends (spec §7)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import PluginHost, PromptContext, hookimpl, load_config
from hermes_core.diagnostics import collecting
from hermes_plugins import environment
from hermes_plugins.environment import (
    PROBE_COMMAND,
    ProbeCache,
    describe_host,
    hermes_prompt_environment,
    local_environment,
)

PROBE_OUTPUT = "os=Linux\nkernel=6.1.0-18\nhome=/root\ncwd=/workspace\nuser=root\n"


class FakeRunner:
    """The ``hermes_environment_runner`` plugin tests use: counts calls, answers or fails."""

    def __init__(self, output: str = PROBE_OUTPUT, *, error: Exception | None = None, delay: float = 0.0,
                 release: threading.Event | None = None) -> None:
        self.output, self.error, self.delay, self.release = output, error, delay, release
        self.calls: list[tuple[str, str, float]] = []
        self.backends: list[str] = []

    @hookimpl
    def hermes_environment_runner(self, backend: str) -> Any:
        self.backends.append(backend)

        def run(command: str, timeout: float) -> str:
            self.calls.append((backend, command, timeout))
            if self.delay:
                time.sleep(self.delay)
            if self.release is not None:
                self.release.wait(30)
            if self.error:
                raise self.error
            return self.output

        return run


def runner_host(runner: FakeRunner | None = None) -> PluginHost:
    """A fresh host (so an empty probe cache) with ``runner`` as its only plugin."""
    plugins = [(runner, "fake_runner")] if runner else []
    return PluginHost.create(load_entry_points=False, env={}, plugins=plugins)


def make_ctx(tmp_path: Path, *, backend: str = "local", runner: FakeRunner | None = None,
             env: dict[str, str] | None = None, config: dict[str, Any] | None = None,
             host: PluginHost | None = None) -> PromptContext:
    host = host if host is not None else runner_host(runner)
    return PromptContext(
        cwd=tmp_path, home=tmp_path, config=load_config(data=config or {}, env={}),
        backend=backend, env=env if env is not None else {"HOME": "/home/tester"}, host=host,
    )


# --- local --------------------------------------------------------------------------------


def test_local_block_has_host_home_and_cwd(tmp_path: Path) -> None:
    text = hermes_prompt_environment(make_ctx(tmp_path)).text
    lines = text.splitlines()
    assert lines[0].startswith("Host: ")
    assert lines[1] == "User home directory: /home/tester"
    assert lines[2] == f"Current working directory: {tmp_path}"
    assert "Terminal backend" not in text


@pytest.mark.parametrize(
    ("system", "release", "mac", "wsl", "expected"),
    [
        ("Linux", "6.1.0", "", False, "Linux (6.1.0)"),
        ("Linux", "5.15.0-microsoft-standard-WSL2", "", True, "WSL (Windows Subsystem for Linux)"),
        ("Windows", "10", "", False, "Windows (10)"),
        ("Darwin", "23.4.0", "14.4", False, "macOS (14.4)"),
        ("Darwin", "23.4.0", "", False, "macOS (23.4.0)"),
        ("FreeBSD", "14.0", "", False, "FreeBSD (14.0)"),
    ],
)
def test_describe_host(system: str, release: str, mac: str, wsl: bool, expected: str) -> None:
    assert describe_host(system, release, mac_version=mac, wsl=wsl) == expected


def test_windows_adds_the_bash_note(tmp_path: Path) -> None:
    blocks = local_environment(make_ctx(tmp_path, env={"USERPROFILE": r"C:\Users\ada"}), system="Windows", release="11")
    assert blocks[0].startswith("Host: Windows (11)\nUser home directory: C:\\Users\\ada")
    assert environment.WINDOWS_HOSTNAME_NOTE in blocks[0]
    assert blocks[1] == environment.WINDOWS_BASH_HINT and "PowerShell" in blocks[1]


def test_wsl_adds_its_hint(tmp_path: Path) -> None:
    blocks = local_environment(make_ctx(tmp_path), system="Linux", release="5.15.90.1-microsoft-standard-WSL2")
    assert blocks[0].startswith("Host: WSL")
    assert blocks[-1] == environment.WSL_HINT


def test_linux_has_no_windows_notes(tmp_path: Path) -> None:
    blocks = local_environment(make_ctx(tmp_path), system="Linux", release="6.1")
    assert len(blocks) == 1 and "PowerShell" not in blocks[0]


def test_embedder_hint_comes_last_env_wins_over_config(tmp_path: Path) -> None:
    config = {"agent": {"environment_hint": "From config."}}
    text = hermes_prompt_environment(make_ctx(tmp_path, config=config)).text
    assert text.endswith("\n\nFrom config.")
    env = {"HOME": "/h", "HERMES_ENVIRONMENT_HINT": "  From env.  "}
    text = hermes_prompt_environment(make_ctx(tmp_path, config=config, env=env)).text
    assert text.endswith("\n\nFrom env.") and "From config." not in text
    assert text.index("Host:") < text.index("From env.")


# --- remote -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["docker", "ssh", "modal", "daytona", "singularity"])
def test_remote_backend_suppresses_host_facts_and_uses_the_probe(tmp_path: Path, backend: str) -> None:
    runner = FakeRunner()
    text = hermes_prompt_environment(make_ctx(tmp_path, backend=backend, runner=runner)).text
    assert text.startswith(f"Terminal backend: {backend}.")
    assert "Host:" not in text and "User home directory:" not in text and "PowerShell" not in text
    assert "  OS: Linux 6.1.0-18\n  User: root\n  Home: /root\n  Working directory: /workspace" in text
    assert runner.calls == [(backend, PROBE_COMMAND, environment.PROBE_TIMEOUT)]
    assert environment.PROBE_TIMEOUT == 4.0


def test_probe_command_asks_for_the_five_facts() -> None:
    for fragment in ("uname -s", "uname -r", "HOME", "pwd", "whoami", "id -un"):
        assert fragment in PROBE_COMMAND


def test_unknown_parts_are_dropped(tmp_path: Path) -> None:
    runner = FakeRunner("os=Linux\nkernel=unknown\nhome=/root\ncwd=/w\nuser=unknown\n")
    text = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", runner=runner)).text
    assert "  OS: Linux\n  Home: /root\n  Working directory: /w" in text
    assert "User:" not in text


def test_probe_result_is_cached_per_backend_and_cwd(tmp_path: Path) -> None:
    runner = FakeRunner()
    host = runner_host(runner)
    for _ in range(3):
        hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host))
    assert len(runner.calls) == 1
    hermes_prompt_environment(make_ctx(tmp_path, backend="ssh", host=host))
    other = tmp_path / "other"
    other.mkdir()
    hermes_prompt_environment(make_ctx(other, backend="docker", host=host))
    assert [c[0] for c in runner.calls] == ["docker", "ssh", "docker"]
    config_cwd = {"terminal": {"cwd": "/srv/app"}}
    hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host, config=config_cwd))
    hermes_prompt_environment(make_ctx(other, backend="docker", host=host, config=config_cwd))
    assert len(runner.calls) == 4  # TERMINAL_CWD is the key when set
    host.state(ProbeCache).clear()
    hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host))
    assert len(runner.calls) == 5
    hermes_prompt_environment(make_ctx(tmp_path, backend="docker", runner=runner))
    assert len(runner.calls) == 6  # another host probes for itself


def test_failure_is_described_warned_once_and_cached(tmp_path: Path) -> None:
    runner = FakeRunner(error=RuntimeError("container not running"))
    host = runner_host(runner)
    with collecting() as warnings:
        first = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host)).text
        second = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host)).text
    assert first == second
    assert "Terminal backend: docker." in first
    assert "a Docker container (Linux)" in first and "unknown" in first
    assert "uname -a && whoami && pwd" in first
    assert "Host:" not in first
    assert len(runner.calls) == 1
    assert [w.kind for w in warnings] == ["environment_probe_failed"]
    assert "container not running" in warnings[0].message


def test_unknown_backend_fallback_description(tmp_path: Path) -> None:
    runner = FakeRunner(error=OSError("no route"))
    text = hermes_prompt_environment(make_ctx(tmp_path, backend="firecracker", runner=runner)).text
    assert "a firecracker environment (likely Linux)" in text


def test_probe_timeout_is_enforced_even_if_the_runner_ignores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "PROBE_TIMEOUT", 0.05)
    # The runner answers only after the prompt is built (or after a 30 s hang guard): a probe
    # that waited for it would describe the environment instead of saying "unknown".
    release = threading.Event()
    runner = FakeRunner(release=release)
    host = runner_host(runner)
    try:
        with collecting() as warnings:
            text = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host)).text
    finally:
        release.set()
    assert "unknown" in text
    assert "TimeoutError" in warnings[0].message
    hermes_prompt_environment(make_ctx(tmp_path, backend="docker", host=host))
    assert len(runner.calls) == 1  # the timeout is cached like any failure


def test_garbage_output_counts_as_failure(tmp_path: Path) -> None:
    runner = FakeRunner("bash: not found\n")
    text = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", runner=runner)).text
    assert "a Docker container (Linux)" in text


def test_no_runner_is_not_cached(tmp_path: Path) -> None:
    text = hermes_prompt_environment(make_ctx(tmp_path, backend="docker")).text
    assert "a Docker container (Linux)" in text
    runner = FakeRunner()
    text = hermes_prompt_environment(make_ctx(tmp_path, backend="docker", runner=runner)).text
    assert "  OS: Linux" in text


def test_concurrent_builds_probe_once_per_key(tmp_path: Path) -> None:
    runner = FakeRunner(delay=0.05)
    host = runner_host(runner)
    ctxs = [make_ctx(tmp_path, backend="docker", host=host) for _ in range(4)]
    texts: list[str] = []
    threads = [threading.Thread(target=lambda c=c: texts.append(hermes_prompt_environment(c).text)) for c in ctxs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(texts)) == 1 and len(texts) == 4
    assert len(runner.calls) == 1  # the others waited for the one probe


def test_session_backend_from_config(tmp_path: Path) -> None:
    from hermes_core import Session

    runner = FakeRunner()
    host = PluginHost.create(only=(), env={}, plugins=[(runner, "fake_runner")])
    config = load_config(data={"terminal": {"backend": "Docker"}}, env={})
    session = Session.open(home=tmp_path, cwd=tmp_path, env={}, config=config, host=host, persist=False)
    assert "Terminal backend: docker." in session.system_prompt
    assert os.fspath(tmp_path) not in session.built.block_text("environment")  # type: ignore[union-attr,operator]


def test_terminal_env_sets_the_backend_the_environment_plugin_declares(tmp_path: Path) -> None:
    from hermes_core import Session
    from hermes_plugins._common.terminal import TERMINAL

    host = PluginHost.create(only=(), env={}, plugins=[(FakeRunner(), "fake_runner")])
    session = Session.open(home=tmp_path, cwd=tmp_path, env={"TERMINAL_ENV": "docker"}, host=host, persist=False)
    assert session.config.section(TERMINAL).backend == "docker"
    assert session.config.owner("terminal.backend") == "environment"
    assert "Terminal backend: docker." in session.system_prompt
