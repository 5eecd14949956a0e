"""Hostile files under HERMES_HOME or in a project: nothing hangs, nothing crashes, all is named.

Each case plants one thing where a prompt build reads a file - a FIFO (the read would wait for
a writer forever), a symlink to ``/dev/zero`` (a read that never ends), a Unix socket, a symlink
loop - and builds a session's prompt through the public ``Session.open`` path. The build must
finish (a watchdog turns a hang into a failure), keep what the other files hold, and leave a
warning naming the planted file.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.diagnostics import collecting
from hermes_core.errors import ConfigError
from hermes_core.files import FileRefused, read_bytes_bounded, read_text_bounded
from hermes_plugins.identity import DEFAULT_IDENTITY
from hermes_plugins.skills import filters

from skills_support import write_category, write_skill

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and Unix sockets")

SKILL_TOOLS = ["skill_view", "skills_list"]


class Hung(BaseException):
    """Raised by the watchdog; a BaseException so no ``except OSError``/``Exception`` hides it."""


#: Seconds before the watchdog calls a build hung. Only a hang guard: a read blocked on a FIFO
#: never returns, while a bounded read of a 10 GiB sparse file under tracemalloc takes seconds
#: on two shared cores, so a tight figure here failed slow machines, not blocking reads.
HANG_GUARD = 60.0


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """A read that blocks raises here instead of hanging the suite (main thread only)."""

    def fire(signum: int, frame: object) -> None:
        raise Hung("the build hung on a hostile file")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, HANG_GUARD)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def _fresh_skills(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(filters, "_host_environments", frozenset())
    yield


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    os.symlink("/dev/zero", path)


def _loop(path: Path) -> None:
    os.symlink(path.name, path)  # a link to itself


def _socket(path: Path) -> None:
    # Bind by a relative name: Unix socket paths are limited to ~100 bytes.
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path.name)
        _SOCKETS.append(sock)
    finally:
        os.chdir(here)


_SOCKETS: list[socket.socket] = []

PLANTS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "dev_zero": _dev_zero,
    "symlink_loop": _loop,
    "socket": _socket,
}

#: (name, where: "home" or "project", path relative to it)
TARGETS = [
    ("MEMORY.md", "home", "memories/MEMORY.md"),
    ("USER.md", "home", "memories/USER.md"),
    ("SOUL.md", "home", "SOUL.md"),
    ("SKILL.md", "home", "skills/tools/bad/SKILL.md"),
    ("DESCRIPTION.md", "home", "skills/tools/DESCRIPTION.md"),
    ("snapshot", "home", ".skills_prompt_snapshot.json"),
    ("active_org", "home", "skills/_org/.active_org"),
    ("AGENTS.md", "project", "AGENTS.md"),
    ("CLAUDE.md", "project", "CLAUDE.md"),
    ("HERMES.md", "project", "HERMES.md"),
    (".cursorrules", "project", ".cursorrules"),
]


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (home / "memories").mkdir(parents=True)
    project.mkdir()
    (project / ".git").mkdir()
    write_skill(home / "skills", "tools/good", description="Still listed")
    (home / "memories" / "MEMORY.md").write_text("remembered fact", encoding="utf-8")
    (home / "memories" / "USER.md").write_text("user likes tea", encoding="utf-8")
    return home, project


def _build(home: Path, project: Path) -> tuple[str, list[object]]:
    session = Session.open(cwd=project, home=home, tools=SKILL_TOOLS, env={}, persist=False)
    prompt = session.system_prompt
    return prompt, list(session.warnings)


def _named(warnings: list[object], target: Path) -> list[object]:
    shown = str(target)
    return [w for w in warnings if shown in (getattr(w, "path", None) or "") + getattr(w, "message", "")]


@pytest.mark.parametrize("plant", sorted(PLANTS))
@pytest.mark.parametrize(("label", "where", "rel"), TARGETS, ids=[t[0] for t in TARGETS])
def test_a_hostile_file_is_refused_with_a_warning_naming_it(
    tree: tuple[Path, Path], plant: str, label: str, where: str, rel: str
) -> None:
    home, project = tree
    target = (home if where == "home" else project) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    PLANTS[plant](target)
    try:
        prompt, warnings = _build(home, project)
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()
    assert _named(warnings, target), [getattr(w, "message", w) for w in warnings]
    # What the other files hold is still there.
    assert "Still listed" in prompt
    if label != "MEMORY.md":
        assert "remembered fact" in prompt
    if label != "USER.md":
        assert "user likes tea" in prompt


@pytest.mark.parametrize("plant", ["fifo", "dev_zero", "socket"])
def test_a_hostile_config_yaml_is_a_config_error_naming_it(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "config.yaml"
    PLANTS[plant](target)
    try:
        with pytest.raises(ConfigError) as caught:
            load_config(home=tmp_path, env={})
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()
    assert str(target) in str(caught.value)
    assert "not read" in str(caught.value)


def test_a_config_yaml_symlink_loop_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "config.yaml"
    _loop(target)
    with pytest.raises(ConfigError, match="symlink loop"):
        load_config(home=tmp_path, env={})


def test_an_oversized_config_yaml_is_refused_not_cut(tmp_path: Path) -> None:
    target = tmp_path / "config.yaml"
    target.write_text("timezone: UTC\n" + "# padding\n" * 200, encoding="utf-8")
    with pytest.raises(ConfigError, match="larger than 100 bytes"):
        load_config(home=tmp_path, env={"HERMES_MAX_READ_BYTES": "100"})
    assert load_config(home=tmp_path, env={}).raw["timezone"] == "UTC"


def test_an_oversized_memory_file_is_cut_with_a_marker(tree: tuple[Path, Path]) -> None:
    home, project = tree
    target = home / "memories" / "MEMORY.md"
    target.write_text("first fact\n§\n" + "x" * 5000, encoding="utf-8")
    (home / "config.yaml").write_text("files:\n  max_read_bytes: 1000\n", encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert "first fact" in prompt
    assert f"[... truncated: {target}" in prompt
    assert [(w.kind, w.plugin) for w in _named(warnings, target)] == [("file_truncated", "memory")]


def test_a_memory_file_over_the_read_bound_and_the_render_cap_is_one_warning(tree: tuple[Path, Path]) -> None:
    home, project = tree
    target = home / "memories" / "MEMORY.md"
    target.write_text("first fact\n§\n" + "x" * 50_000, encoding="utf-8")
    (home / "config.yaml").write_text("files:\n  max_read_bytes: 20000\n", encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert "first fact" in prompt and f"[... truncated: {target}" in prompt
    assert "characters of this store omitted here" in prompt
    assert [(w.kind, w.plugin) for w in _named(warnings, target)] == [("file_truncated", "memory")]
    assert not [w for w in warnings if getattr(w, "kind", "") == "memory_truncated"]


def test_an_oversized_soul_is_cut_with_a_marker(tree: tuple[Path, Path]) -> None:
    home, project = tree
    target = home / "SOUL.md"
    target.write_text("You are Soul. " + "é" * 3000, encoding="utf-8")  # 2-byte characters
    (home / "config.yaml").write_text("files:\n  max_read_bytes: 1001\n", encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert prompt.startswith("You are Soul.")
    assert f"[... truncated: {target}" in prompt
    assert "\ufffd" not in prompt  # the cut never splits a character
    assert [(w.kind, w.plugin) for w in _named(warnings, target)] == [("file_truncated", "identity")]


def _binary(path: Path) -> None:
    path.write_bytes(b"You are \x00 binary")


def _directory(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    os.symlink(path.parent / "gone.md", path)


UNUSABLE = {"binary": _binary, "directory": _directory, "dangling": _dangling, "fifo": _fifo}


#: Memory entries keep NUL bytes (the model writes them): a binary memory file is read.
UNUSABLE_CASES = [(label, rel, plant) for label, _, rel in TARGETS[:3] for plant in sorted(UNUSABLE)
                  if plant != "binary" or label == "SOUL.md"]


@pytest.mark.parametrize(("label", "rel", "plant"), UNUSABLE_CASES, ids=["-".join(c[::2]) for c in UNUSABLE_CASES])
def test_an_unusable_soul_or_memory_file_is_one_warning_naming_it(
    tree: tuple[Path, Path], label: str, rel: str, plant: str
) -> None:
    home, project = tree
    target = home / rel
    target.unlink(missing_ok=True)
    UNUSABLE[plant](target)
    prompt, warnings = _build(home, project)
    named = _named(warnings, target)
    assert len(named) == 1, [(w.kind, w.plugin, w.message) for w in named]
    assert named[0].plugin == ("identity" if label == "SOUL.md" else "memory")
    assert str(target) in named[0].message
    if label == "SOUL.md":
        assert prompt.startswith(DEFAULT_IDENTITY)


def test_an_oversized_skill_file_is_read_only_up_to_the_bound(tree: tuple[Path, Path]) -> None:
    home, project = tree
    target = write_skill(home / "skills", "tools/big", description="Big one", body="y" * 10_000)
    (home / "config.yaml").write_text("files:\n  max_read_bytes: 2000\n", encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert "Big one" in prompt  # the frontmatter is at the head
    assert [w for w in _named(warnings, target) if getattr(w, "kind", "") == "skill_file_too_large"]


def test_a_category_description_fifo_keeps_the_category_skills(tree: tuple[Path, Path]) -> None:
    home, project = tree
    write_category(home / "skills", "other", "Other things")
    write_skill(home / "skills", "other/kept", description="Kept skill")
    target = home / "skills" / "other" / "DESCRIPTION.md"
    target.unlink()
    os.mkfifo(target)
    prompt, warnings = _build(home, project)
    assert "Kept skill" in prompt
    assert _named(warnings, target)


# --- the helper itself ------------------------------------------------------------------


def test_read_bytes_bounded_reads_at_most_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a" * 100)
    read = read_bytes_bounded(path, 10)
    assert (read.data, read.truncated, read.size) == (b"a" * 10, True, 100)
    whole = read_bytes_bounded(path, 100)
    assert (whole.data, whole.truncated) == (b"a" * 100, False)


@pytest.mark.parametrize("plant", ["fifo", "dev_zero", "symlink_loop", "socket"])
def test_read_bytes_bounded_refuses_what_is_not_a_regular_file(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "thing"
    PLANTS[plant](target)
    try:
        with pytest.raises(FileRefused) as caught:
            read_bytes_bounded(target, 1000)
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()
    assert str(target) in str(caught.value)


def test_read_bytes_bounded_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="a directory"):
        read_bytes_bounded(tmp_path, 10)


def test_read_text_bounded_warns_and_marks(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("héllo world", encoding="utf-8")
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with collecting() as warnings:
        cut = read_text_bounded(path, 2, "the notes", plugin="demo")
        refused = read_text_bounded(fifo, 100, "the pipe", plugin="demo")
        absent = read_text_bounded(tmp_path / "none.md", 100, "nothing")
    assert cut is not None and cut.startswith("h\n[... truncated: ")  # "é" would be split: dropped
    assert refused is None and absent is None
    assert [(w.kind, w.path, w.plugin) for w in warnings] == [
        ("file_truncated", str(path), "demo"),
        ("file_refused", str(fifo), "demo"),
    ]
    assert "FIFO" in warnings[1].message and str(fifo) in warnings[1].message


def test_read_text_bounded_refuses_binary_and_names_a_file_in_the_way(tmp_path: Path) -> None:
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"text\x00more")
    (tmp_path / "notes").write_text("a file, not a directory")
    inside = tmp_path / "notes" / "deeper" / "x.md"
    with collecting() as warnings:
        assert read_text_bounded(binary, 100, "the blob", plugin="demo", skipped="left out") is None
        assert read_text_bounded(inside, 100, "the notes") is None
        assert read_text_bounded(tmp_path / "none" / "x.md", 100, "nothing") is None  # quietly
    assert [(w.kind, w.path) for w in warnings] == [("file_binary", str(binary)), ("file_unreadable", str(inside))]
    assert warnings[0].message.endswith("; left out")
    assert f"{tmp_path / 'notes'} is not a directory" in warnings[1].message


# --- more shapes: huge sparse files, directories, dangling links, other devices -----------


def _sparse(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(10 * 1024**3)  # 10 GiB of nothing, costs no disk


def _directory(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    os.symlink(path.parent / "gone-for-good", path)


def _urandom(path: Path) -> None:
    os.symlink("/dev/urandom", path)


MORE_PLANTS: dict[str, Callable[[Path], None]] = {
    "directory": _directory,
    "dangling_symlink": _dangling,
    "dev_urandom": _urandom,
}
#: Targets where a warning is expected for every shape above (SKILL.md as a dangling link is
#: a directory without a skill file: nothing to warn about).
MORE_TARGETS = [t for t in TARGETS if t[0] not in {"active_org"}]


@pytest.mark.parametrize("plant", sorted(MORE_PLANTS))
@pytest.mark.parametrize(("label", "where", "rel"), MORE_TARGETS, ids=[t[0] for t in MORE_TARGETS])
def test_directories_dangling_links_and_devices_are_named(
    tree: tuple[Path, Path], plant: str, label: str, where: str, rel: str
) -> None:
    if plant == "dangling_symlink" and label in {"SKILL.md", "snapshot"}:
        pytest.skip("absent there is normal: no skill file / no snapshot yet")
    home, project = tree
    target = (home if where == "home" else project) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    MORE_PLANTS[plant](target)
    prompt, warnings = _build(home, project)
    assert _named(warnings, target), [getattr(w, "message", w) for w in warnings]
    assert "Still listed" in prompt


@pytest.mark.parametrize(("label", "where", "rel"), TARGETS, ids=[t[0] for t in TARGETS])
def test_a_10_gib_sparse_file_is_read_only_up_to_its_bound(
    tree: tuple[Path, Path], label: str, where: str, rel: str
) -> None:
    import tracemalloc

    home, project = tree
    target = (home if where == "home" else project) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    _sparse(target)
    tracemalloc.start()
    try:
        prompt, warnings = _build(home, project)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024**2  # bounded reads: never the 10 GiB
    assert "Still listed" in prompt
    # NUL bytes everywhere: refused as binary, cut with a marker, or a snapshot ignored - named.
    assert _named(warnings, target), [getattr(w, "message", w) for w in warnings]


@pytest.mark.parametrize("plant", ["directory", "dangling_symlink", "sparse"])
def test_config_yaml_shapes_are_config_errors_naming_the_file(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "config.yaml"
    {"directory": _directory, "dangling_symlink": _dangling, "sparse": _sparse}[plant](target)
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path, env={})
    assert str(target) in str(caught.value)


def test_config_yaml_that_is_not_utf8_or_asks_for_python_objects(tmp_path: Path) -> None:
    target = tmp_path / "config.yaml"
    target.write_bytes(b"timezone: caf\xe9\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(home=tmp_path, env={})
    target.write_text("timezone: !!python/object/apply:os.system ['echo pwned']\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(home=tmp_path, env={})


@pytest.mark.parametrize(
    "frontmatter",
    [
        "name: x\ndescription: !!python/object/apply:os.system ['echo pwned']\n",
        "name: x\ndescription: " + "[" * 5000 + "]" * 5000 + "\n",
        "name: &a [*a]\ndescription: d\n",
    ],
    ids=["python-tag", "deep", "recursive"],
)
def test_hostile_skill_frontmatter_is_a_warning_naming_the_file(tree: tuple[Path, Path], frontmatter: str) -> None:
    home, project = tree
    bad = write_skill(home / "skills", "tools/bad", raw="---\n" + frontmatter + "---\nbody\n")
    prompt, warnings = _build(home, project)
    assert "Still listed" in prompt and "pwned" not in prompt
    assert [w for w in warnings if getattr(w, "path", None) == str(bad)]


def test_a_deeply_nested_snapshot_is_ignored_and_rebuilt(tree: tuple[Path, Path]) -> None:
    home, project = tree
    snapshot = home / ".skills_prompt_snapshot.json"
    snapshot.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert "Still listed" in prompt
    assert _named(warnings, snapshot)


def test_the_prompt_cli_names_a_fifo_memory_file_and_exits_0(tree: tuple[Path, Path]) -> None:
    from click.testing import CliRunner

    from hermes_core.cli import cli

    home, project = tree
    target = home / "memories" / "MEMORY.md"
    target.unlink()
    os.mkfifo(target)
    result = CliRunner().invoke(cli, ["--home", str(home), "prompt", "--cwd", str(project)])
    assert result.exit_code == 0, result.output
    assert "user likes tea" in result.stdout
    assert str(target) in result.stderr


def test_a_megabyte_of_yaml_frontmatter_is_not_parsed_for_seconds(tree: tuple[Path, Path]) -> None:
    home, project = tree
    frontmatter = "name: huge\ndescription: Huge one\nextra: [" + "1," * 600_000 + "1]\n"
    bad = write_skill(home / "skills", "tools/huge", raw="---\n" + frontmatter + "---\nbody\n")
    prompt, warnings = _build(home, project)
    assert "Huge one" in prompt  # salvaged from its plain lines
    named = [w for w in warnings if getattr(w, "path", None) == str(bad)]
    assert named and "a YAML parse is allowed" in named[0].message


def test_the_config_cli_exits_2_naming_a_fifo_config(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hermes_core.cli import cli

    target = tmp_path / "config.yaml"
    os.mkfifo(target)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config", "--json"])
    assert result.exit_code == 2
    assert str(target) in result.stderr and "FIFO" in result.stderr


def test_a_memories_file_where_the_folder_should_be_is_named(tree: tuple[Path, Path]) -> None:
    home, project = tree
    folder = home / "memories"
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.write_text("not a folder", encoding="utf-8")
    prompt, warnings = _build(home, project)
    assert "Still listed" in prompt
    assert _named(warnings, folder / "MEMORY.md") and _named(warnings, folder / "USER.md")
