"""What hermes-core leaves on disk: private files, masked secrets, spills that never overwrite."""

from __future__ import annotations

import os
import stat
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.redaction import MASK
from hermes_core.stored_copy import was_masked
from hermes_plugins.session_store import DB_NAME, SQLiteSessionStore, close_connections
from hermes_plugins.tools.persist import extract_persisted_path, spill
from hermes_plugins.tools.writers import LocalWriter, RemoteWriter, safe_result_filename, spill_dir

from hypothesis_budget import examples

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture(autouse=True)
def _close_store() -> Any:
    yield
    close_connections()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- the session store ---------------------------------------------------------------------


def test_the_store_file_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        SQLiteSessionStore(tmp_path / DB_NAME).put_prompt("s1", "prompt")
    finally:
        os.umask(old)
    assert _mode(tmp_path / DB_NAME) == 0o600
    for side in ("-wal", "-shm"):  # SQLite gives its side files the database's mode
        extra = tmp_path / (DB_NAME + side)
        if extra.exists():
            assert _mode(extra) & 0o077 == 0


def test_an_existing_world_readable_store_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / DB_NAME
    SQLiteSessionStore(path).put_prompt("s1", "prompt")
    close_connections()
    os.chmod(path, 0o644)
    assert SQLiteSessionStore(path).get_prompt("s1") == "prompt"
    assert _mode(path) == 0o600


def _project(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "memories").mkdir(parents=True)
    project.mkdir()
    (project / "AGENTS.md").write_text(f"Deploy with OPENAI_API_KEY={SECRET}\n", encoding="utf-8")
    (home / "memories" / "MEMORY.md").write_text(f"the ci token is {GITHUB}", encoding="utf-8")
    return home, project


