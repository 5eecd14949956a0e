"""Random histories in each provider's shape (thinking, images, parallel calls, failed calls)
through before_request / request / after_response / compress at random windows: every request
is valid for its provider (tests/support/validators_*.py), and the tool loop in progress keeps its
thinking byte-identical (issue 28)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from hermes_core.errors import ContextOverflowError
from hermes_core.sdk import normalize_messages

import validators_anthropic
import validators_openai_chat
from fidelity_fixtures import DOCUMENT, PNG_B64, SEARCH, URL_IMAGE, open_session
from hypothesis_budget import examples

_words = st.sampled_from(["alpha", "build", "crash", "deploy", "error", "file", "grep", "handler",
                          "index", "json", "kernel", "log", "merge", "null", "output"])


@st.composite
def _text(draw: Any, low: int = 1, high: int = 60) -> str:
    return " ".join(draw(st.lists(_words, min_size=low, max_size=high)))


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}


@st.composite
def anthropic_histories(draw: Any) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """An Anthropic-shaped history ending in a tool loop in progress, and that loop's
    assistant turns (whose thinking must go back byte-identical)."""
    history: list[dict[str, Any]] = []
    counter = 0
    turns = draw(st.integers(1, 4))
    loop: list[list[dict[str, Any]]] = []
    for turn in range(turns):
        last = turn == turns - 1
        user: list[dict[str, Any]] = [{"type": "text", "text": draw(_text())}]
        if draw(st.integers(0, 3)) == 0:  # the host's own breakpoint
            user[0]["cache_control"] = {"type": "ephemeral"}
        if draw(st.booleans()):
            user.append(draw(st.sampled_from([IMAGE, URL_IMAGE, DOCUMENT])))
        history.append({"role": "user", "content": user})
        loop = []
        for _ in range(draw(st.integers(1 if last else 0, 3))):
            blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": draw(_text(3, 30)),
                                             "signature": f"sig-{counter}-" + "x" * draw(st.integers(1, 40))}]
            if draw(st.booleans()):
                blocks.append({"type": "redacted_thinking", "data": f"redacted-{counter}"})
            if draw(st.booleans()):
                blocks.append({"type": "text", "text": draw(_text())})
            ids = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                ids.append(f"toolu_{counter:03d}")
                blocks.append({"type": "tool_use", "id": ids[-1], "name": "read_file",
                               "input": {"path": f"src/f{counter}.py"}})
            history.append({"role": "assistant", "content": blocks})
            loop.append(blocks)
            results: list[dict[str, Any]] = []
            for ident in ids:
                result: dict[str, Any] = {"type": "tool_result", "tool_use_id": ident,
                                          "content": draw(_text(5, 400))}
                if draw(st.booleans()):
                    result["content"] = [{"type": "text", "text": result["content"]},
                                         draw(st.sampled_from([IMAGE, URL_IMAGE, SEARCH]))]
                if draw(st.integers(0, 3)) == 0:
                    result["is_error"] = True
                results.append(result)
            history.append({"role": "user", "content": results})
        if not last:
            history.append({"role": "assistant", "content": [
                {"type": "thinking", "thinking": draw(_text(3, 20)), "signature": f"sig-end-{turn}"},
                {"type": "text", "text": draw(_text())}]})
    return history, loop


def _check_loop_thinking(request: dict[str, Any], loop: list[list[dict[str, Any]]]) -> None:
    """Every assistant turn of the loop in progress that is still in the request (a compaction
    may condense its earlier steps away, whole) has its thinking byte-identical and first; the
    latest is always there."""
    def thinking_of(blocks: list[dict[str, Any]]) -> list[str]:
        return [json.dumps(b) for b in blocks if b["type"] in ("thinking", "redacted_thinking")]

    by_call = {b["id"]: original for original in loop for b in original if b["type"] == "tool_use"}
    sent = [m["content"] for m in request["messages"] if m["role"] == "assistant"]
    latest = [b["id"] for b in loop[-1] if b["type"] == "tool_use"]
    assert any(b.get("id") == latest[0] for blocks in sent for b in blocks), "latest turn missing"
    for blocks in sent:
        ids = [b["id"] for b in blocks if b["type"] == "tool_use" and b["id"] in by_call]
        if ids:
            assert thinking_of(blocks) == thinking_of(by_call[ids[0]])
            assert blocks[0]["type"] in ("thinking", "redacted_thinking")


# No shrinking: each example opens a session and compresses (about a second); a failure is
# printed as drawn, which is readable at these sizes.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
WINDOWS = st.sampled_from([6_000, 12_000, 32_000, 200_000])


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(case=anthropic_histories(), window=WINDOWS)
def test_anthropic_histories_always_give_valid_requests(case: Any, window: int) -> None:
    history, loop = case
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Path(tmp), context_length=window)
        try:
            messages = session.before_request(history)
        except ContextOverflowError:
            event("overflow")
            return  # a documented outcome when the loop in progress alone cannot fit
        event(f"compressed before the request: {len(messages) < len(normalize_messages(history))}")
        request = session.request(messages)
        validators_anthropic.check(request, thinking=True)
        _check_loop_thinking(request, loop)
        validators_openai_chat.check(session.request(messages, provider="openai"))
        messages = session.after_response({"input_tokens": window}, messages)
        request = session.request(messages)
        validators_anthropic.check(request, thinking=True)
        _check_loop_thinking(request, loop)
        manual = session.compress(messages)
        request = session.request(manual.messages)
        validators_anthropic.check(request, thinking=True)
        _check_loop_thinking(request, loop)
        session.close()


@st.composite
def openai_histories(draw: Any) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    counter = 0
    for _turn in range(draw(st.integers(1, 4))):
        parts: list[dict[str, Any]] = [{"type": "text", "text": draw(_text())}]
        if draw(st.booleans()):
            parts.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}})
        if draw(st.booleans()):
            parts.append({"type": "input_audio", "input_audio": {"data": PNG_B64, "format": "wav"}})
        history.append({"role": "user", "content": parts if len(parts) > 1 or draw(st.booleans()) else parts[0]["text"]})
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append({"id": f"call_{counter}", "type": "function",
                              "function": {"name": "grep", "arguments": json.dumps({"q": f"w{counter}"})}})
            history.append({"role": "assistant", "content": draw(st.none() | _text()), "tool_calls": calls})
            for call in calls:
                content: Any = draw(_text(5, 400))
                if draw(st.booleans()):
                    content = [{"type": "text", "text": content}, {"type": "text", "text": draw(_text())}]
                message = {"role": "tool", "tool_call_id": call["id"], "content": content}
                if draw(st.integers(0, 3)) == 0:
                    message["_is_error"] = True
                history.append(message)
        if draw(st.booleans()):
            history.append({"role": "assistant", "content": None, "refusal": draw(_text())})
        else:
            history.append({"role": "assistant", "content": draw(_text())})
    history.append({"role": "user", "content": draw(_text())})
    return history


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=PHASES)
@given(history=openai_histories(), window=WINDOWS)
def test_openai_histories_always_give_valid_requests(history: list[dict[str, Any]], window: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        session = open_session(Path(tmp), provider="openai", context_length=window)
        try:
            messages = session.before_request(history)
        except ContextOverflowError:
            event("overflow")
            return
        event(f"compressed before the request: {len(messages) < len(history)}")
        for step in range(3):
            validators_openai_chat.check(session.request(messages))
            validators_anthropic.check(session.request(messages, provider="anthropic"))
            if step == 0:
                messages = session.after_response({"prompt_tokens": window}, messages)
            else:
                messages = session.compress(messages).messages
        session.close()
