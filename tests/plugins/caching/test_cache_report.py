"""The cache economy report: turns, cache rules, prefix breaks, input formats and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import InvalidMessagesError, PayloadContext
from hermes_core.cli import cli
from hermes_core.payload import assemble_payload
from hermes_core.tokens import estimate_tokens
from hermes_plugins.cache_report import CacheSimulator, cache_report
from hermes_plugins.caching import anthropic_layout, apply_cache_marker, cache_marker
from hermes_plugins.replay_requests import parse_report_input, replay, request_ends

from locations import ROOT

EXAMPLES = ROOT / "examples" / "transcripts"


def chars(text: str) -> int:
    """One token per character: makes the arithmetic of the tests readable."""
    return len(text)


def laid_out(system: str, messages: list[dict[str, Any]], tools: list[Any] | None = None,
             ttl: str = "5m") -> dict[str, Any]:
    return anthropic_layout(assemble_payload(system, messages, tools), ttl=ttl)


SYSTEM = "s" * 2000
U1 = {"role": "user", "content": "u" * 100}
A1 = {"role": "assistant", "content": "a" * 50}
U2 = {"role": "user", "content": "v" * 100}


# --- turns ----------------------------------------------------------------------------------


def test_a_request_follows_every_user_message_and_every_tool_batch() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1"}, {"id": "2"}]},
        {"role": "tool", "tool_call_id": "1", "content": "a"},
        {"role": "tool", "tool_call_id": "2", "content": "b"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "3"}]},
        {"role": "tool", "tool_call_id": "3", "content": "c"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "bye"},
    ]
    assert request_ends(messages) == [1, 4, 6, 8]


# --- Anthropic rules ------------------------------------------------------------------------


def test_first_request_writes_everything_up_to_the_last_breakpoint() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    turn = sim.add(laid_out(SYSTEM, [U1]))
    assert (turn.cache_write_tokens, turn.cache_read_tokens, turn.uncached_tokens) == (2100, 0, 0)
    assert turn.cost == pytest.approx(2100 * 1.25)
    assert turn.break_ is None and turn.prefix_tokens == 0


def test_next_request_reads_the_previous_prefix_and_writes_the_new_tail() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out(SYSTEM, [U1]))
    turn = sim.add(laid_out(SYSTEM, [U1, A1, U2]))
    assert turn.cache_read_tokens == 2100
    assert turn.cache_write_tokens == 150
    assert turn.prefix_tokens == 2100 and turn.break_ is None
    assert turn.cost == pytest.approx(2100 * 0.1 + 150 * 1.25)


def test_one_hour_writes_cost_twice_the_base_price() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    turn = sim.add(laid_out(SYSTEM, [U1], ttl="1h"))
    assert turn.cost == pytest.approx(2100 * 2.0)


def test_prefixes_under_the_minimum_are_not_cached() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out("s" * 500, [U1]))
    turn = sim.add(laid_out("s" * 500, [U1, A1, U2]))
    assert (turn.cache_read_tokens, turn.cache_write_tokens) == (0, 0)
    assert turn.uncached_tokens == turn.input_tokens and turn.cost == turn.input_tokens


def test_without_breakpoints_nothing_is_cached() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(assemble_payload(SYSTEM, [U1]))
    turn = sim.add(assemble_payload(SYSTEM, [U1, A1, U2]))
    assert turn.cache_read_tokens == 0 and turn.cost == turn.input_tokens
    assert turn.prefix_tokens == 2100  # the bytes were shared all the same


def big_batch(calls: int) -> list[dict[str, Any]]:
    history = [U1, A1, U2, {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in range(calls)
    ]}]
    return history + [{"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}" * 10} for i in range(calls)]


def last_three(system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The classic layout with no lookback guard, for comparison."""
    payload = assemble_payload(system, messages)
    out = anthropic_layout({**payload, "messages": []})  # marks the system prompt only
    body = list(payload["messages"])
    for index in range(len(body) - 3, len(body)):
        body[index] = apply_cache_marker(body[index], cache_marker(), True)
    out["messages"] = body
    return out


def test_a_batch_beyond_the_lookback_misses_without_the_guard_and_hits_with_it() -> None:
    history = big_batch(12)
    classic = CacheSimulator("anthropic", count=chars)
    classic.add(laid_out(SYSTEM, history[:3]))
    missed = classic.add(last_three(SYSTEM, history))
    assert missed.cache_read_tokens == 2000  # only the system prompt's entry is in reach
    guarded = CacheSimulator("anthropic", count=chars)
    guarded.add(laid_out(SYSTEM, history[:3]))
    hit = guarded.add(laid_out(SYSTEM, history))
    assert hit.cache_read_tokens == 2250  # the previous request's whole prefix
    assert hit.cost < missed.cost


