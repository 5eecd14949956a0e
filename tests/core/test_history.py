"""Incremental requests: every payload built from the session's message cache equals a build
from scratch, over random edit sequences (append, edit in place, replace, delete, compaction)."""

from __future__ import annotations

import json
import threading
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.config import Config
from hermes_core.history import ProcessedHistory
from hermes_core.payload import assemble_payload, build_request, lay_out_request, release_request
from hermes_core.records import PayloadContext
from hermes_core.sdk import normalize_messages
from hermes_core.tokens import estimate_messages_tokens
from hermes_core.wire import anthropic_messages, to_anthropic, to_openai
from hermes_plugins import caching

from hypothesis_budget import examples

SYSTEM = "you are a careful agent"


class LayoutHost:
    """The built-in cache layout, without a plugin manager (hypothesis runs thousands)."""

    def payload_cache_layout(self, payload: dict[str, Any], ctx: PayloadContext) -> dict[str, Any]:
        return caching.hermes_payload_cache_layout(payload, ctx) or payload


@attrs.define
class FakeSession:
    provider: str = "anthropic"
    model: str = "claude-sonnet-4"
    session_id: str = "s-1"
    config: Config = attrs.field(factory=Config)
    host: LayoutHost = attrs.field(factory=LayoutHost)
    static_system_prefix: str = ""
    message_cache: ProcessedHistory = attrs.field(factory=ProcessedHistory)
    _lock: Any = attrs.field(factory=threading.RLock)

    def request_system_text(self, ephemeral: str | None = None) -> str:
        return SYSTEM


def from_scratch(session: FakeSession, messages: list[dict[str, Any]], provider: str) -> dict[str, Any]:
    payload = assemble_payload(SYSTEM, messages, provider=provider, model=session.model)
    ctx = PayloadContext(provider=provider, model=session.model, session_id=session.session_id,
                         config=session.config, cache_ttl="5m")
    return session.host.payload_cache_layout(payload, ctx)


def check(session: FakeSession, messages: list[dict[str, Any]]) -> None:
    before = json.dumps(messages, sort_keys=True)
    for provider in ("anthropic", "openai"):
        got = build_request(session, messages, provider=provider)
        want = from_scratch(session, messages, provider)
        assert got == want
        assert to_openai(got) == to_openai(want)
        wire = to_anthropic(got)
        assert wire["messages"] == anthropic_messages(want["messages"])
        # The request path (as Session.request runs it): normalising proves the known prefix
        # for the sync that follows; the layout marks the cache's lent list, converted at once.
        cache = session.message_cache
        assert cache.normalized(messages, normalize_messages, prove=True) is messages
        built = lay_out_request(session, messages, provider=provider, copy=False)
        cache.forget_proof()
        lent = built.payload
        assert lent == want
        assert to_openai(lent, laid=built.laid) == to_openai(want)
        assert to_anthropic(lent, laid=built.laid)["messages"] == anthropic_messages(want["messages"])
        release_request(session, lent)
    assert session.message_cache.message_tokens() == estimate_messages_tokens(messages)
    assert json.dumps(messages, sort_keys=True) == before  # the input is never mutated


# --- random conversations -------------------------------------------------------------------

IDS = st.sampled_from(["call_1", "call_2", "toolu_a", "x"])  # few ids: providers reuse them
TEXT = st.sampled_from(["", " ok ", "done\n", "look at src/a.py", "  spaced  ", "결과"])
ARGS = st.sampled_from(['{"b": 1, "a": 2}', '{"a":2,"b":1}', "not json", "", '{"path": "x"}'])


@st.composite
def turn(draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT)}]
    for _ in range(draw(st.integers(0, 2))):
        ids = draw(st.lists(IDS, min_size=1, max_size=3))
        calls = [{"id": i, "type": "function", "function": {"name": "read", "arguments": draw(ARGS)}}
                 for i in ids]
        assistant: dict[str, Any] = {"role": "assistant", "content": draw(TEXT), "tool_calls": calls}
        if draw(st.booleans()):
            assistant["_reasoning"] = "thinking"
        out.append(assistant)
        for i in ids:
            result: dict[str, Any] = {"role": "tool", "tool_call_id": i, "content": draw(TEXT)}
            if draw(st.booleans()):
                result["content"] = [{"type": "text", "text": draw(TEXT)}]
            out.append(result)
    out.append({"role": "assistant", "content": draw(TEXT)})
    return out


OPS = st.lists(
    st.tuples(
        st.sampled_from(["append", "edit", "edit_calls", "replace", "delete", "compact", "same"]),
        st.integers(0, 10_000),
        turn(),
    ),
    min_size=1,
    max_size=12,
)


