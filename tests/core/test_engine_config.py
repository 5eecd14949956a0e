"""Every engine honours ``compression.*``; the host reads a typed CompressionReport from any
engine the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import ContextEngine, PluginHost, Session, hookimpl, load_config
from hermes_core.cli import cli
from hermes_core.compaction_feedback import summarize_manual
from hermes_core.engine import CompressionReport, model_threshold

from fake_dists import make_dist
from hypothesis_budget import examples

LAST_N_ENGINE = """
from hermes_core import ContextEngine, hookimpl

class LastN(ContextEngine):
    name = "lastn"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        keep = self.protect_first_n + self.protect_last_n
        if len(messages) <= keep:
            return messages
        out = messages[: self.protect_first_n] + messages[-self.protect_last_n:]
        self.last_compression_report = {"status": "compressed", "dropped_count": len(messages) - len(out)}
        return out

@hookimpl
def hermes_context_engines():
    return {"lastn": LastN}
"""


class Plain(ContextEngine):
    name = "plain"

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False) -> list[dict[str, Any]]:
        return messages


def test_a_third_party_engine_reads_the_users_compression_settings() -> None:
    config = load_config(data={"compression": {
        "threshold": 0.6, "protect_first_n": 1, "protect_last_n": 4, "target_ratio": 0.3,
        "model_thresholds": {"gpt-4o": 0.4, "gpt-4o-mini": 0.9},
    }}, env={})
    engine = Plain(config=config)
    assert (engine.threshold_percent, engine.protect_first_n, engine.protect_last_n, engine.target_ratio) == (0.6, 1, 4, 0.3)
    engine.update_model("claude-x", 100_000)
    assert engine.threshold_tokens == 60_000
    engine.update_model("gpt-4o-mini-2024", 100_000)  # the longest matching key wins
    assert (engine.threshold_percent, engine.threshold_tokens) == (0.9, 90_000)
    engine.update_model("gpt-4o", 100_000)
    assert engine.threshold_tokens == 40_000
    capped = Plain(config=load_config(data={"compression": {"threshold_tokens": 1_000}}, env={}))
    capped.update_model("m", 100_000)
    assert capped.threshold_tokens == 1_000


@settings(max_examples=examples(100))
@given(st.dictionaries(st.text(max_size=5), st.floats(0.01, 1.0), max_size=5), st.text(max_size=12))
def test_model_threshold_is_the_longest_contained_key(overrides: dict[str, float], model: str) -> None:
    got = model_threshold(model, overrides, 0.5)
    matches = [k for k in overrides if k and k in model]
    if not matches:
        assert got == 0.5
    else:
        longest = max(len(k) for k in matches)
        assert got in {overrides[k] for k in matches if len(k) == longest}


def test_engine_configured_through_compression_keys_in_the_cli(site_dir: Path, tmp_path: Path) -> None:
    make_dist(site_dir, "hermes-engine-lastn", {"lastn_engine": "lastn_engine_mod"},
              {"lastn_engine_mod": LAST_N_ENGINE}, version="0.2.0")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "context:\n  engine: lastn\ncompression:\n  threshold: 0.6\n  protect_last_n: 2\n  protect_first_n: 1\n"
    )
    runner = CliRunner()
    rows = json.loads(runner.invoke(cli, ["--home", str(home), "engines", "--json"]).stdout)
    assert next(r for r in rows if r["name"] == "lastn")["selected"] is True
    shown = runner.invoke(cli, ["--home", str(home), "config", "--json"]).stdout
    assert '"compression.protect_last_n"' in shown or "protect_last_n" in shown
    session = Session.open(home=home, cwd=tmp_path, model="m", context_length=100_000, persist=False)
    assert type(session.engine).__name__ == "LastN"
    assert (session.engine.threshold_tokens, session.engine.protect_last_n) == (60_000, 2)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(9)]
    out = session.host.engine_step("compress", session.engine, messages=messages, current_tokens=None,
                                   focus_topic=None, force=True)
    assert [m["content"] for m in out] == ["m0", "m7", "m8"]
    report = session.engine.compression_report()
    assert isinstance(report, CompressionReport) and report.dropped_count == 6


def test_report_is_typed_and_tolerant() -> None:
    report = CompressionReport.coerce({
        "status": "aborted", "aborted": True, "error": "auth: no key", "error_kind": "auth",
        "dropped_count": True, "before": {"messages": 9}, "after": "garbage",
    })
    assert (report.status, report.aborted, report.error, report.error_kind) == ("aborted", True, "auth: no key", "auth")
    assert report.dropped_count is None and report.before_messages == 9 and report.after_messages is None
    assert CompressionReport.coerce(None) == CompressionReport()
    assert Plain().compression_report() is None


@pytest.mark.parametrize("as_record", [True, False])
def test_manual_feedback_reads_a_record_or_a_mapping(as_record: bool) -> None:
    raw = {"aborted": True, "error": "timeout"}
    report: Any = CompressionReport.coerce(raw) if as_record else raw
    feedback = summarize_manual(list(range(5)), list(range(5)), 100, 100, report)
    assert feedback.aborted and feedback.failure_reason == "timeout"


def test_an_aborting_third_party_engine_is_reported_through_the_record(tmp_path: Path) -> None:
    class Aborter(Plain):
        name = "aborter"

        def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                     focus_topic: str | None = None, force: bool = False) -> list[dict[str, Any]]:
            self.last_compression_report = {"status": "aborted", "aborted": True, "error": "no key"}
            return messages

    class P:
        @hookimpl
        def hermes_context_engines(self) -> Any:
            return {"aborter": Aborter}

    host = PluginHost.create(only=(), plugins=[(P(), "aborter_plugin")])
    config = load_config(data={"context": {"engine": "aborter"}}, env={})
    session = Session.open(cwd=tmp_path, home=tmp_path, host=host, config=config, model="m",
                           context_length=100_000, persist=False)
    messages = [{"role": "user", "content": "x" * 400}, {"role": "assistant", "content": "y"}] * 4
    feedback = session.compress(messages, force=True).feedback
    assert feedback.aborted and feedback.failure_reason == "no key"
