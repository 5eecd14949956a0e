"""``hermes-ctx prompt``: the prompt on stdout, or its breakdown as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_plugins.session_store import DB_NAME, SQLiteSessionStore


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text("timezone: UTC\n")
    return path


def run(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--home", str(home), "prompt", *args], catch_exceptions=False)
    return result


def test_prints_the_prompt(home: Path, tmp_path: Path) -> None:
    result = run(home, "--cwd", str(tmp_path), "--model", "gpt-4o", "--provider", "openai",
                 "--platform", "discord", "--tools", "terminal, memory")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("You are Hermes")
    assert "# Tool-use enforcement" in out and "Discord" in out
    assert "Model: gpt-4o\nProvider: openai\nPlatform: discord" in out


def test_json_shape(home: Path, tmp_path: Path) -> None:
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("A fact.")
    result = run(home, "--cwd", str(tmp_path), "--model", "gemini-2.5-pro", "--tools", "terminal,memory",
                 "--context-length", "200000", "--system-message", "Operator says hi.", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"prompt", "layers", "blocks", "tokens", "warnings", "context_files"} <= set(data)
    assert set(data["layers"]) == {"stable", "context", "volatile"}
    assert data["prompt"] == "\n\n".join(v for v in data["layers"].values() if v)
    assert data["layers"]["context"].startswith("Operator says hi.")
    for block in data["blocks"]:
        assert set(block) == {"name", "layer", "plugin", "chars", "tokens"}
        assert isinstance(block["tokens"], int) and block["tokens"] > 0
    by_name = {b["name"]: b for b in data["blocks"]}
    assert by_name["google_guidance"]["plugin"] == "guidance"
    assert by_name["system_message"] == {"name": "system_message", "layer": "context", "plugin": None,
                                         "chars": len("Operator says hi."), "tokens": by_name["system_message"]["tokens"]}
    assert by_name["memory"]["layer"] == "volatile"
    assert list(by_name)[0] == "identity" and list(by_name)[-1] == "session_line"
    assert data["tokens"]["exact"] > 0 and data["tokens"]["estimated"] == (len(data["prompt"]) + 3) // 4
    assert isinstance(data["warnings"], list) and isinstance(data["context_files"], list)


def test_json_warnings_shape(home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("timezone: Mars/Olympus\n")
    result = run(home, "--cwd", str(tmp_path), "--json")
    data = json.loads(result.stdout)
    zone = [w for w in data["warnings"] if w["kind"] == "timezone_invalid"]
    assert zone and set(zone[0]) == {"kind", "message", "plugin", "path"}
    assert zone[0]["plugin"] == "session_line"


def test_text_mode_warnings_go_to_stderr(home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("timezone: Mars/Olympus\n")
    result = run(home, "--cwd", str(tmp_path))
    assert "Mars/Olympus" not in result.stdout
    assert "warning: unknown time zone 'Mars/Olympus'" in result.stderr


def test_a_failing_plugin_is_reported_not_fatal(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_plugins import platform_hints

    def boom(ctx: Any, key: str) -> Any:
        raise RuntimeError("hint table corrupted")

    monkeypatch.setattr(platform_hints, "default_hint", boom)
    result = run(home, "--cwd", str(tmp_path), "--platform", "cli", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert "platform" not in [b["name"] for b in data["blocks"]]
    failure = next(w for w in data["warnings"] if w["kind"] == "plugin_hook_failed")
    assert failure["plugin"] == "platform_hints" and "hint table corrupted" in failure["message"]


def test_strict_plugins_turns_the_failure_into_exit_2(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_plugins import platform_hints

    monkeypatch.setattr(platform_hints, "default_hint", lambda ctx, key: 1 / 0)
    result = CliRunner().invoke(cli, ["--home", str(home), "--strict-plugins", "prompt", "--cwd", str(tmp_path),
                                      "--platform", "cli"])
    assert result.exit_code == 2
    assert "platform_hints" in result.stderr


def test_never_writes_the_store_but_shows_a_stored_prompt(home: Path, tmp_path: Path) -> None:
    run(home, "--cwd", str(tmp_path))
    assert not (home / DB_NAME).exists()
    SQLiteSessionStore(home / DB_NAME).put_prompt("s-1", "Stored bytes.\nModel: m", model="m", provider="")
    result = run(home, "--session-id", "s-1", "--model", "m", "--json")
    data = json.loads(result.stdout)
    assert data["prompt"] == "Stored bytes.\nModel: m"
    assert data["origin"] == "stored" and data["session_id"] == "s-1"
    stale = run(home, "--session-id", "s-1", "--model", "other", "--json")
    assert json.loads(stale.stdout)["origin"] == "built"
    assert SQLiteSessionStore(home / DB_NAME).get_prompt("s-1") == "Stored bytes.\nModel: m"


def test_bad_config_is_a_one_line_error(home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("memory:\n  memory_char_limit: lots\n")
    result = run(home, "--cwd", str(tmp_path))
    assert result.exit_code == 2
    assert "memory.memory_char_limit" in result.stderr and "Traceback" not in result.stderr
