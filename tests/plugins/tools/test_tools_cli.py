"""``hermes-ctx tools assemble`` and ``hermes-ctx tools search``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli

from tool_catalog import CATALOG, needs_stemmer


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(CATALOG))
    return path


def run(*args: str, home: Path | None = None) -> Any:
    runner = CliRunner()
    prefix = ["--home", str(home)] if home else []
    return runner.invoke(cli, [*prefix, "tools", *args], catch_exceptions=False)


def test_assemble_json(catalog: Path) -> None:
    result = run("assemble", "--catalog", str(catalog), "--context-length", "200000", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == {
        "activated": True,
        "tools": ["terminal", "read_file", "tool_search", "tool_describe", "tool_call"],
        "deferred_count": 18,
        "deferred_tokens": data["deferred_tokens"],
        "listing_form": "full",
    }
    assert data["deferred_tokens"] > 500


def test_assemble_human_output(catalog: Path) -> None:
    result = run("assemble", "--catalog", str(catalog))
    assert result.exit_code == 0
    assert "deferred tools:  18" in result.stdout and "tool_search" in result.stdout


def test_assemble_respects_the_config(catalog: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("tools:\n  search:\n    enabled: off\n")
    data = json.loads(run("assemble", "--catalog", str(catalog), "--json", home=home).stdout)
    assert data["activated"] is False and data["listing_form"] is None
    assert len(data["tools"]) == len(CATALOG)


def test_search_json_best_first(catalog: Path) -> None:
    result = run("search", "pull request", "--catalog", str(catalog), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["query"] == "pull request"
    assert [r["name"] for r in data["results"]] == ["github_merge_pull_request", "github_create_pull_request"]
    first = data["results"][0]
    assert set(first) == {"name", "score", "source", "description"}
    assert first["source"] == "github" and first["description"] == "Merge an open pull request."
    assert first["score"] >= data["results"][1]["score"]


@needs_stemmer
def test_search_limit_and_exact_match(catalog: Path) -> None:
    data = json.loads(run("search", "github_create_issue", "--catalog", str(catalog), "--limit", "1", "--json").stdout)
    assert [r["name"] for r in data["results"]] == ["github_create_issue"]
    assert data["results"][0]["exact"] is True
    data = json.loads(run("search", "github_create_issue", "--catalog", str(catalog), "--json").stdout)
    assert [r["name"] for r in data["results"]] == ["github_create_issue", "github_list_issues"]
    assert "exact" not in data["results"][1]


def test_search_table_and_no_match(catalog: Path) -> None:
    table = run("search", "refund", "--catalog", str(catalog)).stdout
    assert table.splitlines()[0].split() == ["NAME", "SCORE", "SOURCE", "DESCRIPTION"]
    assert "stripe_refund_payment" in table
    assert "no deferred tool matches" in run("search", "xylophone", "--catalog", str(catalog)).stdout


@pytest.mark.parametrize(
    "content,needle",
    [(None, "catalog file not found"), ("{oops", "invalid JSON"), ('"a string"', "expected a JSON list")],
)
def test_bad_catalog_is_a_clear_error(tmp_path: Path, content: str | None, needle: str) -> None:
    path = tmp_path / "tools.json"
    if content is not None:
        path.write_text(content)
    result = run("assemble", "--catalog", str(path), "--json")
    assert result.exit_code == 2
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_entries_without_a_name_are_reported_and_passed_through(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function"}, *CATALOG[2:4]]))
    result = run("assemble", "--catalog", str(path), "--json")
    assert result.exit_code == 0
    assert "1 entry without a tool name" in result.stderr
    assert json.loads(result.stdout)["tools"][0] == "?"


def test_tools_group_has_help_and_can_be_disabled(catalog: Path) -> None:
    runner = CliRunner()
    assert "assemble" in run("--help").stdout and "search" in run("--help").stdout
    blocked = runner.invoke(cli, ["--disable", "tool_search", "tools", "search", "x", "--catalog", str(catalog)])
    assert blocked.exit_code != 0
