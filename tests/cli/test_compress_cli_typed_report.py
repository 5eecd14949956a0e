"""``hermes-ctx compress`` decides by the engine's ``CompressionReport``, not by the keys of its
details: an engine that reports through typed fields alone gets its status, error and exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.engine import CompressionReport, ContextEngine
from hermes_core.hookspecs import hookimpl
from hermes_core.host import PluginHost

from compressor_support import work_history


class TypedOnly(ContextEngine):
    """Reports with typed fields and no details at all."""

    name = "typed_only"
    outcome = CompressionReport()

    def compress(self, messages: Any, current_tokens: Any = None, focus_topic: Any = None, force: bool = False) -> Any:
        return messages if self.outcome.aborted else messages[: len(messages) // 2]

    def compression_report(self) -> CompressionReport:
        return self.outcome


class Plugin:
    @hookimpl
    def hermes_context_engines(self) -> dict[str, Any]:
        return {"typed_only": TypedOnly}


@pytest.fixture
def transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    real_create = PluginHost.create.__func__  # type: ignore[attr-defined]

    def create(cls: Any, **kwargs: Any) -> Any:
        kwargs["plugins"] = [*kwargs.get("plugins", ()), (Plugin(), "typed_only_plugin")]
        return real_create(cls, **kwargs)

    monkeypatch.setattr(PluginHost, "create", classmethod(create))
    path = tmp_path / "t.json"
    path.write_text(json.dumps(work_history(10)), encoding="utf-8")
    return path


def run(transcript: Path) -> Any:
    return CliRunner().invoke(cli, ["compress", str(transcript), "--engine", "typed_only", "--json"],
                              catch_exceptions=False)


def test_a_typed_status_is_the_reports(transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TypedOnly, "outcome", CompressionReport(status="compressed"))
    result = run(transcript)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["status"] == "compressed" and report["engine"] == "typed_only"


def test_a_typed_abort_exits_1_with_its_error(transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TypedOnly, "outcome", CompressionReport(status="aborted", aborted=True, error="summariser down"))
    result = run(transcript)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["status"] == "aborted" and report["error"] == "summariser down"
