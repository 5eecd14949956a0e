"""A ``mid_conv_system`` block (Anthropic beta: system text mid-conversation, in a user turn)
that falls inside the compacted part is not lost: the handoff lists its text as an instruction
(under "Decisions and constraints", like a user's standing instruction), and the LLM
summariser's input shows it labelled - never as the person's own words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.serialize import prepare_turns, serialize_turns

from fidelity_fixtures import open_session

SECRET = "sk-proj-" + "Mm1Nn2Bb3Vv4Cc5Xx6Zz7Ll8"
INSTRUCTION = "From now on, answer in French."


def _mid_system(text: Any) -> dict[str, Any]:
    return {"type": "mid_conv_system", "content": text}


def _history() -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Find the weather tool."},
                                     _mid_system([{"type": "text", "text": INSTRUCTION}])]},
        {"role": "assistant", "content": "Found get_weather."},
        {"role": "user", "content": [_mid_system(f"Deploy with token {SECRET} only to staging.")]},
        {"role": "assistant", "content": "Noted."},
    ]
    for n in range(8):
        history += [{"role": "user", "content": f"Step {n}: keep going with the handler work. " + "pad " * 300},
                    {"role": "assistant", "content": f"Step {n} done. " + "word " * 300}]
    return history


def _section(notes: str, title: str) -> str:
    return notes.split(f"## {title}\n", 1)[1].split("\n\n", 1)[0]


def test_the_handoff_lists_the_instruction_not_as_a_request() -> None:
    notes = build_handoff(_history()[:4], previous_summary=None, focus_topic=None, max_chars=6_000)
    decisions = _section(notes, "Decisions and constraints")
    assert f"System instruction (mid-conversation): {INSTRUCTION}" in decisions
    assert "only to staging" in decisions and SECRET not in notes
    assert _section(notes, "Latest user request") == "Find the weather tool."
    assert "mid_conv_system" not in notes


def test_the_fallback_handoff_from_prepared_turns_keeps_it() -> None:
    """An LLM summariser that fails falls back to the handoff over the prepared turns (content
    flattened to text): the instruction they carry is listed there too."""
    notes = build_handoff(prepare_turns(_history()[:4]), previous_summary=None, focus_topic=None, max_chars=6_000)
    assert f"System instruction (mid-conversation): {INSTRUCTION}" in _section(notes, "Decisions and constraints")
    assert SECRET not in notes


def test_the_summariser_input_labels_the_instruction() -> None:
    text = serialize_turns(prepare_turns(_history()[:4]))
    assert f"[USER]: Find the weather tool.\n[SYSTEM INSTRUCTION (MID-CONVERSATION)]: {INSTRUCTION}" in text
    assert "[SYSTEM INSTRUCTION (MID-CONVERSATION)]: Deploy with token" in text
    assert SECRET not in text and "[mid_conv_system]" not in text
    assert "[USER]: \n" not in text and "[INJECTED" not in text  # a turn of system text alone


def test_a_compaction_keeps_the_instruction_in_the_handoff(tmp_path: Path) -> None:
    session = open_session(tmp_path, context_length=16_000)
    try:
        opening = [{"role": "user", "content": "We work on the handlers today."},
                   {"role": "assistant", "content": "Understood."}] * 3
        result = session.compress(session.before_request(opening + _history()), force=True)
        kept = [m for m in result.messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                and any(isinstance(b, dict) and b.get("type") == "mid_conv_system" for b in m["content"])]
        assert not kept  # the turns that held it were compacted ...
        handoff = "\n".join(m["content"] for m in result.messages if isinstance(m.get("content"), str))
        assert f"System instruction (mid-conversation): {INSTRUCTION}" in handoff  # ... its text was not
    finally:
        session.close()
