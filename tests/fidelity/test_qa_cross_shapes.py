"""One history mixing every provider's shapes (QA, issue 28).

Anthropic blocks (signed thinking, redacted thinking, images inside tool results, ``is_error``),
OpenAI Chat parts (image_url, text parts as tool content, refusals) and Responses items
(reasoning with ``encrypted_content``, function_call / function_call_output) in ONE history, as
an agent that switched provider mid-conversation holds it, through before_request / request
(Anthropic, OpenAI Chat, ``api="responses"``) / after_response / compress at random windows:

- every request validates against its provider's rules (tests/support/validators_*.py);
- the newest user request reaches every request verbatim (one text block/part equal to it);
- the latest assistant turn's thinking goes to Anthropic byte-identical and first, and its
  reasoning items go to the Responses API byte-identical;
- every tool result still in a request keeps its error flag (``is_error`` / ``[tool error]``).
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from hermes_core.errors import ContextOverflowError

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import PNG_B64, open_session
from hypothesis_budget import examples

_words = st.sampled_from(["alpha", "build", "crash", "deploy", "error", "file", "grep", "handler",
                          "index", "json", "kernel", "log", "merge", "null", "output", "parser"])


@st.composite
def _text(draw: Any, low: int = 1, high: int = 40) -> str:
    return " ".join(draw(st.lists(_words, min_size=low, max_size=high)))


A_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
C_IMAGE = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}


def _user(draw: Any, text: str) -> list[dict[str, Any]]:
    """A user request in one of the three shapes (Responses: a role-bearing message item)."""
    shape = draw(st.sampled_from(["chat", "chat_parts", "anthropic", "responses"]))
    if shape == "chat":
        return [{"role": "user", "content": text}]
    if shape == "chat_parts":
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if draw(st.booleans()):
            parts.append(C_IMAGE)
        return [{"role": "user", "content": parts}]
    if shape == "anthropic":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if draw(st.booleans()):
            blocks.append(A_IMAGE)
        return [{"role": "user", "content": blocks}]
    return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}]


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


def _anthropic_round(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    n = ids.next()
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": draw(_text(2, 20)),
                                     "signature": f"sig-{n}-" + "x" * draw(st.integers(1, 30))}]
    if draw(st.booleans()):
        blocks.append({"type": "redacted_thinking", "data": f"redacted-{n}"})
    calls = [f"toolu_{n:03d}_{k}" for k in range(draw(st.integers(1, 2)))]
    blocks += [{"type": "tool_use", "id": c, "name": "read_file", "input": {"path": f"f{n}.py"}}
               for c in calls]
    results: list[dict[str, Any]] = []
    for c in calls:
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": c, "content": draw(_text(5, 300))}
        if draw(st.booleans()):
            result["content"] = [{"type": "text", "text": result["content"]}, A_IMAGE]
        if draw(st.integers(0, 2)) == 0:
            result["is_error"] = True
        results.append(result)
    return [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]


def _chat_round(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(1, 2))):
        n = ids.next()
        calls.append({"id": f"call_{n}", "type": "function",
                      "function": {"name": "grep", "arguments": json.dumps({"q": f"w{n}"})}})
    out: list[dict[str, Any]] = [{"role": "assistant", "content": draw(st.none() | _text()), "tool_calls": calls}]
    for c in calls:
        content: Any = draw(_text(5, 300))
        if draw(st.booleans()):
            content = [{"type": "text", "text": content}, {"type": "text", "text": draw(_text())}]
        message: dict[str, Any] = {"role": "tool", "tool_call_id": c["id"], "content": content}
        if draw(st.integers(0, 2)) == 0:
            message["_is_error"] = True
        out.append(message)
    return out


def _responses_round(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    n = ids.next()
    out: list[dict[str, Any]] = [{"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"gAAAA-{n}==",
                                  "summary": [{"type": "summary_text", "text": draw(_text(1, 8))}]}]
    calls = [ids.next() for _ in range(draw(st.integers(1, 2)))]
    out += [{"type": "function_call", "id": f"fc_{c}", "call_id": f"rc_{c}", "name": "read_file",
             "arguments": json.dumps({"path": f"r{c}.py"}), "status": "completed"} for c in calls]
    out += [{"type": "function_call_output", "call_id": f"rc_{c}", "output": draw(_text(5, 300))}
            for c in calls]
    return out


def _answer(draw: Any, ids: _Ids) -> list[dict[str, Any]]:
    """The assistant's closing answer of a turn, in one of the shapes."""
    n = ids.next()
    shape = draw(st.sampled_from(["chat", "refusal", "anthropic", "responses"]))
    if shape == "chat":
        return [{"role": "assistant", "content": draw(_text())}]
    if shape == "refusal":
        return [{"role": "assistant", "content": None, "refusal": draw(_text())}]
    if shape == "anthropic":
        return [{"role": "assistant", "content": [
            {"type": "thinking", "thinking": draw(_text(2, 12)), "signature": f"sig-end-{n}"},
            {"type": "text", "text": draw(_text())}]}]
    return [{"type": "reasoning", "id": f"rs_end_{n}", "encrypted_content": f"gAAAA-end-{n}==", "summary": []},
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": draw(_text()), "annotations": []}]}]


ROUNDS = {"anthropic": _anthropic_round, "chat": _chat_round, "responses": _responses_round}


@st.composite
def mixed_histories(draw: Any) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    """(history, the newest request's text, the latest assistant turn's items)."""
    ids = _Ids()
    history: list[dict[str, Any]] = []
    last: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(1, 4))):
        history += _user(draw, f"request {turn}: " + draw(_text()))
        for _ in range(draw(st.integers(0, 3))):
            history += ROUNDS[draw(st.sampled_from(sorted(ROUNDS)))](draw, ids)
        last = _answer(draw, ids)
        history += last
    newest = "now please " + draw(_text(3, 30))
    history += _user(draw, newest)
    return history, newest, copy.deepcopy(last)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def _check_newest(request: dict[str, Any], newest: str, key: str) -> None:
    """The newest request is in the last user message (or input item), verbatim."""
    items = request[key]
    users = [m for m in items if isinstance(m, dict) and m.get("role") == "user"]
    assert users, "no user message at all"
    assert newest in _texts(users[-1].get("content")), (newest, users[-1])


