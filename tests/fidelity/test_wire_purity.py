"""The wire converters are pure: the same payload gives the same arguments whatever ran before.

``to_openai`` / ``to_anthropic`` / ``sdk_kwargs`` used to reuse the message cache of the last
request this thread built (a thread-local); now a caller passes it (``laid=``) or nothing is
reused. Checked: results do not change with the order of calls or with other sessions'
requests in between, and a bare conversion never touches a session's message cache.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.history import ProcessedHistory
from hermes_core.payload import assemble_payload
from hermes_core.sdk import sdk_kwargs
from hermes_core.wire import to_anthropic, to_openai

from hypothesis_budget import examples

TEXT = st.text(alphabet="ab \n{}\"", max_size=8)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, then rounds of an assistant reply (text, or calls with their results)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": draw(TEXT) or "hi"}]
    for round_ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            ids = [f"call_{round_}_{i}" for i in range(draw(st.integers(1, 2)))]
            out.append({"role": "assistant", "content": draw(TEXT), "tool_calls": [
                {"id": i, "type": "function",
                 "function": {"name": "read", "arguments": draw(st.sampled_from(['{"b":1,"a":2}', "{}", "not json"]))}}
                for i in ids]})
            out.extend({"role": "tool", "tool_call_id": i, "content": draw(TEXT),
                        **({"_is_error": True} if draw(st.booleans()) else {})} for i in ids)
        else:
            out.append({"role": "assistant", "content": draw(TEXT) or "ok"})
        out.append({"role": "user", "content": draw(TEXT) or "next"})
    return out


def payload_of(messages: list[dict[str, Any]], provider: str) -> dict[str, Any]:
    return assemble_payload("be brief", messages, provider=provider, model="m")


def converted(payload: dict[str, Any]) -> tuple[Any, ...]:
    notes_o: dict[str, int] = {}
    notes_a: dict[str, int] = {}
    return (to_openai(payload, notes_o), notes_o, to_anthropic(payload, notes_a), notes_a,
            sdk_kwargs(payload))


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Session]]:
    home = tmp_path_factory.mktemp("home")
    opened = [Session.open(cwd=str(home), home=str(home), env={}, persist=False, provider=provider,
                           model="claude-sonnet-4") for provider in ("anthropic", "openai")]
    yield opened
    for session in opened:
        session.close()


@settings(max_examples=examples(40), deadline=None)
@given(first=conversations(), second=conversations(), provider=st.sampled_from(["anthropic", "openai"]),
       order=st.permutations(range(3)))
def test_conversions_do_not_depend_on_what_ran_before(
    sessions: list[Session], first: list[dict[str, Any]], second: list[dict[str, Any]],
    provider: str, order: list[int],
) -> None:
    payload = payload_of(first, provider)
    kept = copy.deepcopy(payload)
    alone = converted(payload)
    steps = [
        lambda: sessions[0].request(first),  # a session's request of the same messages
        lambda: sessions[1].request(second),  # another session's request of others
        lambda: converted(payload_of(second, provider)),  # another payload converted
    ]
    for index in order:
        steps[index]()
        assert converted(payload) == alone
    assert payload == kept  # converting never changes the payload


def test_a_bare_conversion_never_reads_a_session_cache(
    sessions: list[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"},
                {"role": "user", "content": "again"}]
    session = sessions[0]
    session.request(messages)  # leaves the session's cache in the state of these messages
    payload = session.payload(messages)
    used: list[str] = []
    for name in ("openai_messages", "anthropic_messages"):
        original = getattr(ProcessedHistory, name)
        monkeypatch.setattr(ProcessedHistory, name,
                            lambda self, *a, _n=name, _o=original, **k: used.append(_n) or _o(self, *a, **k))
    to_openai(payload)
    to_anthropic(payload)
    assert used == []
    session.request(messages)  # the request path passes its cache explicitly and uses it
    assert used == ["anthropic_messages"]


def test_the_request_path_gives_what_the_bare_conversion_gives(sessions: list[Session]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for turn in range(6):
        messages += [{"role": "assistant", "content": f"reply {turn}"},
                     {"role": "user", "content": f"turn {turn}"}]
        for session in sessions:
            wire = session.request(messages)
            bare = sdk_kwargs(session.payload(messages), max_tokens=session.max_tokens)
            assert wire == bare

