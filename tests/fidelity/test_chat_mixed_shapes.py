"""Every documented OpenAI Chat message shape in one history, through before_request, request
(OpenAI Chat, Anthropic, Responses), after_response and a forced compaction at random windows:

- every request is valid by its provider's rules (tests/support/validators_*.py);
- every tool result still sent has its call before it, and a custom call stays a custom call;
- the newest user message reaches every request verbatim;
- nothing of the deprecated function-calling form reaches any provider.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from hermes_core.errors import ContextOverflowError

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import PDF_B64, PNG_B64, WAV_B64, open_session
from hypothesis_budget import examples

_words = st.sampled_from(["build", "crash", "deploy", "file", "grep", "index", "log", "merge", "parser"])


@st.composite
def _text(draw: Any, low: int = 1, high: int = 60) -> str:
    return " ".join(draw(st.lists(_words, min_size=low, max_size=high)))


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"call_{self.n}"


def _user(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "named", "parts"]))
    if kind == "text":
        return {"role": "user", "content": draw(_text())}
    if kind == "named":
        return {"role": "user", "content": draw(_text()), "name": "ana"}
    parts: list[dict[str, Any]] = [{"type": "text", "text": draw(_text())}]
    parts += draw(st.lists(st.sampled_from([
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}},
        {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-abc123"}},
        {"type": "file", "file": {"filename": "spec.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"}},
    ]), max_size=2))
    return {"role": "user", "content": parts}


def _tool_round(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            calls.append({"id": ids.next(), "type": "function",
                          "function": {"name": "grep", "arguments": json.dumps({"q": draw(_text(1, 3))})}})
        else:
            calls.append({"id": ids.next(), "type": "custom",
                          "custom": {"name": "apply_patch", "input": "*** Begin Patch\n" + draw(_text())}})
    content = draw(st.sampled_from([None, "", "Let me look."]))
    out: list[dict[str, Any]] = [{"role": "assistant", "content": content, "tool_calls": calls}]
    results = []
    for call in calls:
        body = draw(st.sampled_from(["text", "empty", "parts", "no-parts"]))
        text = draw(_text(5, 200))
        result = {"text": text, "empty": "", "parts": [{"type": "text", "text": text}], "no-parts": []}[body]
        results.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return out + draw(st.permutations(results))


def _legacy_round(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    ids.next()
    name = draw(st.sampled_from(["get_weather", "lookup"]))
    return [{"role": "assistant", "content": None,
             "function_call": {"name": name, "arguments": json.dumps({"q": draw(_text(1, 3))})}},
            {"role": "function", "name": name, "content": draw(_text(5, 200))}]


def _answer(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "refusal", "refusal_part", "audio", "annotated"]))
    if kind == "text":
        return {"role": "assistant", "content": draw(_text())}
    if kind == "refusal":
        return {"role": "assistant", "content": None, "refusal": draw(_text())}
    if kind == "refusal_part":
        return {"role": "assistant", "content": [{"type": "refusal", "refusal": draw(_text())}]}
    if kind == "audio":
        return {"role": "assistant", "content": None, "audio": {"id": "audio_1", "transcript": draw(_text())}}
    return {"role": "assistant", "content": draw(_text()), "annotations": [
        {"type": "url_citation", "url_citation": {"url": "https://example.org", "title": "x",
                                                  "start_index": 0, "end_index": 3}}]}


@st.composite
def histories(draw: Any) -> tuple[list[dict[str, Any]], str]:
    ids = _Ids()
    history: list[dict[str, Any]] = []
    if draw(st.booleans()):
        history.append(draw(st.sampled_from([
            {"role": "developer", "content": "Answer briefly."},
            {"role": "system", "content": [{"type": "text", "text": "Rule A."}, {"type": "text", "text": "Rule B."}]},
        ])))
    for _ in range(draw(st.integers(1, 4))):
        history.append(_user(draw))
        for _ in range(draw(st.integers(0, 3))):
            history += (_tool_round if draw(st.integers(0, 3)) else _legacy_round)(draw, ids)
        history.append(_answer(draw))
    newest = "now " + draw(_text(3, 20))
    history.append({"role": "user", "content": newest})
    return history, newest


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [p.get("text") for p in content or () if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _check(session: Any, messages: list[dict[str, Any]], newest: str) -> None:
    assert not any(m.get("role") == "function" or m.get("function_call") for m in messages)
    calls = {c["id"]: c for m in messages for c in m.get("tool_calls") or ()}
    assert {m["tool_call_id"] for m in messages if m["role"] == "tool"} <= set(calls)
    for call in calls.values():
        assert ("custom" in call) == (call["type"] == "custom")
    chat = session.request(messages, provider="openai")
    validators_openai_chat.check(chat)
    assert newest in _texts(chat["messages"][-1]["content"])
    anthropic = session.request(messages, provider="anthropic")
    validators_anthropic.check(anthropic)
    assert newest in _texts(anthropic["messages"][-1]["content"])
    responses = session.request(messages, provider="openai", api="responses")
    validators_openai_responses.check(responses)
    assert newest in _texts(responses["input"][-1]["content"])


PHASES = (Phase.explicit, Phase.reuse, Phase.generate)  # no shrinking: each example is ~1 s


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(case=histories(), window=st.sampled_from([4_000, 8_000, 64_000]))
def test_every_chat_shape_gives_valid_requests_through_compaction(case: Any, window: int) -> None:
    history, newest = case
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Path(tmp), provider="openai", context_length=window)
        try:
            messages = session.before_request(copy.deepcopy(history))
        except ContextOverflowError:
            return
        _check(session, messages, newest)
        messages = session.after_response({"prompt_tokens": window}, messages)
        _check(session, messages, newest)
        compacted = session.compress(copy.deepcopy(history)).messages
        _check(session, compacted, newest)
