"""Fuzzed histories through the Session (issue 19): what reaches a provider is always valid.

Random short histories mix reused ids, parallel calls, results out of order, orphans,
results separated from their call, unanswered calls, pending calls, banner text typed by the
user, lone surrogates and empty messages. Each runs through ``before_request``,
``after_response`` (usage over the threshold, so compression fires), ``compress`` and
``request`` for OpenAI and Anthropic with a tiny window. Whatever comes out: valid by the
pairing rule, the newest user request present verbatim as a user message, no exception.

The default run checks ``FUZZ_EXAMPLES`` examples in a few seconds; the opt-in soak profile
(``--hypothesis-profile=soak``, registered in ``conftest.py``) runs 20,000.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.host import PluginHost
from hermes_core.pairing import pairing_problems

from hypothesis_budget import examples

FUZZ_EXAMPLES = 2_000
IDS = ["call_0", "call_1", "toolu_01", "x"]
BANNERS = [
    "[HANDOFF NOTES - BACKGROUND ONLY] please keep this",
    "[CONTEXT SUMMARY]: my own notes, not a summary",
    "[CONTEXT COMPACTION] I typed this myself",
    "[HANDOFF NOTES",
]
TEXTS = st.one_of(
    st.sampled_from(["fix the parser", "run the tests again", "why does it fail?", "ok", "日本語 🎉"]),
    st.sampled_from(BANNERS),
    st.builds(lambda a, b: f"{a} \ud800 {b}", st.sampled_from(["lone", "surrogate"]), st.sampled_from(["x", "y"])),
    st.text(max_size=40),
)


def call(ident: str, k: int) -> dict[str, Any]:
    return {"id": ident, "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": f"step {k}"})}}


# The strategies are built once here, not inside ``histories`` on every draw: building them
# per draw was half of this test's time (the examples and their distribution are the same).
KINDS = st.sampled_from(["user", "user", "reply", "calls", "calls", "calls", "orphan", "late"])
ANY_ID = st.sampled_from(IDS)
ORPHAN_IDS = st.sampled_from(IDS + ["ghost"])
GROUPS = st.lists(ANY_ID, min_size=1, max_size=3)
CALL_TEXTS = st.sampled_from(["", None, "on it"])
SIZES = st.sampled_from([10, 300, 3_000])
TURNS = st.integers(0, 10)


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": "You are a test agent."})
    k = 0
    for _ in range(draw(TURNS)):
        kind = draw(KINDS)
        if kind == "user":
            messages.append({"role": "user", "content": draw(TEXTS)})
        elif kind == "reply":
            messages.append({"role": "assistant", "content": draw(TEXTS)})
        elif kind == "orphan":
            messages.append({"role": "tool", "tool_call_id": draw(ORPHAN_IDS), "content": "stray result"})
        elif kind == "late":
            # A result separated from its call by another message.
            ident = draw(ANY_ID)
            messages.append({"role": "assistant", "content": "", "tool_calls": [call(ident, k)]})
            messages.append({"role": "user", "content": draw(TEXTS)})
            messages.append({"role": "tool", "tool_call_id": ident, "content": "late result " * 20})
            k += 1
        else:
            group = draw(GROUPS)
            calls = [call(ident, k + j) for j, ident in enumerate(group)]
            k += len(group)
            messages.append({"role": "assistant", "content": draw(CALL_TEXTS), "tool_calls": calls})
            answered = draw(st.permutations(range(len(group))))[: draw(st.integers(0, len(group)))]
            size = draw(SIZES)
            for p in answered:
                messages.append({"role": "tool", "tool_call_id": group[p],
                                 "content": f"result {p}\n" + "line\n" * (size // 5)})
    if draw(st.booleans()) or not any(m["role"] == "user" for m in messages):
        messages.append({"role": "user", "content": draw(TEXTS)})
    return messages


def newest_request(messages: list[dict[str, Any]]) -> Any:
    for message in reversed(messages):
        if message.get("role") == "user" and str(message.get("content") or "").strip():
            return message["content"]
    return None


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    home = tmp_path_factory.mktemp("fuzz-home")
    return Session.open(cwd=home, home=home, model="m", provider="openai", context_length=2_000,
                        host=PluginHost.create(env={}), env={}, persist=False)


def assert_sent_ok(sent: list[dict[str, Any]], request: Any, *, wire: bool = False) -> None:
    assert pairing_problems(sent) == [], pairing_problems(sent)
    if request is not None:
        # The payload trims the whitespace around a text (a provider rule) and writes a lone
        # surrogate as \udNNN text (no provider takes one; docs/message-model.md); nothing else.
        wired = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", request.strip())
        same = (lambda t: isinstance(t, str) and t.strip() == wired) if wire else (
            lambda t: t == request)
        assert any(m.get("role") == "user" and same(text_of(m.get("content"))) for m in sent), "request lost"


def text_of(content: Any) -> Any:
    # A cache layout may turn a string into one marked text block.
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        return content[0].get("text")
    return content


@pytest.mark.slow
@settings(max_examples=examples(FUZZ_EXAMPLES), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(messages=histories(), step=st.sampled_from(["before", "after", "compress", "request"]))
def test_fuzzed_histories_reach_a_provider_valid(session: Session, messages: list[dict[str, Any]], step: str) -> None:
    request = newest_request(messages)
    if step == "before":
        sent = session.before_request(messages)
    elif step == "after":
        sent = session.before_request(
            session.after_response({"prompt_tokens": session.engine.threshold_tokens + 1}, messages)
        )
    elif step == "compress":
        sent = session.before_request(session.compress(messages).messages)
    else:
        sent = messages
    for provider in ("openai", "anthropic"):
        session.request(sent, provider=provider)  # the SDK arguments build without error
        assert_sent_ok(list(session.payload(sent, provider=provider)["messages"]), request, wire=True)
    if step != "request":  # the raw list is the host's; what reaches a provider is the payload
        assert_sent_ok(sent, request)
    session.warnings  # drained: they must not pile up across examples
