"""Lists on their way to a provider are checked and repaired (issue 19), incrementally."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session, pairing
from hermes_core.host import PluginHost
from hermes_core.pairing import PairingGuard, is_valid_pairing


def call(ident: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": "terminal", "arguments": "{}"}}


def asst(*ids: str, text: str = "") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if ids:
        message["tool_calls"] = [call(i) for i in ids]
    return message


def result(ident: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": ident, "content": text}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost.create(env={})


@pytest.fixture
def session(host: PluginHost, tmp_path: Path) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, model="m", provider="openai",
                        context_length=200_000, host=host, env={}, persist=False)


SEPARATED = [user("run it"), asst("a"), user("hurry"), result("a", "done")]


def test_before_request_repairs_an_invalid_list_and_warns(session: Session) -> None:
    out = session.before_request(SEPARATED)
    assert is_valid_pairing(out)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user"]
    warnings = [w for w in session.warnings if w.kind == "tool_pairs_repaired"]
    assert len(warnings) == 1 and "moved back" in warnings[0].message
    assert warnings[0].details["where"] == "Session.before_request"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_request_repairs_before_building_the_payload(session: Session, provider: str) -> None:
    payload = session.request([user("go"), result("ghost"), asst("b"), user("again")], provider=provider)
    sent = payload["messages"]
    assert is_valid_pairing(sent, allow_pending=False)
    assert not any(m.get("role") == "tool" for m in sent)
    assert any(w.kind == "tool_pairs_repaired" for w in session.warnings)


def test_a_valid_list_comes_back_as_itself_without_warnings(session: Session) -> None:
    messages = [user("go"), asst("a"), result("a")]
    assert session.before_request(messages) is messages
    assert session.request(messages)["messages"]
    assert not session.warnings


def test_an_appended_turn_is_checked_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = pairing.pairing_problems

    def spy(messages: Any, **kwargs: Any) -> list[str]:
        seen.append(len(messages))
        return real(messages, **kwargs)

    monkeypatch.setattr(pairing, "pairing_problems", spy)
    guard = PairingGuard()
    history = [user("start")]
    for i in range(200):
        history += [asst(f"c{i}"), result(f"c{i}")]
    assert guard.check(history) is history
    assert seen == [401]
    longer = [*history, asst("x", "y"), result("x")]
    assert guard.check(longer) is longer
    assert seen[-1] == 4  # the last group of the old list and the new messages, not 403
    assert guard.check(longer) is longer and len(seen) == 2  # unchanged: not checked again
    done = [*longer, result("y"), user("next")]
    assert guard.check(done) is done and seen[-1] == 4  # from the group with the pending call
    # A list that does not extend the remembered one (a compaction, an edit) is checked whole.
    fresh = [user("start"), asst("z"), result("z")]
    assert guard.check(fresh) is fresh and seen[-1] == 3


def test_a_host_resending_the_same_broken_prefix_is_warned_once(session: Session) -> None:
    broken = [*SEPARATED]
    session.before_request(broken)
    session.before_request([*broken, asst(text="ok")])
    warnings = [w for w in session.warnings if w.kind == "tool_pairs_repaired"]
    assert len(warnings) == 1
