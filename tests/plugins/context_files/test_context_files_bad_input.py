"""Context files: bad input is a warning naming the file, never a lost prompt; huge files are
read as a head and a tail, never whole."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Self

import pytest

from hermes_core import Config, PluginHost, PromptBlock, PromptContext, load_config
from hermes_core.diagnostics import HostWarning, collecting
from hermes_plugins.context_files import reading
from hermes_plugins.context_files.gitroot import find_git_root

#: Only a hang guard: how long a blocked fake read waits before giving up.
HANG_GUARD = 30.0


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def build(
    host: PluginHost, cwd: Path, **kwargs: Any
) -> tuple[PromptBlock | None, list[HostWarning]]:
    ctx = PromptContext(cwd=cwd, home=cwd / "no-such-home", config=kwargs.pop("config", Config()),
                        host=host, **kwargs)
    with collecting() as warnings:
        blocks, _ = host.prompt_block("hermes_prompt_context_files", ctx)
    return (blocks[0] if blocks else None), list(warnings)


def labels(block: PromptBlock | None) -> list[str]:
    assert block is not None
    return [line[3:] for line in block.text.splitlines() if line.startswith("## ")]


def kinds(warnings: list[HostWarning]) -> list[tuple[str, str | None]]:
    return [(w.kind, w.path) for w in warnings]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    assert find_git_root(path) is None
    return path


# --- each bad file: a warning that names it, and the rest still built ----------------------------


def test_binary_file_is_skipped_and_the_next_candidate_used(plugin_host: PluginHost, outside: Path) -> None:
    (outside / "AGENTS.md").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00binary")
    write(outside / "agents.md", "readable rules")
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["agents.md"] and "ELF" not in block.text
    assert kinds(warnings) == [("context_file_binary", str(outside / "AGENTS.md"))]
    assert str(outside / "AGENTS.md") in warnings[0].message


def test_invalid_utf8_is_decoded_with_replacement(plugin_host: PluginHost, outside: Path) -> None:
    (outside / "CLAUDE.md").write_bytes(b"caf\xe9 au lait\nok line\n")
    block, warnings = build(plugin_host, outside)
    assert block is not None and "caf\ufffd au lait" in block.text and "ok line" in block.text
    assert kinds(warnings) == [("context_file_invalid_utf8", str(outside / "CLAUDE.md"))]
    assert warnings[0].details["offset"] == 3


def test_unreadable_file_is_skipped(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests may run as root, where chmod 000 does not stop a read: refuse the open instead.
    target = write(outside / "AGENTS.md", "secret rules")
    write(outside / "CLAUDE.md", "claude rules")
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path) == target:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["CLAUDE.md"]
    assert kinds(warnings) == [("context_file_unreadable", str(target))]
    assert "Permission denied" in warnings[0].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_chmod_000_file_is_skipped(plugin_host: PluginHost, outside: Path) -> None:
    target = write(outside / "AGENTS.md", "secret rules")
    write(outside / "CLAUDE.md", "claude rules")
    target.chmod(0)
    try:
        block, warnings = build(plugin_host, outside)
    finally:
        target.chmod(0o644)
    assert block is not None and labels(block) == ["CLAUDE.md"]
    assert kinds(warnings) == [("context_file_unreadable", str(target))]


def test_directory_where_a_file_was_expected(plugin_host: PluginHost, outside: Path) -> None:
    (outside / "AGENTS.md").mkdir()
    write(outside / "CLAUDE.md", "claude rules")
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["CLAUDE.md"]
    assert kinds(warnings) == [("context_file_not_a_file", str(outside / "AGENTS.md"))]
    assert "directory" in warnings[0].message


def test_fifo_is_skipped_without_hanging(plugin_host: PluginHost, outside: Path) -> None:
    os.mkfifo(outside / "CLAUDE.md")
    write(outside / ".cursorrules", "cursor rules")
    block, warnings = build(plugin_host, outside, config=load_config(
        data={"context": {"file_read_timeout": 30}}, env={}))
    assert block is not None and labels(block) == [".cursorrules"]
    assert kinds(warnings) == [("context_file_not_a_file", str(outside / "CLAUDE.md"))]


def test_symlink_loop(plugin_host: PluginHost, outside: Path) -> None:
    (outside / "AGENTS.md").symlink_to(outside / "loop-b")
    (outside / "loop-b").symlink_to(outside / "AGENTS.md")
    write(outside / "CLAUDE.md", "claude rules")
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["CLAUDE.md"]
    assert kinds(warnings) == [("context_file_symlink_loop", str(outside / "AGENTS.md"))]


def test_broken_symlink(plugin_host: PluginHost, outside: Path) -> None:
    (outside / "CLAUDE.md").symlink_to(outside / "gone.md")
    block, warnings = build(plugin_host, outside)
    assert block is None
    assert kinds(warnings) == [("context_file_broken_symlink", str(outside / "CLAUDE.md"))]


def test_symlink_out_of_the_repository_is_not_followed(
    plugin_host: PluginHost, repo: Path, tmp_path: Path
) -> None:
    secret = write(tmp_path / "elsewhere" / "notes.md", "do not leak me")
    (repo / "AGENTS.md").symlink_to(secret)
    write(repo / "CLAUDE.md", "claude rules")
    block, warnings = build(plugin_host, repo)
    assert block is not None and "do not leak me" not in block.text
    assert labels(block) == ["CLAUDE.md"]
    assert kinds(warnings) == [("context_file_outside_repository", str(repo / "AGENTS.md"))]
    assert "not followed" in warnings[0].message and str(secret) in warnings[0].message


def test_symlinked_rules_directory_out_of_the_repository(
    plugin_host: PluginHost, repo: Path, tmp_path: Path
) -> None:
    write(tmp_path / "shared-rules" / "a.mdc", "foreign rule")
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "rules").symlink_to(tmp_path / "shared-rules")
    write(repo / ".cursorrules", "own rules")
    block, warnings = build(plugin_host, repo)
    assert block is not None and labels(block) == [".cursorrules"]
    assert "foreign rule" not in block.text
    assert kinds(warnings) == [("context_file_outside_repository", str(repo / ".cursor/rules/a.mdc"))]


def test_symlink_inside_the_repository_is_followed(plugin_host: PluginHost, repo: Path) -> None:
    write(repo / "docs" / "agents.md", "linked rules")
    (repo / "AGENTS.md").symlink_to("docs/agents.md")
    block, warnings = build(plugin_host, repo)
    assert block is not None and "linked rules" in block.text and warnings == []


def test_one_bad_part_of_the_chain_keeps_the_others(plugin_host: PluginHost, repo: Path) -> None:
    (repo / "AGENTS.md").write_bytes(b"\x00\x01")
    write(repo / "app" / "AGENTS.md", "app rules")
    block, warnings = build(plugin_host, repo / "app")
    assert block is not None and labels(block) == ["app/AGENTS.md"]
    assert kinds(warnings) == [("context_file_binary", str(repo / "AGENTS.md"))]


def test_slow_read_times_out_and_the_next_loader_wins(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(outside / ".hermes.md", "slow rules")
    write(outside / "AGENTS.md", "agents rules")
    real = reading._read_bounded
    # The slow read returns only once the build is over: a build that waited for it would get
    # .hermes.md after the hang guard, never AGENTS.md. The timeout is generous enough for the
    # other read to fit it on a loaded machine.
    release = threading.Event()

    def slow(path: Path, max_chars: int) -> Any:
        if path.name == ".hermes.md":
            release.wait(HANG_GUARD)
        return real(path, max_chars)

    monkeypatch.setattr(reading, "_read_bounded", slow)
    cfg = load_config(data={"context": {"file_read_timeout": 1.0}}, env={})
    try:
        block, warnings = build(plugin_host, outside, config=cfg)
    finally:
        release.set()
    assert block is not None and labels(block) == ["AGENTS.md"]
    assert kinds(warnings) == [("context_file_read_timeout", str(outside / ".hermes.md"))]
    assert "took longer than 1s" in warnings[0].message


def test_cursor_rules_that_cannot_be_listed(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(outside / ".cursor" / "rules" / "a.mdc", "rule")
    write(outside / ".cursorrules", "legacy")
    real = os.listdir

    def refusing(path: Any = ".") -> list[str]:
        if Path(path).name == "rules":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", refusing)
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == [".cursorrules"]
    assert kinds(warnings) == [("context_file_unreadable", str(outside / ".cursor" / "rules"))]


# --- a file far larger than the cap is not read whole --------------------------------------------


class CountingOpen:
    """Counts the bytes the reader pulls from files it opens."""

    def __init__(self) -> None:
        self.read = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        handle = open(*args, **kwargs)  # noqa: SIM115 - wrapped and closed by the caller
        counter = self

        class Handle:
            def __enter__(self) -> Self:
                return self

            def __exit__(self, *exc: object) -> None:
                handle.close()

            def read(self, size: int = -1) -> bytes:
                data = handle.read(size)
                counter.read += len(data)
                return data

            def seek(self, *a: Any) -> int:
                return handle.seek(*a)

        return Handle()


def test_huge_file_is_read_as_head_and_tail(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = outside / "AGENTS.md"
    lines = [f"line {i:07d} é keeps its accent\n" for i in range(200_000)]
    path.write_text("".join(lines), encoding="utf-8")
    size = path.stat().st_size
    counting = CountingOpen()
    monkeypatch.setattr(reading, "open", counting, raising=False)
    block, warnings = build(plugin_host, outside)  # cap 20,000 chars; the file is ~6.6 MB
    assert size > 6_000_000 and counting.read <= 4 * 20_000 + 8
    assert block is not None and block.text.count("\ufffd") == 0
    source = block.meta["sources"][0]
    assert source["truncated"] and source["kept_chars"] <= 18_000
    assert abs(source["chars"] - len("".join(lines).strip())) < 0.01 * source["chars"]
    assert "line 0000000 é keeps its accent" in block.text
    assert "line 0199999 é keeps its accent" in block.text
    assert "line 0100000" not in block.text
    (warning,) = warnings
    assert warning.kind == "context_file_truncated" and "about" in warning.message


def _process_bytes_read() -> int | None:
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return None


def test_sparse_file_of_many_gigabytes_is_cheap(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = outside / "CLAUDE.md"
    with open(path, "wb") as handle:
        # Text where the head and tail reads land (4 bytes per kept character at most) ...
        handle.write(b"FIRST LINE\n" + b"head text\n" * 8_000)
        # ... and a hole between: read whole, this would be 8 GiB of NUL bytes (a "binary" file).
        handle.seek(8 * 1024**3)
        handle.write(b"tail text\n" * 3_000 + b"LAST LINE\n")
    # Cheap is counted in bytes read, not seconds (a loaded machine is slow either way).
    real, read = reading._read_bounded, []

    def counted(path: Path, max_chars: int) -> Any:
        raw = real(path, max_chars)
        read.append(len(raw.head) + len(raw.tail or b""))
        return raw

    monkeypatch.setattr(reading, "_read_bounded", counted)
    before = _process_bytes_read()
    block, warnings = build(plugin_host, outside)
    after = _process_bytes_read()
    assert sum(read) < 16 * 1024**2
    if before is not None and after is not None:  # Linux: every read of the process, any path
        assert after - before < 64 * 1024**2
    assert block is not None and "FIRST LINE" in block.text and block.text.endswith("LAST LINE")
    assert block.meta["sources"][0]["chars"] > 8 * 1024**3
    assert [w.kind for w in warnings] == ["context_file_truncated"]


def test_reads_still_work_in_a_forked_child(tmp_path: Path) -> None:
    path = write(tmp_path / "AGENTS.md", "rules")
    # A read in the parent leaves an idle worker thread behind, which a child does not inherit.
    assert reading.read_candidate(path, max_chars=100, plugin="t", timeout=5) is not None
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        found = reading.read_candidate(path, max_chars=100, plugin="t", timeout=2)
        os._exit(0 if found is not None and found.head == "rules" else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