def _check_anthropic_thinking(request: dict[str, Any], last: list[dict[str, Any]]) -> None:
    if not (len(last) == 1 and isinstance(last[0].get("content"), list)):
        return  # the latest turn is not an Anthropic turn with thinking
    want = [json.dumps(b, sort_keys=True) for b in last[0]["content"]
            if b["type"] in ("thinking", "redacted_thinking")]
    sent = [m for m in request["messages"] if m["role"] == "assistant"]
    assert sent, "the latest assistant turn is missing"
    got = [json.dumps(b, sort_keys=True) for b in sent[-1]["content"]
           if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")]
    assert got == want
    assert sent[-1]["content"][0]["type"] == "thinking"


def _check_responses_reasoning(request: dict[str, Any], last: list[dict[str, Any]]) -> None:
    if last[0].get("type") != "reasoning":
        return
    want = json.dumps(last[0], sort_keys=True)
    assert want in [json.dumps(i, sort_keys=True) for i in request["input"]], "latest reasoning altered"


def error_flags(history: list[dict[str, Any]]) -> dict[str, bool]:
    """Call id -> whether the provider flagged its result as an error, from the original shapes."""
    out: dict[str, bool] = {}
    for m in history:
        if m.get("role") == "tool":
            out[m["tool_call_id"]] = bool(m.get("_is_error"))
        elif m.get("role") == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = bool(b.get("is_error"))
    return out


def _check_errors(anthropic: dict[str, Any], chat: dict[str, Any], flags: dict[str, bool]) -> None:
    """A result still in the request keeps its error flag: ``is_error`` for Anthropic, the
    ``[tool error]`` marker for Chat; a success gets neither."""
    for message in anthropic["messages"]:
        for b in message["content"] if isinstance(message["content"], list) else ():
            if b.get("type") == "tool_result" and b["tool_use_id"] in flags:
                assert bool(b.get("is_error")) == flags[b["tool_use_id"]], b
    for message in chat["messages"]:
        if message["role"] == "tool" and message["tool_call_id"] in flags:
            text = " ".join(_texts(message["content"]))
            assert text.startswith("[tool error]") == flags[message["tool_call_id"]], message


def _check_all(session: Any, messages: list[dict[str, Any]], newest: str, last: list[dict[str, Any]],
               flags: dict[str, bool]) -> None:
    anthropic = session.request(messages)
    validators_anthropic.check(anthropic, thinking=True)
    _check_newest(anthropic, newest, "messages")
    _check_anthropic_thinking(anthropic, last)
    chat = session.request(messages, provider="openai")
    validators_openai_chat.check(chat)
    _check_newest(chat, newest, "messages")
    _check_errors(anthropic, chat, flags)
    responses = session.request(messages, provider="openai", api="responses")
    validators_openai_responses.check(responses)
    _check_newest(responses, newest, "input")
    _check_responses_reasoning(responses, last)


PHASES = (Phase.explicit, Phase.reuse, Phase.generate)  # no shrinking: each example is ~1 s
WINDOWS = st.sampled_from([4_000, 8_000, 16_000, 64_000])


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(case=mixed_histories(), window=WINDOWS)
def test_mixed_histories_give_valid_requests_for_every_api(case: Any, window: int) -> None:
    history, newest, last = case
    flags = error_flags(history)
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Path(tmp), context_length=window)
        try:
            try:
                messages = session.before_request(copy.deepcopy(history))
            except ContextOverflowError:
                event("overflow")
                return
            event(f"compacted before the request: {len(messages) < len(history)}")
            _check_all(session, messages, newest, last, flags)
            messages = session.after_response({"input_tokens": window}, messages)
            _check_all(session, messages, newest, last, flags)
            manual = session.compress(messages)
            event(f"manual: {manual.messages is not messages}")
            _check_all(session, manual.messages, newest, last, flags)
        finally:
            session.close()


