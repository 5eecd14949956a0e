"""Every command that reads a transcript takes a session folder (OpenHands' ``events/``), as
``convert``/``compress``/``eval`` do; a folder in no known format is one error naming every format
tried, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli

from locations import DATA

SESSION = DATA / "transcripts" / "openhands_session"


def test_cache_report_replays_a_session_folder_request_by_request() -> None:
    result = CliRunner().invoke(cli, ["cache-report", str(SESSION), "--json"])
    assert result.exit_code == 0, result.output
    turns = json.loads(result.stdout)["turns"]
    # one request per user message or tool result of the folder's conversation
    assert len(turns) >= 2
    assert [t["index"] for t in turns] == list(range(len(turns)))


def test_report_takes_a_session_folder() -> None:
    result = CliRunner().invoke(cli, ["report", str(SESSION), "--json", "--context-length", "100000"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"] == str(SESSION)
    assert data["timeline"]["messages"] > 0


@pytest.mark.parametrize("command", ["cache-report", "report"])
def test_a_folder_in_no_known_format_is_one_error_naming_the_formats_tried(command: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [command, str(tmp_path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert f"{tmp_path}: not a transcript in any known format" in result.stderr
    assert "openhands-events" in result.stderr
