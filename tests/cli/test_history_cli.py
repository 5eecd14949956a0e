"""``hermes-ctx history list|search|show|prune`` over the store under --home."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    old = time.time() - 200 * 86_400
    store.archive_put("s1", [
        {"ref": "m1.3", "seq": 1, "role": "tool", "tool": "terminal", "call_id": "c1", "turn": 1,
         "position": 3, "replaced_by": 2, "text": f"KeyError: 'region'\ntoken={SECRET}\n",
         "extra": {"role": "tool", "tool_call_id": "c1"}, "created_at": old},
        {"ref": "m2.1", "seq": 2, "role": "user", "tool": "", "call_id": "", "turn": 2, "position": 5,
         "replaced_by": 4, "text": "let's use PostgreSQL", "extra": {"role": "user"}, "turn_start": True},
    ])
    store.archive_put("s2", [{"ref": "m1.1", "seq": 1, "role": "user", "text": "other session", "turn": 1}])
    store.archive_flush()
    yield tmp_path
    close_connections()


def run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), "history", *args], catch_exceptions=False)


def test_list_json(home: Path) -> None:
    result = run(home, "list", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["session_id"]: r for r in json.loads(result.stdout)}
    assert rows["s1"]["count"] == 2 and rows["s2"]["count"] == 1
    assert rows["s1"]["bytes"] == len(f"KeyError: 'region'\ntoken={SECRET}\n") + len("let's use PostgreSQL")
    table = run(home, "list").stdout
    assert table.splitlines()[0].split()[:3] == ["SESSION_ID", "COUNT", "BYTES"] and "s1" in table


def test_search_and_show_mask_a_secret_stored_verbatim(home: Path) -> None:
    # The entry was stored verbatim (archive.keep_secrets, or an older version): the
    # operator's view still shows no secret - everything else of the text as it was.
    result = run(home, "search", "s1", "KeyError", "--json")
    data = json.loads(result.stdout)
    assert data["hits"][0]["ref"] == "m1.3" and data["hits"][0]["tool"] == "terminal"
    assert SECRET not in result.stdout and SECRET not in run(home, "search", "s1", "token").stdout
    shown = run(home, "show", "s1", "m1.3")
    assert shown.exit_code == 0 and SECRET not in shown.stdout
    assert shown.stdout.startswith("KeyError: 'region'\ntoken=[REDACTED:github#")
    whole = json.loads(run(home, "show", "s1", "m1.3", "--json").stdout)
    assert whole["message"]["role"] == "tool" and whole["message"]["tool_call_id"] == "c1"
    assert whole["message"]["content"].startswith("KeyError: 'region'\ntoken=[REDACTED:github#")
    assert SECRET not in json.dumps(whole)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "s1", "m9.9"), "no archived message m9.9 in session s1"),
        (("show", "s2", "m1.3"), "no archived message m1.3 in session s2"),
        (("show", "s1", "nope"), "not an archive reference"),
        (("search", "s1", "*"), "empty"),
    ],
)
def test_bad_input_exits_2_with_one_line(home: Path, args: tuple[str, ...], message: str) -> None:
    result = run(home, *args)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_prune_uses_the_configured_age(home: Path) -> None:
    (home / "config.yaml").write_text("archive:\n  max_age_days: 30\n")
    result = run(home, "prune", "--json")
    assert json.loads(result.stdout)["removed"] == 1
    rows = {r["session_id"]: r["count"] for r in json.loads(run(home, "list", "--json").stdout)}
    assert rows == {"s1": 1, "s2": 1}
    assert json.loads(run(home, "prune", "--max-bytes", "5", "--session", "s2", "--json").stdout)["removed"] == 1