# --- breaks ---------------------------------------------------------------------------------


def test_a_changed_system_prompt_is_a_break_at_its_first_differing_byte() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out("abcdef" * 300, [U1]))
    turn = sim.add(laid_out("abcXef" + "abcdef" * 299, [U1, A1, U2]))
    # The unit is {"text":"abc...","type":"text"}: the 'X' is byte 12 of the stream.
    assert turn.break_ == {"byte": 12, "cause": "system_prompt_changed"}
    assert turn.prefix_bytes == 12 and turn.prefix_tokens == 0


def test_a_changed_tool_list_is_a_break_but_a_reordered_one_is_not() -> None:
    tools = [{"name": n, "input_schema": {}} for n in ("b", "a", "c")]
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out(SYSTEM, [U1], tools))
    same = sim.add(laid_out(SYSTEM, [U1, A1, U2], list(reversed(tools))))
    assert same.break_ is None
    changed = sim.add(laid_out(SYSTEM, [U1, A1, U2, A1, U1], [*tools, {"name": "aa", "input_schema": {}}]))
    assert changed.break_ is not None and changed.break_["cause"] == "tool_list_changed"


def test_a_rewritten_history_names_the_first_changed_message() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out(SYSTEM, [U1, A1, U2]))
    summary = {"role": "user", "content": "summary of earlier work", "_compressed_summary": True}
    turn = sim.add(laid_out(SYSTEM, [U1, summary, U2]))
    assert turn.break_ is not None
    assert turn.break_["cause"] == "history_rewritten" and turn.break_["message"] == 1
    assert turn.prefix_tokens == 2100
    assert turn.cache_read_tokens == 2100  # the entry at U1 is still valid


def test_a_shorter_request_that_drops_the_tail_is_a_rewrite() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    sim.add(laid_out(SYSTEM, [U1, A1, U2]))
    turn = sim.add(laid_out(SYSTEM, [U1]))
    assert turn.break_ is not None and turn.break_["cause"] == "history_rewritten"


# --- OpenAI rules ---------------------------------------------------------------------------


def test_openai_reads_shared_prefixes_in_128_token_steps() -> None:
    sim = CacheSimulator("openai", count=chars)
    first = sim.add(assemble_payload("s" * 1500, [U1]))
    assert first.cache_read_tokens == 0 and first.cost == first.input_tokens
    second = sim.add(assemble_payload("s" * 1500, [U1, A1, U2]))
    assert second.cache_read_tokens == 1024 + (1600 - 1024) // 128 * 128
    assert second.cache_write_tokens == 0
    assert second.cost == pytest.approx(second.uncached_tokens + second.cache_read_tokens * 0.5)


def test_unknown_provider_rules_are_refused() -> None:
    with pytest.raises(ValueError, match="no cache rules"):
        CacheSimulator("gemini")


# --- report shape ---------------------------------------------------------------------------


def test_report_json_shape_and_cost_ratio() -> None:
    report = cache_report([laid_out(SYSTEM, [U1]), laid_out(SYSTEM, [U1, A1, U2])], count=chars)
    for turn in report["turns"]:
        assert {"index", "prefix_tokens", "cache_write_tokens", "cache_read_tokens", "uncached_tokens",
                "break"} <= set(turn)
    total = report["total"]
    assert total["input_tokens"] == 2100 + 2250
    expected = (2100 * 1.25 + 2100 * 0.1 + 150 * 1.25) / (2100 + 2250)
    assert total["cost_ratio"] == pytest.approx(expected, abs=1e-4)


# --- input formats --------------------------------------------------------------------------


def test_a_message_array_with_a_leading_system_message() -> None:
    specs = parse_report_input(json.dumps([{"role": "system", "content": "S"}, U1, A1, U2]))
    assert [len(s.messages) for s in specs] == [1, 3]
    assert all(s.system == "S" and s.tools == () for s in specs)


def test_jsonl_and_an_object_with_system_and_tools() -> None:
    jsonl = "\n".join(json.dumps(m) for m in [U1, A1, U2])
    assert len(parse_report_input(jsonl)) == 2
    tools = [{"name": "t", "input_schema": {}}]
    specs = parse_report_input(json.dumps({"system": "S", "tools": tools, "messages": [U1, A1, U2]}))
    assert specs[-1].system == "S" and specs[-1].tools == tuple(tools)


