"""The HTML report's data and page (issue 35), without a browser: aggregation keeps every token,
the page is self-contained and shows the figures of the same run's --json, the commands' --html
options and ``hermes-ctx report`` write it, bad input exits 2 with one line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_core.tokens import estimate_message_tokens
from hermes_plugins.report.data import (
    DETAIL_EACH_END,
    MAX_POINTS,
    ROW_REFS,
    SPAN_ROWS,
    buckets,
    clip,
    compaction_detail,
    limit_detail,
    message_kinds,
    timeline,
)
from hermes_plugins.report.html import render_html
from hermes_plugins.report.replay import replay_session

from compressor_support import assistant, tool, user, work_history
from hypothesis_budget import examples
from report_pages import assert_figures_match, page_data, session


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --- data -----------------------------------------------------------------------------------


def test_kinds_name_the_tool_each_result_answers() -> None:
    messages = session(2) + [tool("nobody", "orphan output")]
    kinds = message_kinds(messages)
    assert kinds[:7] == ["system", "user", "assistant", "tool:read_file", "assistant", "tool:bash", "assistant"]
    assert kinds[-1] == "tool:?"


@settings(max_examples=examples(60), deadline=None)
@given(count=st.integers(min_value=0, max_value=5_000), limit=st.integers(min_value=1, max_value=700))
def test_buckets_cover_every_message_once(count: int, limit: int) -> None:
    ranges = buckets(count, limit)
    assert len(ranges) <= max(limit, 0) or count == 0
    assert [i for start, end in ranges for i in range(start, end)] == list(range(count))


@settings(max_examples=examples(25), deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=4_000), min_size=1, max_size=1_500))
def test_timeline_aggregation_keeps_every_token(sizes: list[int]) -> None:
    messages = [user("u" * n) if i % 2 else assistant("a" * n) for i, n in enumerate(sizes)]
    tl = timeline(messages)
    assert len(tl["buckets"]) <= MAX_POINTS
    assert sum(sum(v) for v in tl["series"].values()) == tl["tokens"] == sum(estimate_message_tokens(m) for m in messages)
    assert sum(tl["kind_counts"].values()) == len(messages)


def test_ten_thousand_messages_stay_a_few_hundred_points() -> None:
    messages = work_history(2_500, result_chars=200)
    tl = timeline(messages)
    assert tl["messages"] == len(messages) > 10_000
    assert len(tl["buckets"]) <= MAX_POINTS and tl["bucket_size"] > 1
    page = render_html({"command": "report", "source": "x", "timeline": tl})
    assert len(page.encode()) < 5_000_000


def test_clip_says_how_much_it_cut() -> None:
    assert clip("abc", 5) == "abc"
    assert clip("a" * 300, 240).endswith("[60 more characters not shown]")


def test_compaction_detail_shows_the_span_and_the_summary() -> None:
    before = session(4)
    after = [before[0], {"role": "user", "content": "SUMMARY of steps 0-2", "_summary": "test", "_ref": "m1.1"},
             *before[-7:]]
    detail = compaction_detail(before, after, {"status": "compressed", "summary": {"index": 1}}, message=24)
    assert detail["summary_text"] == "SUMMARY of steps 0-2"
    assert detail["condensed"] == len(before) - 8 and detail["kept_unchanged"] == 8
    assert [r["index"] for r in detail["span_before"]["rows"]] == list(range(1, len(before) - 7))
    assert detail["span_after"]["rows"][0]["archive_refs"] == ["m1.1"]
    assert detail["archive_refs"] == ["m1.1"]


def test_a_long_span_counts_the_rows_not_shown() -> None:
    before = work_history(100, result_chars=100)
    after = [before[0], before[-1]]
    detail = compaction_detail(before, after, {}, message=len(before) - 1)
    span = detail["span_before"]
    assert len(span["rows"]) == SPAN_ROWS and span["not_shown"] == len(before) - 2 - SPAN_ROWS


def test_a_summary_row_names_a_few_references_and_counts_the_rest() -> None:
    before = session(2)
    refs = tuple(f"m1.{i}" for i in range(1, 30))
    after = [before[0], {"role": "user", "content": "SUMMARY", "_summary": "x", "_ref": refs[0], "_refs": refs},
             before[-1]]
    row = compaction_detail(before, after, {"summary": {"index": 1}}, message=12)["span_after"]["rows"][0]
    assert row["archive_refs"] == list(refs[:ROW_REFS]) and row["archive_refs_not_shown"] == len(refs) - ROW_REFS


def test_many_compactions_keep_the_detail_of_the_first_and_last_only() -> None:
    before = session(3)
    after = [before[0], before[-1]]
    compactions = [compaction_detail(before, after, {}, message=i) for i in range(2 * DETAIL_EACH_END + 5)]
    assert limit_detail(compactions) == 5
    shown = [i for i, c in enumerate(compactions) if "span_before" in c]
    assert shown == [*range(DETAIL_EACH_END), *range(DETAIL_EACH_END + 5, 2 * DETAIL_EACH_END + 5)]
    assert all(c["detail_not_shown"] and c["before"]["tokens"] for c in compactions if "span_before" not in c)
    page = render_html({"command": "report", "source": "x", "compactions": compactions})
    assert page.count("<h3>Compaction ") == 2 * DETAIL_EACH_END


def test_replay_compacts_where_the_threshold_is_crossed(tmp_path: Path) -> None:
    host = PluginHost.create()
    config = load_config()
    messages = session(40)
    lived = replay_session(messages, engine="compressor", context_length=16_000, config=config, host=host,
                           home=tmp_path)
    assert lived["compactions"], "a 40-turn session in a 16k window compacts"
    for compaction in lived["compactions"]:
        assert compaction["before"]["tokens"] >= lived["threshold"]
        assert compaction["after"]["tokens"] < compaction["before"]["tokens"]
        assert compaction["span_before"]["rows"]
    # The condensed originals name the reference they are archived under (context_expand).
    first = lived["compactions"][0]["span_before"]["rows"]
    assert any(re.fullmatch(r"m\d+\.\d+", ref) for row in first for ref in row.get("archive_refs", ()))
    points = lived["context"]
    assert [p["message"] for p in points] == sorted(p["message"] for p in points)
    assert points[-1]["message"] == len(messages) - 1


def test_replay_backs_off_after_a_compaction_that_frees_nothing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.compaction_feedback import ManualCompression
    from hermes_core.session import Session

    calls: list[int] = []

    def nothing(self: Any, messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(messages))
        return ManualCompression(messages=list(messages), feedback=None)

    monkeypatch.setattr(Session, "compress", nothing)
    messages = session(40)
    lived = replay_session(messages, engine="compressor", context_length=16_000, config=load_config(),
                           host=PluginHost.create(), home=tmp_path)
    assert lived["compactions"] == []
    requests_over = sum(1 for p in lived["context"] if p["tokens"] >= lived["threshold"])
    assert 0 < len(calls) < requests_over
    assert lived["context"][-1]["tokens"] == sum(estimate_message_tokens(m) for m in messages)


# --- the page -------------------------------------------------------------------------------


def test_page_is_self_contained_and_escapes_the_transcript() -> None:
    hostile = [user("</script><script>alert(1)</script> <b>bold</b>"), assistant("ok")]
    page = render_html({"command": "report", "source": "<x>", "timeline": timeline(hostile)})
    assert "<script>alert(1)" not in page and "<b>bold</b>" not in page
    assert page_data(page)["timeline"]["messages"] == 2
    # Nothing to fetch in the markup (the browser test routes every request of the scripts).
    markup = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert not re.search(r'\ssrc=|<link|@import|href="(?!#)', markup)
    assert "echarts" in page and len(re.findall(r"<script", page)) == 4


# --- the commands ---------------------------------------------------------------------------


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session(30)), encoding="utf-8")
    return path


def test_compress_html_shows_the_figures_of_its_json(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.html"
    result = run("compress", str(transcript), "--context-length", "16000", "--json", "--html", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    page = out.read_text(encoding="utf-8")
    assert page_data(page)["compress"] == report
    assert assert_figures_match(page, report, "compress") >= 8
    data = page_data(page)
    assert data["compactions"][0]["before"]["tokens"] == report["before"]["tokens"]
    assert data["compactions"][0]["summary_text"]


def test_eval_html_shows_the_figures_of_its_json(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.html"
    result = run("eval", str(transcript), "--engine", "compressor,window", "--context-length", "16000", "--json",
                 "--html", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    page = out.read_text(encoding="utf-8")
    assert page_data(page)["eval"] == report
    assert len(report["files"][0]["runs"]) == 2
    assert assert_figures_match(page, report, "eval") >= 2 * 30


def test_cache_report_html_shows_the_figures_of_its_json(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "cr.html"
    result = run("cache-report", str(transcript), "--json", "--html", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    page = out.read_text(encoding="utf-8")
    assert page_data(page)["cache"] == report
    assert assert_figures_match(page, report, "cache") >= 5 * len(report["turns"])


def test_report_command_json_is_the_page_data(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = run("report", str(transcript), "--context-length", "16000", "--engine", "compressor,window",
                 "--json", "--html", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    page = out.read_text(encoding="utf-8")
    assert page_data(page) == data
    assert data["compactions"] and data["eval"]["files"][0]["runs"] and data["cache"]["turns"]
    # The cache is priced on the replayed requests: each compaction rewrites the history once.
    breaks = [t for t in data["cache"]["turns"] if t["break"]]
    assert len(breaks) == len(data["compactions"])
    assert {b["break"]["cause"] for b in breaks} <= {"history_rewritten", "system_prompt_changed"}
    for key in ("timeline", "compactions", "eval", "probes", "cache"):
        assert assert_figures_match(page, data[key], key) > 0
    # Every probe listed with its verdict: the same counts as eval's run of the same engine.
    for evaluated, detail in zip(data["eval"]["files"][0]["runs"], data["probes"]):
        assert detail["engine"] == evaluated["engine"]
        for kind, counts in evaluated["probes"].items():
            assert detail["counts"][kind] == {v: counts[v] for v in ("kept", "recoverable", "lost")}
        listed = [r for r in detail["rows"] if r["verdict"] != "kept"]
        assert len(listed) == sum(c["recoverable"] + c["lost"] for c in evaluated["probes"].values())
    window = data["probes"][1]
    assert any(r["verdict"] == "recoverable" and r["archive_ref"] for r in window["rows"])


def test_report_prices_under_the_provider_and_ttl_asked(transcript: Path) -> None:
    data = json.loads(run("report", str(transcript), "--context-length", "16000", "--provider", "openai",
                          "--json").stdout)
    assert data["cache"]["provider"] == "openai" and data["cache"]["total"]["cache_write_tokens"] == 0
    data = json.loads(run("report", str(transcript), "--context-length", "16000", "--ttl", "1h", "--json").stdout)
    assert data["cache"]["provider"] == "anthropic" and data["cache"]["ttl"] == "1h"


def test_report_without_outputs_prints_one_line(transcript: Path) -> None:
    result = run("report", str(transcript), "--context-length", "16000")
    assert result.exit_code == 0, result.output
    assert "compaction(s)" in result.stdout and len(result.stdout.splitlines()) == 1


def test_bad_input_exits_2_with_one_line(tmp_path: Path, transcript: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    for args in (("report", str(broken)), ("report", str(empty)), ("report", str(transcript), "--engine", "nope"),
                 ("compress", str(transcript), "--html", str(tmp_path / "missing" / "x.html")),
                 ("cache-report", str(transcript), "--html", str(tmp_path))):
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, result.stderr


def test_blocked_report_plugin_is_one_line(transcript: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--disable", "report", "compress", str(transcript), "--html",
                                      str(tmp_path / "x.html")])
    assert result.exit_code == 2
    assert "no plugin renders an HTML report of compress" in result.stderr


def test_pages_hold_no_secret_of_the_transcript(tmp_path: Path) -> None:
    secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    messages = session(30)
    # A tool output the compaction condenses: its row in the span quotes it.
    messages[3] = tool("r0", f"OPENAI_API_KEY={secret}\n" + "def f():\n    return 0\n" * 100)
    path = tmp_path / "secret.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    for command in (("compress", str(path), "--context-length", "16000"),
                    ("report", str(path), "--context-length", "16000")):
        out = tmp_path / f"{command[0]}.html"
        result = run(*command, "--html", str(out))
        assert result.exit_code == 0, result.output
        page = out.read_text(encoding="utf-8")
        assert "OPENAI_API_KEY=[REDACTED]" in page and secret not in page


def test_eval_page_shows_the_judge_scores() -> None:
    run_ = {"engine": "compressor", "context_length": 32_000, "tokens_before": 10, "tokens_after": 5, "savings": 0.5,
            "elapsed_ms": 1.0, "valid": True, "last_request_verbatim": True, "probes": {}, "losses": [],
            "judge": {"provider": "fake", "scores": {"errors": 0.5, "files": 1.0}}}
    page = render_html({"command": "eval", "source": "x", "eval": {"files": [
        {"file": "x", "messages": 3, "tokens": 10, "runs": [run_]}]}})
    assert "errors 50.0%, files 100.0%" in page
