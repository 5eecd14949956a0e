"""``hermes-ctx skills``: the listing, ``--json``, ``--check`` and the progress bar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hermes_core.cli import cli
from hermes_plugins.skills import cli as skills_cli
from hermes_plugins.skills import filters

from skills_support import write_skill

LONG = "Debug Python programs with pdb, tracebacks and logging, step by step"  # 68 chars


@pytest.fixture(autouse=True)
def _this_machine_is_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filters, "_host_environments", frozenset())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    root = home / "skills"
    write_skill(root, "coding/python-debug", description=LONG)
    write_skill(root, "coding/short", description="Fits easily")
    write_skill(root, "web/search", extra="requires_tools: [web_search]", description="Search the web")
    return home


def run(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    return result


def test_json_lists_every_skill_as_the_model_sees_it(home: Path) -> None:
    rows = json.loads(run("--home", str(home), "skills", "--json").stdout)
    assert [r["name"] for r in rows] == ["python-debug", "short", "search"]
    debug = rows[0]
    assert set(debug) == {
        "name", "category", "description", "index_description", "description_chars",
        "over_limit", "shown", "hidden_reason", "source", "path",
    }
    assert debug["description"] == LONG and debug["description_chars"] == 68
    assert debug["index_description"] == LONG[:57] + "..." and debug["over_limit"] is True
    assert debug["source"] == "local"
    assert debug["path"] == str(home / "skills" / "coding" / "python-debug" / "SKILL.md")
    assert all(r["shown"] for r in rows)  # without --tool, tool conditions are not applied


def test_tool_option_applies_conditions(home: Path) -> None:
    rows = json.loads(run("--home", str(home), "skills", "--json", "--tool", "skill_view").stdout)
    search = next(r for r in rows if r["name"] == "search")
    assert search["shown"] is False and search["hidden_reason"] == "tools"
    rows = json.loads(run("--home", str(home), "skills", "--json", "--tool", "web_search").stdout)
    assert next(r for r in rows if r["name"] == "search")["shown"] is True


def test_external_skills_say_so(home: Path, tmp_path: Path) -> None:
    # spec §16.5 #5: a skill under a configured external directory is marked as such
    team = tmp_path / "team"
    write_skill(team, "shared/team-skill")
    (home / "config.yaml").write_text(f"skills:\n  external_dirs: [{team}]\n")
    rows = json.loads(run("--home", str(home), "skills", "--json").stdout)
    sources = {r["name"]: r["source"] for r in rows}
    assert sources["team-skill"] == "external" and sources["short"] == "local"


def test_table(home: Path) -> None:
    out = run("--home", str(home), "skills", "--tool", "skill_view").stdout
    lines = out.splitlines()
    assert lines[0].split() == ["CATEGORY", "NAME", "SHOWN", "INDEX_DESCRIPTION"]
    assert any("python-debug" in line and "[over 60]" in line and LONG[:57] + "..." in line for line in lines)
    assert any("search" in line and "no: tools" in line for line in lines)


def test_check_flags_long_descriptions_and_exits_1(home: Path) -> None:
    result = run("--home", str(home), "skills", "--check", code=1)
    assert "python-debug: description is 68 characters (limit 60)" in result.stdout
    assert LONG[:57] + "..." in result.stdout
    assert "short" not in result.stdout and "1 of 3" in result.stderr
    offenders = json.loads(run("--home", str(home), "skills", "--check", "--json", code=1).stdout)
    assert [r["name"] for r in offenders] == ["python-debug"]


def test_check_passes_when_everything_fits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_skill(home / "skills", "c/ok", description="x" * 60)  # exactly 60 is fine
    result = run("--home", str(home), "skills", "--check")
    assert result.stdout == "" and "All 1 descriptions fit" in result.stderr


def test_problems_go_to_stderr(home: Path) -> None:
    write_skill(home / "skills", "c/broken", raw="---\nname: [\n---\n")
    result = run("--home", str(home), "skills", "--json")
    json.loads(result.stdout)
    assert "warning:" in result.stderr and "broken" in result.stderr


def test_progress_bar_on_a_slow_cold_scan(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_cli, "PROGRESS_AFTER_SECONDS", 0.0)
    result = run("--home", str(home), "skills", "--json")
    assert "Scanning skills" in result.stderr
    json.loads(result.stdout)  # the bar never reaches stdout
    monkeypatch.setattr(skills_cli, "PROGRESS_AFTER_SECONDS", 10.0)
    assert "Scanning skills" not in run("--home", str(home), "skills", "--json").stderr


def test_lazy_progress_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []

    class Bar:
        def __init__(self, **kwargs: Any) -> None:
            shown.append(kwargs["length"])

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: Any) -> None:
            shown.append("closed")

        def update(self, n: int) -> None:
            shown.append(n)

    monkeypatch.setattr(skills_cli.click, "progressbar", lambda **kwargs: Bar(**kwargs))
    clock = iter([0.0, 0.5, 1.5, 1.6])
    monkeypatch.setattr(skills_cli.time, "monotonic", lambda: next(clock))
    progress = skills_cli.LazyProgress(1.0)  # reads 0.0
    progress(1, 10)  # 0.5 s: nothing yet
    progress(2, 10)  # 1.5 s: the bar starts, caught up to 2
    progress(5, 10)
    progress.close()
    assert shown == [10, 2, 3, "closed"]