def test_a_request_log_appends_rewrites_and_carries_system_and_tools() -> None:
    log = {
        "system": "S1",
        "tools": [{"name": "t", "input_schema": {}}],
        "requests": [
            {"messages": [U1]},
            {"append": [A1, U2]},
            {"system": "S2", "tools": [], "messages": [U2]},
            {"append": [A1, U1]},
            {"messages": [{"role": "system", "content": "S3"}, U1]},
        ],
    }
    specs = parse_report_input(json.dumps(log))
    assert [len(s.messages) for s in specs] == [1, 3, 1, 3, 1]
    assert [s.system for s in specs] == ["S1", "S1", "S2", "S2", "S3"]
    assert [len(s.tools) for s in specs] == [1, 1, 0, 0, 0]


@pytest.mark.parametrize(
    "text,match",
    [
        ('{"requests": {}}', "'requests' must be a list"),
        ('{"requests": [{"messages": [], "append": []}]}', "not both"),
        ('{"messages": [], "tools": {}}', "'tools' must be a list"),
        ('{"messages": [{"content": "no role"}]}', "has no role"),
        ("[1, 2]", "expected an object"),
    ],
)
def test_bad_input_is_a_clear_error(text: str, match: str) -> None:
    with pytest.raises(InvalidMessagesError, match=match):
        parse_report_input(text)


# --- CLI ------------------------------------------------------------------------------------


def write(tmp_path: Path, value: Any) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(value))
    return str(path)


def transcript() -> dict[str, Any]:
    return {"system": "You are terse. " * 400, "messages": [U1, A1, U2, A1, U1]}


def test_cli_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["cache-report", write(tmp_path, transcript()), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert len(report["turns"]) == 3
    assert set(report["total"]) >= {"input_tokens", "cost_ratio"}
    assert report["turns"][0]["break"] is None
    assert report["total"]["cost_ratio"] < 1
    assert report["counter"] == "cl100k_base" and report["ttl"] == "5m"


def test_cli_table_and_options(tmp_path: Path) -> None:
    path = write(tmp_path, transcript())
    table = CliRunner().invoke(cli, ["cache-report", path])
    assert table.exit_code == 0 and "PREFIX_TOKENS" in table.stdout and "saving" in table.stdout
    five = json.loads(CliRunner().invoke(cli, ["cache-report", path, "--json"]).stdout)
    hour = json.loads(CliRunner().invoke(cli, ["cache-report", path, "--json", "--ttl", "1h"]).stdout)
    assert hour["total"]["cost_ratio"] > five["total"]["cost_ratio"]
    openai = json.loads(CliRunner().invoke(cli, ["cache-report", path, "--json", "--provider", "openai"]).stdout)
    assert openai["provider"] == "openai" and openai["total"]["cache_write_tokens"] == 0


def test_the_command_belongs_to_the_caching_plugin(tmp_path: Path) -> None:
    path = write(tmp_path, transcript())
    result = CliRunner().invoke(cli, ["--disable", "caching", "cache-report", path, "--json"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_cli_bad_file_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [{"content": "no role"}]}')
    result = CliRunner().invoke(cli, ["cache-report", str(bad)])
    assert result.exit_code == 2 and "has no role" in result.output
    missing = CliRunner().invoke(cli, ["cache-report", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
    empty = CliRunner().invoke(cli, ["cache-report", write(tmp_path, [A1])])
    assert empty.exit_code == 2 and "no request" in empty.output


# --- the example transcripts ----------------------------------------------------------------


def test_example_transcripts_are_up_to_date() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "make_transcripts.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def example_report(name: str, plugin_host: Any) -> dict[str, Any]:
    specs = parse_report_input((EXAMPLES / name).read_text(), source=name)
    ctx = PayloadContext(provider="anthropic", session_id="example", cache_ttl="5m")
    return cache_report(replay(specs, plugin_host.payload_cache_layout, ctx), count=estimate_tokens)


@pytest.mark.parametrize("name", ["coding_session.json", "support_chat.json"])
def test_long_example_sessions_save_most_of_the_input_cost(name: str, plugin_host: Any) -> None:
    report = example_report(name, plugin_host)
    assert report["total"]["requests"] >= 100
    assert report["total"]["breaks"] == 0
    assert report["total"]["cost_ratio"] < 0.25


def test_the_compressed_example_breaks_only_at_its_compressions(plugin_host: Any) -> None:
    report = example_report("compressed_session.json", plugin_host)
    breaks = [(t["index"], t["break"]["cause"]) for t in report["turns"] if t["break"]]
    assert [cause for _, cause in breaks] == ["system_prompt_changed", "history_rewritten"]
    # The compression right after the rebuild still reads the system prompt's entry.
    second = report["turns"][breaks[1][0]]
    assert second["cache_read_tokens"] > 0
