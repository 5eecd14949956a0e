"""The streaming cache simulator gives exactly the report of the from-scratch model, request by
request, over random request sequences (appends, layouts' markers, system and tool changes,
rewritten histories); and the CLI replays long transcripts in bounded memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.payload import assemble_payload
from hermes_plugins.cache_report import CacheSimulator
from hermes_plugins.caching import anthropic_layout
from hermes_plugins.replay_requests import parse_report_input

from cache_report_reference import ReferenceSimulator
from hypothesis_budget import examples


def chars(text: str) -> int:
    return len(text)


TEXT = st.sampled_from(["a" * 300, "b" * 40, "ok", "c" * 1200, "results\n" * 30])


@st.composite
def message(draw: Any) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "tool"]))
    if role == "tool":
        return {"role": "tool", "tool_call_id": draw(st.sampled_from(["t1", "t2"])), "content": draw(TEXT)}
    if role == "assistant" and draw(st.booleans()):
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": draw(st.sampled_from(["t1", "t2"])), "type": "function",
             "function": {"name": "read", "arguments": draw(st.sampled_from(['{"a":1}', '{"b": 2}']))}}]}
    return {"role": role, "content": draw(TEXT)}


STEPS = st.lists(
    st.tuples(st.sampled_from(["append", "append", "append", "system", "tools", "rewrite", "mark"]),
              st.lists(message(), min_size=1, max_size=4), st.integers(0, 1000)),
    min_size=1, max_size=10,
)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(provider=st.sampled_from(["anthropic", "openai"]), start=st.lists(message(), min_size=1, max_size=6),
       steps=STEPS)
def test_streaming_reports_equal_the_from_scratch_model(provider: str, start: list[Any], steps: list[Any]) -> None:
    streaming = CacheSimulator(provider, count=chars, min_tokens=200)
    reference = ReferenceSimulator(provider, count=chars, min_tokens=200)
    system, tools, messages = "s" * 900, [], list(start)
    for op, new, at in steps + [("append", [], 0)]:
        if op == "append":
            messages = [*messages, *new]
        elif op == "system":
            system = system + " changed"
        elif op == "tools":
            tools = [*tools, {"name": f"tool{at}", "description": "d", "input_schema": {"type": "object"}}]
        elif op == "rewrite" and messages:
            cut = at % len(messages)
            messages = [{"role": "user", "content": f"summary {at}"}, *messages[cut:]]
        payload = assemble_payload(system, messages, tools)
        if op == "mark" or provider == "anthropic":
            payload = anthropic_layout(payload, ttl="1h" if at % 3 == 0 else "5m")
        got, want = streaming.add(payload), reference.add(payload)
        assert got == want
    assert streaming.report() == reference.report()


def test_a_growing_conversation_derives_only_the_new_and_marked_units() -> None:
    sim = CacheSimulator("anthropic", count=chars)
    messages: list[dict[str, Any]] = []
    for turn in range(200):
        messages = [*messages, {"role": "user", "content": f"question {turn}"},
                    {"role": "assistant", "content": f"answer {turn}"}]
        sim.add(anthropic_layout(assemble_payload("s" * 2000, messages)))
    # 400 messages, one unit each, plus the system; without reuse it would be ~40,000.
    assert sim.rebuilt_units < 400 + 200 * 8


def long_transcript(path: Path, n: int) -> Path:
    messages = []
    for i in range(n // 4):
        messages += [
            {"role": "user", "content": f"step {i}: look at module {i}"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"p": i})}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"contents of module {i}\n" * 20},
            {"role": "assistant", "content": f"module {i} is fine"},
        ]
    path.write_text(json.dumps(messages))
    return path


def test_requests_of_a_transcript_share_its_message_list(tmp_path: Path) -> None:
    specs = parse_report_input(long_transcript(tmp_path / "t.json", 400).read_text())
    assert len(specs) == 200
    assert [len(s.messages) for s in specs[:3]] == [1, 3, 5]
    assert list(specs[2].messages) == list(specs[3].messages)[:5]


def test_cli_replays_thousands_of_messages(tmp_path: Path) -> None:
    path = long_transcript(tmp_path / "long.json", 2000)
    result = CliRunner().invoke(cli, ["cache-report", "--json", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["total"]["requests"] == 1000 and report["total"]["breaks"] == 0


class FakeTerminal:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_bar_on_a_terminal_only(tmp_path: Path, monkeypatch: Any) -> None:
    import hermes_plugins.cache_report_cli as module

    path = long_transcript(tmp_path / "t.json", 40)
    piped = CliRunner().invoke(cli, ["cache-report", "--json", str(path)])
    assert piped.exit_code == 0 and "replaying requests" not in piped.output
    assert module._progress_target() is None  # under test, stderr is no terminal
    terminal = FakeTerminal()
    monkeypatch.setattr(module, "_progress_target", lambda: terminal)
    result = CliRunner().invoke(cli, ["cache-report", "--json", str(path)])
    assert result.exit_code == 0
    assert "replaying requests" in terminal.text
    assert json.loads(result.output)["total"]["requests"] == 20  # data on stdout, unchanged
