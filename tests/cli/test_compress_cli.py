"""``hermes-ctx compress``: input formats, outputs, the report, errors, progress."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli, compress_cmd
from hermes_core.hookspecs import hookimpl
from hermes_core.summarizer import SummarizerAuthError

from compressor_support import assistant, call, tool, user, work_history


def run(*args: str, **kwargs: Any) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, **kwargs)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(work_history(40)), encoding="utf-8")
    return path


def test_json_report_and_output_file(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = run("compress", str(transcript), "-o", str(out), "--context-length", "64000", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "compressed"
    assert report["before"]["messages"] == 162 and report["after"]["messages"] < 162
    assert report["after"]["tokens"] < report["before"]["tokens"]
    assert set(report["phases"]) == {"deduplicated", "demoted", "arguments_shortened", "media_stripped", "summarized_messages",
                                     "demoted_in_summary"}
    assert report["summary"]["provider"] == "extractive" and report["summary"]["fallback"] is False
    assert isinstance(report["warnings"], list)
    written = json.loads(out.read_text(encoding="utf-8"))
    assert len(written) == report["after"]["messages"]
    assert written[report["summary"]["index"]]["_compressed_summary"] is True


def test_jsonl_input_and_readable_summary(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in work_history(40)) + "\n", encoding="utf-8")
    result = run("compress", str(path), "--context-length", "64000", "--focus", "mod_7")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Compressed (engine compressor)")
    assert "messages  162 ->" in result.stdout and "summary" in result.stdout


def test_nothing_to_compress_writes_the_input_unchanged(tmp_path: Path) -> None:
    messages = [user("hi"), assistant("hello")]
    path = tmp_path / "small.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    out = tmp_path / "o.json"
    result = run("compress", str(path), "-o", str(out), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["status"] == "nothing_to_compress"
    assert json.loads(out.read_text()) == messages


@pytest.mark.parametrize(
    "content, needle",
    [
        ("{not json", "not JSON"),
        (json.dumps([user("ok"), {"content": "no role"}]), "message 1: has no role"),
        (json.dumps([user("ok"), user("x"), {"role": "assistant", "tool_calls": {"id": "x"}}]),
         "message 2: tool_calls must be a list"),
        ('{"role": "user", "content": "a"}\n{"role": "user", "content": ', "line 2 is not JSON"),
    ],
)
def test_invalid_input_is_a_clear_error_with_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "o.json"
    result = run("compress", str(path), "-o", str(out))
    assert result.exit_code == 2
    assert needle in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()


def test_missing_file_and_unknown_engine_exit_2(transcript: Path, tmp_path: Path) -> None:
    assert run("compress", str(tmp_path / "nope.json")).exit_code == 2
    result = run("compress", str(transcript), "--engine", "nonexistent")
    assert result.exit_code == 2 and "unknown engine 'nonexistent'" in result.stderr


def test_aborted_compression_keeps_the_input_and_exits_1(transcript: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing:
        name = "failing"

        def __init__(self, config: Any, *, model: Any = None) -> None:
            pass

        def summarize(self, request: Any) -> str:
            raise SummarizerAuthError("401: no API key was found")

    class Plugin:
        @hookimpl
        def hermes_summarizers(self) -> dict[str, Any]:
            return {"failing": Failing}

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("compression:\n  summary:\n    provider: failing\n", encoding="utf-8")
    from hermes_core.host import PluginHost

    real_create = PluginHost.create.__func__  # type: ignore[attr-defined]

    def create(cls: Any, **kwargs: Any) -> Any:
        kwargs["plugins"] = [*kwargs.get("plugins", ()), (Plugin(), "failing_summarizer")]
        return real_create(cls, **kwargs)

    monkeypatch.setattr(PluginHost, "create", classmethod(create))
    out = tmp_path / "o.json"
    result = run("--home", str(home), "compress", str(transcript), "-o", str(out), "--context-length", "64000", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["status"] == "aborted" and report["error_kind"] == "auth"
    assert report["after"] == report["before"]
    assert json.loads(out.read_text()) == json.loads(transcript.read_text())
    assert any("no messages were removed" in w for w in report["warnings"])


def test_progress_bar_on_stderr_for_slow_compressions(transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_plugins.compressor.engine import CompressorEngine

    original = CompressorEngine.compress

    def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
        for phase in range(4):
            if self.progress:
                self.progress("phase", phase, 4)
            time.sleep(0.06)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CompressorEngine, "compress", slow)
    monkeypatch.setattr(compress_cmd, "PROGRESS_AFTER_SECONDS", 0.05)
    result = run("compress", str(transcript), "--context-length", "64000", "--json")
    assert result.exit_code == 0
    assert "Compressing" in result.stderr
    assert json.loads(result.stdout)["status"] == "compressed"


def test_fast_compressions_draw_no_progress_bar(transcript: Path) -> None:
    result = run("compress", str(transcript), "--context-length", "64000", "--json")
    assert "Compressing" not in result.stderr


def test_other_engines_get_a_derived_report(transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.engine import ContextEngine

    class Halver(ContextEngine):
        name = "halver"

        def compress(self, messages: Any, current_tokens: Any = None, focus_topic: Any = None, force: bool = False) -> Any:
            return messages[: len(messages) // 2]

    class Plugin:
        @hookimpl
        def hermes_context_engines(self) -> dict[str, Any]:
            return {"halver": Halver}

    from hermes_core.host import PluginHost

    real_create = PluginHost.create.__func__  # type: ignore[attr-defined]

    def create(cls: Any, **kwargs: Any) -> Any:
        kwargs["plugins"] = [*kwargs.get("plugins", ()), (Plugin(), "halver_plugin")]
        return real_create(cls, **kwargs)

    monkeypatch.setattr(PluginHost, "create", classmethod(create))
    result = run("compress", str(transcript), "--engine", "halver", "--json")
    report = json.loads(result.stdout)
    assert report["status"] == "compressed" and report["after"]["messages"] == 81
    assert report["engine"] == "halver"


def test_tool_pairs_in_the_output_are_intact(transcript: Path, tmp_path: Path) -> None:
    data = work_history(40)
    data.insert(5, tool("orphan", "no call for me"))
    data.insert(9, assistant("", call("lost", "terminal", command="ls")))
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "o.json"
    assert run("compress", str(path), "-o", str(out), "--context-length", "64000").exit_code == 0
    result = json.loads(out.read_text())
    calls = {c["id"] for m in result for c in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in result if m["role"] == "tool"}
    assert calls == results