#: Arguments a model nested 5,000 deep (bounded: a valid request, never a RecursionError).
DEEP_ARGUMENTS = "[" * 5_000 + "]" * 5_000


@st.composite
def loop_in_progress(draw: Any) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    """A mixed history whose last turn is a tool loop in progress in one of the three shapes
    (sometimes with deep arguments): (history, that loop's shape, the loop's items)."""
    history, _newest, _last = draw(mixed_histories())
    ids = _Ids()
    ids.n = 1_000  # ids of the loop never collide with the history's
    kind = draw(st.sampled_from(sorted(ROUNDS)))
    loop = ROUNDS[kind](draw, ids)
    if kind != "anthropic" and draw(st.integers(0, 3)) == 0:
        for item in loop:
            if item.get("type") == "function_call":
                item["arguments"] = DEEP_ARGUMENTS
            for call in item.get("tool_calls") or ():
                call["function"]["arguments"] = DEEP_ARGUMENTS
    return history + loop, kind, copy.deepcopy(loop)


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(case=loop_in_progress(), window=WINDOWS)
def test_a_loop_in_progress_in_any_shape_gives_valid_requests(case: Any, window: int) -> None:
    history, kind, loop = case
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Path(tmp), context_length=window)
        try:
            try:
                messages = session.before_request(copy.deepcopy(history))
            except ContextOverflowError:
                event("overflow")
                return
            for step in range(3):
                # Thinking can only be required where the loop came from Anthropic.
                anthropic = session.request(messages)
                validators_anthropic.check(anthropic, thinking=kind == "anthropic")
                if kind == "anthropic":
                    _check_anthropic_thinking(anthropic, loop[:1])
                validators_openai_chat.check(session.request(messages, provider="openai"))
                responses = session.request(messages, provider="openai", api="responses")
                validators_openai_responses.check(responses)
                if kind == "responses":
                    _check_responses_reasoning(responses, loop)
                if step == 0:
                    messages = session.after_response({"input_tokens": window}, messages)
                else:
                    messages = session.compress(messages).messages
        finally:
            session.close()
