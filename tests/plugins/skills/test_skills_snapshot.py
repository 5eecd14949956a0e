"""The disk snapshot: re-used only when its manifest matches, rebuilt otherwise, never torn."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core.diagnostics import collecting
from hermes_plugins.skills import filters, plugin, snapshot
from hermes_plugins.skills.snapshot import SNAPSHOT_NAME, load_snapshot, write_snapshot

from skills_support import age, make_ctx, touch, write_category, write_skill


def build(home: Path, **kwargs: object) -> tuple[object, list]:
    """A build in a fresh state (as a new process would do it): no host, so no LRU."""
    with collecting() as warnings:
        block = plugin.hermes_prompt_skills_index(make_ctx(home, **kwargs))  # type: ignore[arg-type]
    return block, warnings


@pytest.fixture
def tree(hermes_home: Path) -> Path:
    root = hermes_home / "skills"
    write_skill(root, "coding/python-debug", description="Debug Python")
    write_skill(root, "research/arxiv", description="Search arXiv")
    write_category(root, "research", "Look things up")
    age(root)
    return root


def test_cold_build_writes_the_snapshot_and_the_next_build_uses_it(hermes_home: Path, tree: Path) -> None:
    first, _ = build(hermes_home)
    assert first.meta["origin"] == "scan"
    doc = json.loads((hermes_home / SNAPSHOT_NAME).read_bytes())
    assert doc["format"] == snapshot.FORMAT and doc["version"] == snapshot.VERSION
    entry = doc["sources"][str(tree)]
    assert "coding/python-debug/SKILL.md" in entry["paths"]
    second, _ = build(hermes_home)
    assert second.meta["origin"] == "snapshot"
    assert second.text == first.text


@pytest.mark.parametrize(
    "change",
    [
        "edit_skill", "add_skill_to_category", "add_category", "remove_skill",
        "edit_description_md", "add_description_md",
    ],
)
def test_any_change_invalidates_the_snapshot(hermes_home: Path, tree: Path, change: str) -> None:
    build(hermes_home)
    if change == "edit_skill":
        path = write_skill(tree, "coding/python-debug", description="Debug Python, changed")
        touch(path, hours_ago=0.5)
        expected = "Debug Python, changed"
    elif change == "add_skill_to_category":
        write_skill(tree, "coding/new-one", description="Brand new")
        age(tree, hours=0.5)
        expected = "new-one: Brand new"
    elif change == "add_category":
        write_skill(tree, "fresh/thing", description="In a new category")
        age(tree, hours=0.5)
        expected = "  fresh:"
    elif change == "remove_skill":
        (tree / "research" / "arxiv" / "SKILL.md").unlink()
        age(tree, hours=0.5)
        expected = None
    elif change == "edit_description_md":
        path = write_category(tree, "research", "Find papers")
        touch(path, hours_ago=0.5)
        expected = "  research: Find papers"
    else:
        path = write_category(tree, "coding", "Write code")
        age(tree, hours=0.5)
        expected = "  coding: Write code"
    block, _ = build(hermes_home)
    assert block.meta["origin"] == "scan"
    if expected is None:
        assert "arxiv" not in block.text
    else:
        assert expected in block.text
    assert build(hermes_home)[0].meta["origin"] == "snapshot"  # rewritten, current again


def test_same_size_same_mtime_edit_is_not_trusted_when_racy(hermes_home: Path) -> None:
    # A file written in the same clock tick as the scan may keep its mtime; a snapshot whose
    # files are that fresh is rebuilt instead of trusted.
    root = hermes_home / "skills"
    write_skill(root, "c/s", description="fresh")
    build(hermes_home)
    block, _ = build(hermes_home)
    assert block.meta["origin"] == "scan"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "not valid JSON"),
        (b"{\"format\": \"hermes-skills-index\", \"version\": 1, \"sources\": {", "not valid JSON"),
        (b"\x00\xff garbage", "not valid JSON"),
        (b"[1, 2, 3]", "not a hermes skills snapshot"),
        (b'{"format": "hermes-skills-index", "version": 999, "sources": {}}', "format version 999"),
        (b'{"format": "hermes-skills-index", "version": 1, "sources": []}', "no sources table"),
    ],
)
def test_bad_snapshot_is_ignored_reported_and_rebuilt(
    hermes_home: Path, tree: Path, content: bytes, why: str
) -> None:
    good, _ = build(hermes_home)
    (hermes_home / SNAPSHOT_NAME).write_bytes(content)
    block, warnings = build(hermes_home)
    assert block.text == good.text and block.meta["origin"] == "scan"
    assert [w.kind for w in warnings] == ["skills_snapshot_ignored"]
    assert why in warnings[0].message and warnings[0].path == str(hermes_home / SNAPSHOT_NAME)
    with collecting() as again:  # an event of that build, not a property of the index
        plugin.hermes_prompt_skills_index(make_ctx(hermes_home))
    assert again == []
    assert build(hermes_home)[0].meta["origin"] == "snapshot"


def test_truncated_snapshot(hermes_home: Path, tree: Path) -> None:
    build(hermes_home)
    path = hermes_home / SNAPSHOT_NAME
    path.write_bytes(path.read_bytes()[:-20])
    block, warnings = build(hermes_home)
    assert block.meta["origin"] == "scan" and "not valid JSON" in warnings[0].message


def test_malformed_entry_falls_back_to_a_scan(hermes_home: Path, tree: Path) -> None:
    good, _ = build(hermes_home)
    path = hermes_home / SNAPSHOT_NAME
    doc = json.loads(path.read_bytes())
    entry = doc["sources"][str(tree)]
    entry["rows"] = [["only", "three", "items"]] * len(entry["rows"])
    path.write_text(json.dumps(doc))
    block, warnings = build(hermes_home)
    assert block.text == good.text
    assert "skills_snapshot_ignored" in [w.kind for w in warnings]


def test_filters_are_applied_on_the_snapshot_path(
    hermes_home: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reference re-checked only platforms from its snapshot: a skill hidden by its
    # environments could come back. Here every filter runs on both paths.
    monkeypatch.setattr(filters, "_host_environments", frozenset())  # whatever this machine is
    write_skill(tree, "ops/container-only", extra="environments: [docker]")
    write_skill(tree, "ops/needs-web", extra="requires_tools: [web_search]")
    write_skill(tree, "ops/mac-only", extra="platforms: [macos]")
    age(tree)
    for _ in range(2):
        block, _ = build(hermes_home, tools={"skill_view"})
        assert "container-only" not in block.text and "needs-web" not in block.text
        assert ("mac-only" in block.text) is (os.sys.platform == "darwin")
    assert block.meta["origin"] == "snapshot"
    docker, _ = build(hermes_home, tools={"skill_view", "web_search"}, backend="docker")
    assert docker.meta["origin"] == "snapshot"
    assert "container-only" in docker.text and "needs-web" in docker.text


def test_problems_are_reported_again_from_the_snapshot(hermes_home: Path, tree: Path) -> None:
    write_skill(tree, "coding/broken", raw="---\nname: broken\ndescription: [unclosed\n---\n")
    age(tree)
    _, first = build(hermes_home)
    block, again = build(hermes_home)
    assert block.meta["origin"] == "snapshot"
    assert [w.kind for w in first] == [w.kind for w in again] == ["skill_frontmatter_invalid"]


def test_incomplete_scan_is_never_trusted(hermes_home: Path, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.scandir
    locked = str(tree / "research")

    def scandir(path: object) -> object:
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    build(hermes_home)
    monkeypatch.undo()
    block, _ = build(hermes_home)  # permissions fixed: a chmod moved no mtime
    assert block.meta["origin"] == "scan" and "arxiv" in block.text


def test_write_failure_is_not_fatal(hermes_home: Path, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "replace", refuse)
    block, warnings = build(hermes_home)
    assert "python-debug" in block.text and warnings == []
    assert not (hermes_home / SNAPSHOT_NAME).exists()
    assert [p for p in os.listdir(hermes_home) if p.endswith(".tmp")] == []


def test_stdlib_json_fallback(hermes_home: Path, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "_loads", json.loads)
    monkeypatch.setattr(
        snapshot, "_dumps", lambda doc: json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    )
    first, _ = build(hermes_home)
    second, _ = build(hermes_home)
    assert second.meta["origin"] == "snapshot" and second.text == first.text


def test_snapshot_missing_is_quiet(hermes_home: Path) -> None:
    assert load_snapshot(str(hermes_home / SNAPSHOT_NAME)) == ({}, None)


def _hammer(path: str, marker: int, rounds: int, go: Any) -> None:
    entry = {"complete": True, "rows": [["x" * 200, marker]] * 500}
    assert go.wait(60)
    for _ in range(rounds):
        assert write_snapshot(path, {f"/root-{marker}": entry})


def test_concurrent_writers_never_tear_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / SNAPSHOT_NAME)
    assert write_snapshot(path, {"/root-first": {"complete": True, "rows": []}})
    context = multiprocessing.get_context("fork")
    # The writers start once the reader is reading (a loaded machine could otherwise let them
    # all finish before its first read, and the test would have read nothing).
    go = context.Event()
    writers = [context.Process(target=_hammer, args=(path, n, 60, go)) for n in range(4)]
    for proc in writers:
        proc.start()
    reads = 0
    deadline = time.monotonic() + 120  # a hang guard only
    while reads == 0 or any(p.is_alive() for p in writers) and time.monotonic() < deadline:
        doc = json.loads(Path(path).read_bytes())  # a torn file would not parse (nor be absent)
        assert len(doc["sources"]) == 1
        reads += 1
        go.set()
    for proc in writers:
        proc.join()
        assert proc.exitcode == 0
    assert reads > 0
    assert json.loads(Path(path).read_bytes())["version"] == snapshot.VERSION
    assert sorted(os.listdir(tmp_path)) == [SNAPSHOT_NAME]  # no temporary file left behind


def test_concurrent_builds_in_threads(hermes_home: Path, tree: Path) -> None:
    import threading

    texts: list[str] = []

    def run() -> None:
        for _ in range(5):
            (hermes_home / SNAPSHOT_NAME).unlink(missing_ok=True)
            texts.append(plugin.hermes_prompt_skills_index(make_ctx(hermes_home)).text)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(texts)) == 1
    json.loads((hermes_home / SNAPSHOT_NAME).read_bytes())