def apply(op: str, at: int, new: list[dict[str, Any]], messages: list[dict[str, Any]],
          window: int | None) -> list[dict[str, Any]]:
    """The host's next list: appends and compactions make new lists, edits change a dict in
    place (within ``window`` of the end, or anywhere when ``None``)."""
    n = len(messages)
    if op == "append" or n == 0:
        return [*messages, *new]
    lo = 0 if window is None else max(0, n - window)
    index = lo + at % (n - lo)
    if op == "edit":
        messages[index]["content"] = f"edited {at}"
        return messages
    if op == "edit_calls":
        for message in messages[lo:]:
            if message.get("tool_calls"):
                message["tool_calls"][0]["function"]["arguments"] = json.dumps({"n": at})
                break
        return messages
    if op == "replace":
        out = list(messages)
        out[index] = {**messages[index], "content": f"replaced {at}"}
        return out
    if op == "delete":
        return messages[:index] + messages[index + 1:]
    if op == "compact":
        summary = {"role": "user", "content": f"summary of {index} messages", "_summary": "hermes-core"}
        return [messages[0], summary, *messages[index:]]
    return list(messages)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.lists(turn(), min_size=1, max_size=4), ops=OPS)
def test_incremental_payloads_equal_from_scratch_builds(start: list[Any], ops: list[Any]) -> None:
    session = FakeSession()
    messages = [m for t in start for m in t]
    check(session, messages)
    for op, at, new in ops:
        messages = apply(op, at, new, messages, window=session.message_cache.verify_window)
        check(session, messages)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.lists(turn(), min_size=2, max_size=5), ops=OPS)
def test_full_verification_sees_edits_in_place_anywhere(start: list[Any], ops: list[Any]) -> None:
    session = FakeSession(message_cache=ProcessedHistory(verify_window=None))
    messages = [m for t in start for m in t]
    check(session, messages)
    for op, at, new in ops:
        messages = apply(op, at, new, messages, window=None)
        check(session, messages)


# --- what is reused ---------------------------------------------------------------------------


def conversation(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(turns):
        out += [
            {"role": "user", "content": f"task {t} "},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "read", "arguments": '{"b": 1, "a": 2}'}}]},
            {"role": "tool", "tool_call_id": "call_0", "content": f"result {t}\n"},
            {"role": "assistant", "content": "ok"},
        ]
    return out


def test_a_turn_processes_only_the_new_messages() -> None:
    session = FakeSession()
    messages = conversation(50)
    build_request(session, messages)
    assert session.message_cache.computed == 200
    messages = [*messages, {"role": "user", "content": "next"}]
    build_request(session, messages)
    to_anthropic(build_request(session, messages))
    assert session.message_cache.computed == 201
    assert session.message_cache.rewinds == 0


def test_messages_that_moved_keep_their_processed_form() -> None:
    session = FakeSession()
    messages = conversation(50)
    build_request(session, messages)
    compacted = [messages[0], {"role": "user", "content": "summary"}, *messages[100:]]
    check(session, compacted)
    assert session.message_cache.computed == 201  # only the summary was new


def test_an_edit_in_place_within_the_window_is_seen() -> None:
    session = FakeSession()
    messages = conversation(50)
    build_request(session, messages)
    messages[-2]["content"] = "a different result"
    messages[-3]["tool_calls"][0]["function"]["arguments"] = '{"z": 0}'
    check(session, messages)
    out = to_anthropic(build_request(session, messages))
    assert out["messages"][-2]["content"][0]["content"] == "a different result"


def test_clear_makes_a_far_edit_in_place_visible() -> None:
    session = FakeSession()
    messages = conversation(50)
    build_request(session, messages)
    messages[2]["content"] = "far edit"
    session.message_cache.clear()
    check(session, messages)


def test_reused_ids_are_renamed_for_anthropic_and_stable_across_turns() -> None:
    messages = conversation(3)
    wire = anthropic_messages(assemble_payload(SYSTEM, messages)["messages"])
    uses = [b["id"] for m in wire for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in wire for b in m["content"] if b["type"] == "tool_result"]
    assert uses == ["call_0", "call_0__r2", "call_0__r3"]
    assert results == uses
    longer = anthropic_messages(assemble_payload(SYSTEM, conversation(5))["messages"])
    assert longer[: len(wire)] == wire  # earlier names never change as the history grows