def test_secrets_in_agents_md_and_memory_are_masked_in_the_store_not_in_the_live_prompt(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    session = Session.open(cwd=project, home=home, env={}, session_id="sess-1")
    live = session.system_prompt
    assert SECRET in live and GITHUB in live  # the model sees the files as the user wrote them
    stored = SQLiteSessionStore(home / DB_NAME).get_prompt("sess-1")
    assert stored is not None
    assert SECRET not in stored and GITHUB not in stored
    assert stored.count(MASK) >= 2
    # Everything else is stored as built: only the lines holding a secret differ.
    stored_lines, live_lines = stored.splitlines(), live.splitlines()
    assert len(stored_lines) == len(live_lines)
    differ = [(a, b) for a, b in zip(stored_lines, live_lines, strict=True) if a != b]
    assert len(differ) == 2 and all(MASK in a for a, _ in differ)
    warnings = [w for w in session.warnings if w.kind == "secrets_in_prompt_file"]
    assert {w.path for w in warnings} == {str(project / "AGENTS.md"), str(home / "memories" / "MEMORY.md")}
    assert all(str(home / DB_NAME) in w.message for w in warnings)


def test_a_masked_stored_prompt_is_rebuilt_not_replayed(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    first = Session.open(cwd=project, home=home, env={}, session_id="sess-2").system_prompt
    again = Session.open(cwd=project, home=home, env={}, session_id="sess-2")
    assert again.system_prompt == first  # the same bytes, secrets included
    assert was_masked(SQLiteSessionStore(home / DB_NAME).get_prompt("sess-2") or "")


def test_a_prompt_without_secrets_is_stored_verbatim_and_replayed(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests with make test.\n", encoding="utf-8")
    session = Session.open(cwd=project, home=home, env={}, session_id="sess-3")
    live = session.system_prompt
    assert SQLiteSessionStore(home / DB_NAME).get_prompt("sess-3") == live
    assert not [w for w in session.warnings if w.kind == "secrets_in_prompt_file"]
    replay = Session.open(cwd=project, home=home, env={}, session_id="sess-3")
    assert replay.system_prompt == live and replay.built is not None and replay.built.origin == "stored"


# --- spill files ---------------------------------------------------------------------------


def _spill(home: Path, call_id: str, content: str) -> Path:
    block = spill(content, tool_name="web_extract", call_id=call_id, preview_size=100, home=home)
    path = extract_persisted_path(block)
    assert path is not None, block
    return Path(path)


def test_spill_files_are_0600_in_a_0700_directory(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = _spill(tmp_path, "call_1", "x" * 5000)
    finally:
        os.umask(old)
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700


def test_a_repeated_call_id_never_overwrites_an_earlier_spill(tmp_path: Path) -> None:
    first = _spill(tmp_path, "call_1", "first result " * 500)
    second = _spill(tmp_path, "call_1", "second result " * 500)
    third = _spill(tmp_path, "call_1", "third result " * 500)
    assert len({first, second, third}) == 3
    assert first.read_text() == "first result " * 500
    assert second.read_text() == "second result " * 500
    assert third.name == "call_1-3.txt"


def test_the_same_result_spilled_twice_reuses_its_file(tmp_path: Path) -> None:
    first = _spill(tmp_path, "call_9", "same " * 1000)
    again = _spill(tmp_path, "call_9", "same " * 1000)
    assert first == again
    assert sorted(p.name for p in spill_dir(tmp_path).iterdir()) == ["call_9.txt"]


def test_a_fifo_squatting_on_the_name_is_left_alone(tmp_path: Path) -> None:
    directory = spill_dir(tmp_path)
    directory.mkdir(parents=True)
    os.mkfifo(directory / "call_5.txt")
    path = _spill(tmp_path, "call_5", "data " * 1000)
    assert path.name == "call_5-2.txt" and path.read_text() == "data " * 1000
    assert stat.S_ISFIFO(os.lstat(directory / "call_5.txt").st_mode)


def test_a_symlink_squatting_on_the_name_is_never_followed(tmp_path: Path) -> None:
    directory = spill_dir(tmp_path)
    directory.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    os.symlink(victim, directory / "call_6.txt")
    path = _spill(tmp_path, "call_6", "data " * 1000)
    assert path.name == "call_6-2.txt"
    assert victim.read_text() == "keep me"


def test_a_remote_repeated_call_id_gets_the_next_name() -> None:
    class Sandbox:
        def __init__(self) -> None:
            self.files: dict[str, str] = {}

        def run(self, command: str, stdin_data: str | None, timeout: float) -> tuple[int, str]:
            import shlex

            words = shlex.split(command)
            if "cat" in words:
                assert "-C" in words and "077" in words
                if words[-1] in self.files:
                    return 1, "cannot overwrite existing file"
                self.files[words[-1]] = stdin_data or ""
                return 0, ""
            if words[:2] == ["test", "-e"]:
                return (0 if words[-1] in self.files else 1), ""
            if words[:2] == ["wc", "-c"]:
                return 0, str(len(self.files[words[-1]].encode()))
            return 127, ""

    sandbox = Sandbox()
    writer = RemoteWriter(executor=sandbox, directory="/r")
    assert writer("one", "c.txt") == "/r/c.txt"
    assert writer("two", "c.txt") == "/r/c-2.txt"
    assert sandbox.files == {"/r/c.txt": "one", "/r/c-2.txt": "two"}


# --- 220 hostile spill names ----------------------------------------------------------------


def _hostile_ids() -> list[str]:
    ids: list[str] = []
    traversal = ["..", ".", "../", "../../etc/passwd", "..\\..\\windows\\system32", "/abs/path",
                 "a/../../b", "./x", "~/x", "~root", "%2e%2e%2f", "..%00", "....//", "x/./y/../z",
                 "\\\\server\\share", "C:\\x", "C:", "file:///etc/passwd"]
    ids += traversal
    ids += ["a\0b", "\0", "\0\0\0", "x\0../y", "\n", "\r\n", "\t", "a\nb", "\x1b[2J", "\x7f"]
    ids += ["z" * n for n in (200, 255, 256, 1000, 4096)]
    ids += ["é" * 300, "日本語" * 100, "\U0001F600" * 70, "a\u202eb", "\ufeffx", "\u200b",
            "Ａｂｃ", "ﬁle", "\ud800", "x\udfffy", "İ", "ß" * 5]
    reserved = ["CON", "con", "PRN", "AUX", "NUL", "nul", "COM1", "com9", "LPT1", "lpt9", "CLOCK$"]
    ids += reserved + [r + ".txt" for r in reserved]
    ids += ["", " ", "   ", "-", "--", "-rf", "--help", "_", "__", "-_-", ".spill-x.tmp", ".hidden",
            "*", "?", "[a]", "$(reboot)", "`id`", "a;b", "a|b", "a&b", "'", '"', "<x>", "a b",
            "call 1", "call_1", "call-1", "CALL_1", "call_1.txt", "call_1-2", "call_1-2.txt"]
    for ch in string.punctuation:
        ids.append(f"id{ch}x")
    while len(ids) < 220:
        ids.append(f"call_{len(ids)}/../{len(ids)}")
    return ids[:220]


HOSTILE_IDS = _hostile_ids()


def test_there_are_220_hostile_ids() -> None:
    assert len(HOSTILE_IDS) == 220


def test_220_hostile_spill_names_all_land_inside_the_directory_and_nothing_is_overwritten(tmp_path: Path) -> None:
    paths: dict[Path, str] = {}
    for i, call_id in enumerate(HOSTILE_IDS):
        content = f"result {i} " * 300
        path = _spill(tmp_path, call_id, content)
        assert path.parent == spill_dir(tmp_path), call_id
        assert len(path.name.encode()) <= 255
        assert path not in paths, (call_id, paths.get(path))
        paths[path] = content
    for path, content in paths.items():
        assert path.read_text() == content
    assert not [p for p in spill_dir(tmp_path).iterdir() if p.name.startswith(".spill-")]  # no temp left
    assert len(list(spill_dir(tmp_path).iterdir())) == 220


@pytest.mark.parametrize("reserved", ["CON", "nul", "Com1", "LPT9", "aux"])
def test_windows_reserved_names_get_a_suffix(reserved: str) -> None:
    name = safe_result_filename(reserved)
    assert name.split(".")[0].upper() != reserved.upper()


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=300))
def test_any_id_is_a_writable_local_name(call_id: str) -> None:
    name = safe_result_filename(call_id, "c")
    assert name == os.path.basename(name) and len(name.encode()) <= 255
    assert set(name) <= set(string.ascii_letters + string.digits + "_-.")


def test_local_writer_refuses_what_the_sanitiser_would_never_produce(tmp_path: Path) -> None:
    writer = LocalWriter.for_home(tmp_path)
    for name in ("../x.txt", "a/b.txt", "..", "", "a\0b", "a\\b"):
        assert writer("data", name) is None


# --- a hostile sessions.db ------------------------------------------------------------------


def _plant_store(path: Path, kind: str, elsewhere: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link_to_fifo":
        os.mkfifo(elsewhere, 0o644)
        os.chmod(elsewhere, 0o644)
        os.symlink(elsewhere, path)
    elif kind == "symlink_loop":
        os.symlink(path.name, path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling":
        os.symlink(elsewhere, path)


@pytest.mark.parametrize("kind", ["fifo", "link_to_fifo", "symlink_loop", "directory", "dangling"])
def test_a_hostile_store_file_costs_the_reuse_not_the_session(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = home / DB_NAME
    elsewhere = tmp_path / "elsewhere"
    _plant_store(store, kind, elsewhere)
    session = Session.open(cwd=tmp_path, home=home, env={}, session_id="hostile-1")
    assert session.system_prompt.startswith("You are")
    warnings = [w for w in session.warnings if w.kind.startswith("session_store_")]
    if kind == "dangling":  # O_EXCL refuses to create through it: still named
        assert warnings and str(store) in warnings[0].message
    else:
        assert warnings and all(str(store) in w.message for w in warnings), [w.message for w in warnings]
    if kind == "link_to_fifo":
        # Never chmod through a link to something that is not a regular file (think /dev/zero).
        assert _mode(elsewhere) == 0o644
