"""Short and head-heavy histories, and the newest request kept live (issues 13 and 19)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.pairing import pairing_problems
from hermes_core.tokens import estimate_messages_tokens

from compressor_support import assistant, call, make_engine, system, tool, user


def heavy_history() -> list[dict[str, Any]]:
    """12 messages, ~111k tokens: a system prompt, a 24 kB demonstration, the task, 4 rounds."""
    demo = {"role": "user", "content": "DEMONSTRATION\n" + "open file.py\nedit 3:4\n" * 1_200,
            "_demonstration": True}
    messages = [system(), demo, user("fix the failing date parser in src/dates.py")]
    for i in range(4):
        messages += [assistant("", call(f"c{i}", "terminal", command=f"cat part_{i}.log")),
                     tool(f"c{i}", f"log {i}\n" + "2024-01-01 INFO all good here\n" * 3_500)]
    messages.append(assistant("The log shows nothing yet."))
    return messages


def test_the_heavy_history_is_what_the_issue_describes() -> None:
    messages = heavy_history()
    assert len(messages) == 12
    assert 100_000 < estimate_messages_tokens(messages) < 120_000


def test_forced_compression_condenses_a_short_head_heavy_history() -> None:
    messages = heavy_history()
    engine = make_engine(64_000)
    out = engine.compress(messages, force=True)
    report = engine.last_compression_report
    assert report["status"] == "compressed", report.get("note")
    assert estimate_messages_tokens(out) < engine.threshold_tokens
    # The demonstration (over a tenth of the 54,400-token threshold) was condensed.
    assert not any(m.get("_demonstration") for m in out)
    assert pairing_problems(out) == []
    assert out[-1] == messages[-1]
    assert any(m["role"] == "user" and m["content"] == messages[2]["content"] for m in out)


def test_an_overflow_on_a_short_history_is_recovered(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", provider="openai",
                           context_length=64_000, env={}, persist=False)
    messages = heavy_history()
    error = RuntimeError("This model's maximum context length is 64000 tokens")
    retry = session.on_provider_error(error, messages)
    assert retry is not None and estimate_messages_tokens(retry) < 64_000
    assert pairing_problems(retry) == []


def test_a_history_that_fits_the_tail_budget_keeps_a_tenth_not_the_minimum_tail() -> None:
    messages = [system()]
    for i in range(30):
        messages += [user(f"question {i} " * 100), assistant(f"answer {i} " * 100)]
    engine = make_engine(200_000)
    out = engine.compress(messages, force=True)
    assert engine.last_compression_report["status"] == "compressed"
    kept = 0
    while kept < len(out) and out[-1 - kept] is messages[-1 - kept]:
        kept += 1
    # The oldest part is condensed; the tail keeps the newest tenth of the tokens, more than
    # the minimum of 3 messages a forced compression may fall back to.
    assert kept > 3
    assert estimate_messages_tokens(messages[-kept:]) >= 0.1 * estimate_messages_tokens(messages[4:])
    assert engine.last_compression_report["phases"]["summarized_messages"] >= 40


# --- the newest request is never reduced to a quote -------------------------------------------


def rounds(start: int, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(start, start + count):
        out += [assistant("", call(f"call_{i % 7}", "terminal", command=f"pytest -k case_{i}")),
                tool(f"call_{i % 7}", f"case {i}\n" + "collected 1 item, PASSED\n" * 150)]
    return out


REQUEST = "\n".join(f"{k:03d}: requirement line {k} - keep field order, tz-aware dates" for k in range(213))


def test_a_long_request_survives_five_compactions_of_a_tool_loop(tmp_path: Path) -> None:
    assert 12_000 <= len(REQUEST) <= 13_000
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", provider="openai",
                           context_length=64_000, env={}, persist=False)
    messages: list[dict[str, Any]] = [user(REQUEST)]
    for i in range(80):
        messages = session.before_request(messages)
        messages = session.after_response({"prompt_tokens": 0}, messages + rounds(i * 3, 3))
        kept = [m for m in messages if m["role"] == "user" and m["content"] == REQUEST]
        assert len(kept) == 1, f"the request is not a whole user message after round {i}"
        assert pairing_problems(messages) == []
    compactions = session.engine.compression_count
    assert any(m.get("_compressed_summary") for m in messages)
    assert estimate_messages_tokens(messages) < session.engine.threshold_tokens
    assert compactions >= 5


def test_a_request_over_the_tail_budget_is_kept_whole() -> None:
    # A user message is never cut (issue 28): the newest request stays verbatim even when it
    # alone is over the tail budget; the session reports a request too large for the window.
    engine = make_engine(16_000)
    big = "BEGIN " + "\n".join(f"spec line {k}" for k in range(3_000)) + " END"
    messages = [system(), user(big), *rounds(0, 30)]
    out = engine.compress(messages, force=True)
    kept = [m for m in out if m["role"] == "user" and "BEGIN" in str(m["content"])]
    assert len(kept) == 1 and kept[0]["content"] == big
    assert pairing_problems(out) == []


@pytest.mark.parametrize("flag", ["_injected", "_demonstration"])
def test_injected_and_demonstration_messages_are_not_the_request(flag: str) -> None:
    engine = make_engine(16_000)
    messages = [system(), user("the real task: migrate the schema"), *rounds(0, 25),
                {"role": "user", "content": "<system-reminder>todo list</system-reminder>", flag: True}]
    messages.insert(len(messages) - 1, assistant("noted"))
    out = engine.compress(messages, force=True)
    assert any(m["role"] == "user" and m["content"] == "the real task: migrate the schema" for m in out)
    assert json.dumps(out).count("the real task") >= 1