def test_same_id_twice_in_one_message_pairs_like_the_core_rule() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "a", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "first"},
        {"role": "tool", "tool_call_id": "a", "content": "second"},
    ]
    wire = anthropic_messages(assemble_payload(SYSTEM, messages)["messages"])
    assert [b["id"] for b in wire[1]["content"]] == ["a", "a__r2"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["a", "a__r2"]


def test_a_host_that_mutates_a_returned_payload_does_not_change_the_next_one() -> None:
    session = FakeSession()
    messages = conversation(5)
    for provider in ("openai", "anthropic"):
        first = build_request(session, messages, provider=provider)
        first["messages"].append({"role": "user", "content": "smuggled"})
        first["messages"][0] = {"role": "user", "content": "overwritten"}
        to_anthropic(first)["messages"].append({"role": "user", "content": "smuggled"})
        check(session, messages)


def test_the_request_path_reuses_one_laid_out_list_marked_in_place() -> None:
    session = FakeSession()
    messages = conversation(50)
    first = lay_out_request(session, messages, copy=False)
    lent = first.payload["messages"]
    to_anthropic(first.payload, laid=first.laid)
    release_request(session, first.payload)
    for step in range(3):
        messages = [*messages, {"role": "user", "content": f"next {step}"}]
        built = lay_out_request(session, messages, copy=False)
        payload = built.payload
        assert payload["messages"] is lent  # no list copy per request: marked in place
        assert payload == from_scratch(session, messages, "anthropic")
        assert to_anthropic(payload, laid=built.laid)["messages"] == anthropic_messages(payload["messages"])
        release_request(session, payload)


def test_a_lent_list_never_released_is_not_shared() -> None:
    session = FakeSession()
    messages = conversation(10)
    first = lay_out_request(session, messages, copy=False).payload  # a caller that never releases
    snapshot_first = list(first["messages"])
    messages = [*messages[:-3], {"role": "user", "content": "rewritten"}]
    second = lay_out_request(session, messages, copy=False).payload
    assert second["messages"] is not first["messages"]
    assert first["messages"] == snapshot_first  # still as it was laid out
    assert second == from_scratch(session, messages, "anthropic")
    release_request(session, second)
    check(session, messages)


def test_a_layout_that_fails_leaves_the_cache_usable() -> None:
    class Failing(LayoutHost):
        fail = True

        def payload_cache_layout(self, payload: dict[str, Any], ctx: PayloadContext) -> dict[str, Any]:
            if self.fail:
                payload["messages"][-1] = {"role": "user", "content": "half-done"}
                raise RuntimeError("layout broke")
            return super().payload_cache_layout(payload, ctx)

    host = Failing()
    session = FakeSession(host=host)
    messages = conversation(10)
    try:
        lay_out_request(session, messages, copy=False)
    except RuntimeError:
        pass
    host.fail = False
    check(session, messages)


def test_a_proof_skips_one_comparison_and_never_outlives_its_call(monkeypatch: Any) -> None:
    cache = ProcessedHistory()
    messages = conversation(25)  # 100 messages: the early ones are outside the content window
    cache.normalized(messages, normalize_messages)
    cache.sync(messages)
    compared: list[int] = []
    original = ProcessedHistory._identical_prefix
    monkeypatch.setattr(ProcessedHistory, "_identical_prefix",
                        lambda self, msgs: compared.append(1) or original(self, msgs))
    messages = [*messages, {"role": "user", "content": "next"}]
    cache.normalized(messages, normalize_messages, prove=True)
    cache.sync(messages)
    assert len(compared) == 1  # the sync reused normalising's comparison
    messages[3] = {**messages[3], "content": "replaced far back"}
    cache.sync(messages)  # the proof was used up: compared again, the replacement is seen
    assert len(compared) == 2 and cache.canon[3]["content"] == "replaced far back"
    cache.normalized(messages, normalize_messages, prove=True)
    cache.forget_proof()  # the Session call ended; the host changes its list before the next
    messages[4] = {**messages[4], "content": "replaced later"}
    cache.sync(messages)
    assert cache.canon[4]["content"] == "replaced later"
    other = list(messages)
    cache.normalized(messages, normalize_messages, prove=True)
    other[5] = {**other[5], "content": "another list"}
    cache.sync(other)  # a proof holds for the list it was made for only
    assert cache.canon[5]["content"] == "another list"


def test_known_marks_are_not_trusted_after_another_sync() -> None:
    session = FakeSession()
    messages = conversation(10)
    built = lay_out_request(session, messages, copy=False)
    payload = built.payload
    laid_out = list(payload["messages"])
    # Another request on the session (another thread) syncs a different list before this
    # payload is converted: the conversion must not patch the other list's wire.
    other = list(messages)
    other[30] = {"role": "user", "content": "another list"}  # not among the marked ones
    session.message_cache.sync(other)
    assert to_anthropic(payload, laid=built.laid)["messages"] == anthropic_messages(laid_out)


def test_a_payload_changed_beyond_its_marks_is_converted_from_scratch() -> None:
    session = FakeSession()
    messages = conversation(10)
    built = lay_out_request(session, messages, copy=False)
    payload = built.payload
    for index, replacement in ((30, {"role": "user", "content": "not a result"}),
                               (29, {"role": "assistant", "content": "no calls"})):
        laid_out = list(payload["messages"])
        laid_out[index] = replacement
        got = to_anthropic({**payload, "messages": laid_out}, laid=built.laid)["messages"]
        assert got == anthropic_messages(laid_out)
    release_request(session, payload)
