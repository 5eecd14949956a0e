"""Issue 34, CLI consistency: JSON keys equal table columns for every listing, unknown ids exit 2
in every subcommand that takes one, a binary or non-UTF-8 file is one line naming it, and every
example transcript reads in every command that takes a transcript."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from locations import ROOT

EXAMPLES = sorted((ROOT / "examples" / "transcripts").glob("*.json"))


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    store.put_prompt("s1", "You are a test agent.", model="gpt-5", provider="openai")
    store.archive_put("s1", [
        {"ref": "m1.3", "seq": 1, "role": "tool", "tool": "terminal", "call_id": "c1", "turn": 1,
         "position": 3, "replaced_by": 2, "text": "KeyError: 'region' in deploy.py",
         "extra": {"role": "tool", "tool_call_id": "c1"}},
    ])
    store.archive_flush()
    skill = tmp_path / "skills" / "ops" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship the service.\n---\nSteps.\n")
    (tmp_path / "tools.json").write_text(json.dumps([
        {"type": "function", "source": "mcp-github", "function": {
            "name": "create_issue", "description": "Open a GitHub issue.", "parameters": {"type": "object"}}},
    ]))
    yield tmp_path
    close_connections()


def _columns(stdout: str) -> list[str]:
    header = next(line for line in stdout.splitlines() if line.strip() and not line.startswith("#"))
    return [c.lower() for c in header.split()]


def _rows(data: Any, key: str | None) -> list[dict[str, Any]]:
    return data[key] if key else data


LISTINGS = [
    # (arguments, where the rows are in the JSON)
    (["history", "list"], None),
    (["history", "search", "s1", "KeyError"], "hits"),
    (["sessions", "list"], None),
    (["skills"], None),
    (["tools", "search", "issue", "--catalog", "{home}/tools.json"], "results"),
    (["formats"], None),
    (["cache-report", str(ROOT / "examples" / "transcripts" / "support_chat.json")], "turns"),
]


@pytest.mark.parametrize(("args", "key"), LISTINGS, ids=[" ".join(a[:2]) for a, _ in LISTINGS])
def test_table_columns_are_exactly_the_json_keys(home: Path, args: list[str], key: str | None) -> None:
    args = [a.format(home=home) for a in args]
    table = run("--home", str(home), *args)
    data = run("--home", str(home), *args, "--json")
    assert table.exit_code == 0 and data.exit_code == 0, (table.output, data.output)
    rows = _rows(json.loads(data.stdout), key)
    assert rows, "the fixture gives every listing a row"
    columns = _columns(table.stdout)
    for row in rows:
        assert set(columns) <= set(row), (columns, sorted(row))
    if key is None and args[0] in ("history", "sessions", "formats"):
        assert set(columns) == set(rows[0])  # the whole row is in the table


UNKNOWN = [
    ["history", "search", "nope", "x"],
    ["history", "show", "nope", "m1.1"],
    ["history", "show", "s1", "m99.9"],
    ["history", "prune", "--session", "nope"],
    ["sessions", "show", "nope"],
    ["sessions", "rm", "nope"],
    ["convert", str(ROOT / "examples" / "transcripts" / "support_chat.json"), "--index", "7"],
    ["compress", str(ROOT / "examples" / "transcripts" / "support_chat.json"), "--index", "7"],
    ["cache-report", str(ROOT / "examples" / "transcripts" / "support_chat.json"), "--index", "7"],
    ["cache-report", str(ROOT / "examples" / "transcripts" / "compressed_session.json"), "--index", "7"],
]


@pytest.mark.parametrize("args", UNKNOWN, ids=[" ".join(Path(w).name for w in a) for a in UNKNOWN])
def test_unknown_ids_exit_2_with_one_line(home: Path, args: list[str]) -> None:
    result = run("--home", str(home), *args)
    assert result.exit_code == 2, result.output
    assert any(word in result.stderr for word in ("nope", "m99.9", "index 7"))
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", ["cache-report", "compress", "convert", "eval"])
@pytest.mark.parametrize("content", [bytes(range(256)) * 8, b"\xff\xfe{\x00\"m\x00", b"[\"ok\", \"\xe9t\xe9\"" + b"\x85" * 300])
def test_binary_and_non_utf8_files_are_one_line_naming_the_file(tmp_path: Path, command: str, content: bytes) -> None:
    path = tmp_path / "blob.json"
    path.write_bytes(content)
    result = run(command, str(path))
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and str(path) in errors[0], result.stderr
    assert "codec" not in result.stderr and "formats tried" not in result.stderr


@pytest.mark.parametrize("command", ["cache-report", "compress", "convert", "eval"])
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_reads_in_every_transcript_command(tmp_path: Path, command: str, example: Path) -> None:
    result = run("--home", str(tmp_path), command, str(example))
    assert result.exit_code == 0, result.output[-600:]
    assert result.stdout.strip()


def test_a_request_log_reads_as_its_last_request_and_says_so(tmp_path: Path) -> None:
    log = {"system": "Be terse.", "requests": [
        {"messages": [{"role": "user", "content": "one"}]},
        {"append": [{"role": "assistant", "content": "1"}, {"role": "user", "content": "two"}]},
        {"messages": [{"role": "user", "content": "[summary] one, two"}, {"role": "user", "content": "three"}]},
    ]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    result = run("convert", str(path))
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [m["content"] for m in out] == ["Be terse.", "[summary] one, two", "three"]
    assert "1 request(s) rewrote the history" in result.stderr
