"""Finding and reading skills on disk, and every kind of bad input on the way."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from hermes_plugins.skills import discovery
from hermes_plugins.skills.discovery import (
    GROUP_CONDITIONAL,
    GROUP_DUPLICATES,
    scan_source,
)
from hermes_plugins.skills.metadata import (
    COND_NO_MODEL,
    COND_REQUIRES_TOOLS,
    ROW_CATEGORY,
    ROW_CONDITIONS,
    ROW_DESCRIPTION,
    ROW_DIR,
    ROW_LINE,
    ROW_NAME,
    ROW_PATH,
    conditions,
)

from skills_support import write_category, write_skill


def names(scan: discovery.SourceScan) -> list[tuple[str, str]]:
    return [(row[ROW_CATEGORY], row[ROW_NAME]) for row in scan.rows]


def kinds(scan: discovery.SourceScan) -> list[str]:
    return [kind for kind, _message, _path in scan.problems]


def test_layout_gives_categories(tmp_path: Path) -> None:
    write_skill(tmp_path, "coding/python-debug", description="Debug Python")
    write_skill(tmp_path, "a/b/c")
    write_skill(tmp_path, "toplevel")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("a/b", "c"), ("coding", "python-debug"), ("general", "toplevel")]
    row = scan.rows[1]
    assert row[ROW_DESCRIPTION] == "Debug Python"
    assert row[ROW_DIR] == "python-debug"
    assert row[ROW_PATH] == "coding/python-debug/SKILL.md"
    assert row[ROW_LINE] == "    - python-debug: Debug Python"
    assert scan.problems == []


def test_rows_are_sorted_and_grouped(tmp_path: Path) -> None:
    for rel in ("z/b", "a/y", "z/a", "a/x"):
        write_skill(tmp_path, rel)
    write_skill(tmp_path, "z/c", extra="platforms: [linux]")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("a", "x"), ("a", "y"), ("z", "a"), ("z", "b"), ("z", "c")]
    assert scan.groups == [["a", 0, 2, 0], ["z", 2, 5, GROUP_CONDITIONAL]]


def test_pruned_directories(tmp_path: Path) -> None:
    # spec §16.5 #2: dependency and VCS folders are never searched; a skill's own support
    # folders are not either, but categories named like them are.
    write_skill(tmp_path, ".venv/site-packages/pkg/leaked")
    write_skill(tmp_path, "node_modules/x/leaked")
    write_skill(tmp_path, ".git/hooks/leaked")
    write_skill(tmp_path, "tools/real")
    write_skill(tmp_path, "tools/real/references/old-skill-package")
    write_skill(tmp_path, "tools/real/scripts/helper")
    write_skill(tmp_path, "scripts/deploy")
    write_skill(tmp_path, "templates/letter")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("scripts", "deploy"), ("templates", "letter"), ("tools", "real")]


def test_category_descriptions(tmp_path: Path) -> None:
    write_skill(tmp_path, "research/arxiv")
    write_category(tmp_path, "research", "  'Look things up'  ")
    write_skill(tmp_path, "solo")
    write_category(tmp_path, "", "Loose skills")
    scan = scan_source(str(tmp_path))
    assert scan.categories == {"research": "Look things up", "general": "Loose skills"}


def test_frontmatter_category_places_a_root_level_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, "flat-skill", extra="category: research")
    write_skill(tmp_path, "coding/nested", extra="category: ignored")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("coding", "nested"), ("research", "flat-skill")]


def test_org_mirror_walks_only_the_active_org(tmp_path: Path) -> None:
    write_skill(tmp_path, "_org/acme/dev/review")
    write_skill(tmp_path, "_org/other/leaked")
    assert names(scan_source(str(tmp_path))) == []
    (tmp_path / "_org" / ".active_org").write_text("acme\n")
    assert names(scan_source(str(tmp_path))) == [("org:acme/dev", "review")]


def test_name_defaults_to_directory(tmp_path: Path) -> None:
    write_skill(tmp_path, "cat/dir-name", raw="---\ndescription: no name here\n---\n")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("cat", "dir-name")]
    assert kinds(scan) == ["skill_frontmatter_incomplete"]
    assert "dir-name" in scan.problems[0][1]


def test_conditions_top_level_and_metadata_hermes(tmp_path: Path) -> None:
    # spec §16.5 #1: metadata.hermes carries the tool conditions; a non-mapping metadata
    # gives none. Top-level keys are read as well.
    full = {
        "metadata": {"hermes": {
            "requires_tools": ["web"], "requires_toolsets": ["t"],
            "fallback_for_tools": ["f"], "fallback_for_toolsets": "fs",
        }},
        "requires_tools": "terminal, web",
    }
    cond = conditions(full)
    assert cond is not None
    assert cond[:6] == [[], [], ["terminal", "web"], ["t"], ["f"], ["fs"]]
    for metadata in ("a string", None):
        assert conditions({"metadata": metadata}) is None
    assert conditions({"name": "x"}) is None
    assert conditions({"disable-model-invocation": False}) is None
    assert conditions({"disable-model-invocation": True})[COND_NO_MODEL] is True
    write_skill(tmp_path, "c/s", extra="metadata:\n  hermes:\n    requires_tools: [web_search]")
    assert scan_source(str(tmp_path)).rows[0][ROW_CONDITIONS][COND_REQUIRES_TOOLS] == ["web_search"]


def test_manifest_covers_listed_directories_and_read_files(tmp_path: Path) -> None:
    write_skill(tmp_path, "cat/one")
    write_skill(tmp_path, "two")
    write_category(tmp_path, "cat", "Things")
    scan = scan_source(str(tmp_path))
    assert sorted(scan.paths) == ["", "cat/", "cat/DESCRIPTION.md", "cat/one/SKILL.md", "two/SKILL.md"]
    for rel, mtime, size in zip(scan.paths, scan.mtimes, scan.sizes, strict=True):
        st = os.stat(os.path.join(tmp_path, rel))
        assert (st.st_mtime_ns, st.st_size) == (mtime, size)


def test_missing_source(tmp_path: Path) -> None:
    scan = scan_source(str(tmp_path / "nope"))
    assert not scan.exists and scan.rows == [] and scan.problems == []


# --- bad input: a warning naming the file, every other skill still indexed ------------------


def test_invalid_yaml(tmp_path: Path) -> None:
    write_skill(tmp_path, "c/good")
    bad = write_skill(tmp_path, "c/bad", raw="---\nname: bad\ndescription: kept\ntags: [oops\n---\n")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("c", "bad"), ("c", "good")]
    assert scan.rows[0][ROW_DESCRIPTION] == "kept"  # salvaged, as upstream does
    assert kinds(scan) == ["skill_frontmatter_invalid"]
    assert scan.problems[0][2] == str(bad) and str(bad) in scan.problems[0][1]


@pytest.mark.parametrize("raw", ["---\nname: x\n---\n", "---\ndescription: d\n---\n", "# no frontmatter\n"])
def test_missing_name_or_description(tmp_path: Path, raw: str) -> None:
    write_skill(tmp_path, "c/good")
    bad = write_skill(tmp_path, "c/x", raw=raw)
    scan = scan_source(str(tmp_path))
    assert len(scan.rows) == 2
    assert kinds(scan) == ["skill_frontmatter_incomplete"]
    assert scan.problems[0][2] == str(bad)


def test_non_utf8_frontmatter(tmp_path: Path) -> None:
    write_skill(tmp_path, "c/good")
    bad = write_skill(tmp_path, "c/latin", raw=b"---\nname: latin\ndescription: caf\xe9\n---\n")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("c", "good"), ("c", "latin")]
    row = scan.rows[1]
    assert row[ROW_DESCRIPTION] == ""  # frontmatter unusable: listed by directory name
    assert kinds(scan) == ["skill_file_not_utf8"] and scan.problems[0][2] == str(bad)


def test_non_utf8_body_keeps_the_frontmatter(tmp_path: Path) -> None:
    write_skill(tmp_path, "c/body", raw=b"---\nname: body\ndescription: fine \xc3\xa9\n---\nbad \xff byte\n")
    scan = scan_source(str(tmp_path))
    assert scan.rows[0][ROW_DESCRIPTION] == "fine é"
    assert kinds(scan) == ["skill_file_not_utf8"] and "body" in scan.problems[0][1]


def test_unreadable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path, "open/good")
    write_skill(tmp_path, "locked/hidden")
    locked = str(tmp_path / "locked")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("open", "good")]
    assert kinds(scan) == ["skills_dir_unreadable"] and scan.problems[0][2] == locked
    assert scan.complete is False  # a chmod does not move an mtime: never trust this scan later


def test_unreadable_skill_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(tmp_path, "c/good")
    bad = str(write_skill(tmp_path, "c/secret"))
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any) -> int:
        if os.fspath(path) == bad:
            raise PermissionError(errno.EACCES, "Permission denied", bad)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", fake_open)
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("c", "good"), ("c", "secret")]  # still listed, by directory name
    assert kinds(scan) == ["skill_file_unreadable"] and scan.problems[0][2] == bad
    assert scan.complete is False


def test_skill_file_that_is_a_directory(tmp_path: Path) -> None:
    write_skill(tmp_path, "c/good")
    (tmp_path / "c" / "odd" / "SKILL.md").mkdir(parents=True)
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("c", "good")]
    assert kinds(scan) == ["skill_file_unreadable"]
    assert scan.complete is True  # structural: replacing it moves the parent's mtime


def test_symlink_back_to_an_ancestor(tmp_path: Path) -> None:
    write_skill(tmp_path, "cat/good")
    os.symlink(tmp_path, tmp_path / "cat" / "loop")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("cat", "good")]
    assert kinds(scan) == ["skills_symlink_loop"]
    assert scan.problems[0][2] == str(tmp_path / "cat" / "loop")


def test_self_referencing_symlink(tmp_path: Path) -> None:
    write_skill(tmp_path, "cat/good")
    os.symlink(tmp_path / "cat" / "self", tmp_path / "cat" / "self")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("cat", "good")]
    assert kinds(scan) == ["skills_symlink_loop"]
    assert scan.problems[0][2] == str(tmp_path / "cat" / "self")


def test_dangling_symlink_is_ignored(tmp_path: Path) -> None:
    write_skill(tmp_path, "cat/good")
    os.symlink(tmp_path / "gone", tmp_path / "cat" / "dangling")
    scan = scan_source(str(tmp_path))
    assert names(scan) == [("cat", "good")] and scan.problems == []


def test_symlinked_category_is_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_skill(elsewhere, "shared")
    root = tmp_path / "skills"
    root.mkdir()
    os.symlink(elsewhere, root / "linked")
    assert names(scan_source(str(root))) == [("linked", "shared")]


def test_duplicate_names(tmp_path: Path) -> None:
    write_skill(tmp_path, "a/one", name="search")
    write_skill(tmp_path, "a/two", name="search")
    write_skill(tmp_path, "b/three", name="search")
    scan = scan_source(str(tmp_path))
    assert kinds(scan) == ["skill_name_duplicate", "skill_name_duplicate"]
    assert "only the first" in scan.problems[0][1] and "both are listed" in scan.problems[1][1]
    assert scan.groups[0][3] == GROUP_DUPLICATES and scan.groups[1][3] == 0


def test_progress_reports_top_level_entries(tmp_path: Path) -> None:
    for i in range(3):
        write_skill(tmp_path, f"c{i}/s")
    seen: list[tuple[int, int]] = []
    scan_source(str(tmp_path), progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
