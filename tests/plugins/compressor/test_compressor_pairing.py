"""Pairing through the compressor: reused ids, parallel calls, pending calls (issue 13).

Providers reuse tool-call ids (gpt-4o in tau-bench, SWE-agent 1.x). A history valid by the
provider rule must come out valid by the same rule at every window, the one-liner of a
demoted result must describe the call that result answers, and the newest assistant
message's calls in flight must come back untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.host import PluginHost
from hermes_core.pairing import is_valid_pairing, match_results, pairing_problems
from hermes_plugins.compressor.framing import MERGED_KEY
from hermes_plugins.compressor.prune import prune_tool_results

from compressor_support import assistant, call, make_engine, snapshot, system, tool, user
from hypothesis_budget import examples


def test_demotion_describes_the_call_each_result_answers_when_ids_repeat() -> None:
    # One assistant message, two parallel calls sharing the id "x"; a later turn reuses it too.
    messages = [
        system(), user("look around"),
        assistant("", call("x", "read_file", path="src/first.py"), call("x", "read_file", path="src/second.py")),
        tool("x", "first body\n" * 60), tool("x", "second body\n" * 60),
        assistant("", call("x", "search_files", pattern="needle")),
        tool("x", "match line\n" * 60),
        user("and now?"), assistant("reading"), user("go on"), assistant("ok"),
    ]
    out, _ = prune_tool_results(messages, protect_tail_count=4)
    assert "src/first.py" in out[3]["content"] and "src/second.py" not in out[3]["content"]
    assert "src/second.py" in out[4]["content"] and "src/first.py" not in out[4]["content"]
    assert out[6]["content"].startswith("[search_files]")


def test_an_id_reused_across_turns_is_described_by_each_turn_s_call() -> None:
    messages = [
        user("start"), assistant("", call("c1", "read_file", path="a.py")), tool("c1", "A\n" * 200),
        assistant("", call("c1", "read_file", path="b.py")), tool("c1", "B\n" * 200),
    ]
    answers, _ = match_results(messages)
    assert answers == {2: (1, 0), 4: (3, 0)}
    out, _ = prune_tool_results([*messages, user("x"), assistant("y"), user("z")], protect_tail_count=3)
    assert "a.py" in out[2]["content"] and "b.py" in out[4]["content"]


# --- property: valid histories with reused ids stay valid at every window -------------------

IDS = ["call_0", "call_1", "toolu_1", "x"]


@st.composite
def reused_id_histories(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [system()]
    rounds = draw(st.integers(2, 14))
    for r in range(rounds):
        if r == 0 or draw(st.integers(0, 3)) == 0:
            messages.append(user(f"request {r}: " + "please fix the parser " * draw(st.integers(1, 40))))
        group = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3))
        calls = [call(ident, "terminal", command=f"run {r}.{k}") for k, ident in enumerate(group)]
        messages.append(assistant(draw(st.sampled_from(["", "working"])), *calls))
        order = draw(st.permutations(range(len(group))))
        size = draw(st.sampled_from([50, 400, 3_000, 12_000]))
        for k in order:
            messages.append(tool(group[k], f"output of {r}.{k}\n" + "log line\n" * (size // 9)))
        if draw(st.booleans()):
            messages.append(assistant(f"done with round {r}"))
    if draw(st.booleans()):
        messages.append(user("what next?"))
    return messages


def last_user(messages: list[dict[str, Any]]) -> Any:
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), None)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reused_id_histories(), st.sampled_from([4_000, 8_000, 16_000, 32_000, 64_000]), st.booleans())
def test_valid_histories_with_reused_ids_stay_valid_when_compressed(
    messages: list[dict[str, Any]], window: int, pending: bool
) -> None:
    if pending:
        messages = [*messages, assistant("", call("x", "terminal", command="next"), call("x", "terminal"))]
    assert pairing_problems(messages) == []
    before = snapshot(messages)
    engine = make_engine(window)
    out = engine.compress(messages, force=True)
    assert snapshot(messages) == before
    assert pairing_problems(out) == []
    if pending:
        assert out[-1]["tool_calls"] == messages[-1]["tool_calls"]
    # Kept tail results are never dropped: the verbatim tail after the summary holds as many
    # results as the same stretch of the input.
    index = engine.last_compression_report["summary"]["index"]
    if index is not None:
        tail = out[index:] if out[index].get(MERGED_KEY) else out[index + 1:]
        if tail and tail[0]["role"] == "user" and tail[0]["content"] == last_user(messages) \
                and out[index - 1]["role"] == "user":
            # The kept newest request opens the tail when the head ends on a user message (so
            # the two never touch, issue 29); the verbatim tail follows it.
            tail = tail[1:]
        if tail:
            assert [m["role"] for m in tail] == [m["role"] for m in messages[-len(tail):]]
    assert engine.last_compression_report["tool_pairs_repaired"] == 0
    again = make_engine(window).compress(out, force=True)
    assert is_valid_pairing(again)


# --- the reply passed to after_response keeps its calls ---------------------------------------


@pytest.fixture(scope="module")
def shared_host() -> PluginHost:
    return PluginHost.create(env={})


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def open_session(host: PluginHost, home: Path, window: int) -> Session:
    return Session.open(
        cwd=home, home=home, model="test-model", provider="openai", context_length=window,
        host=host, env={}, persist=False,
    )


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reused_id_histories(), st.sampled_from([8_000, 16_000, 32_000]),
       st.lists(st.sampled_from(IDS), min_size=1, max_size=3))
def test_the_reply_comes_back_with_the_same_calls(
    shared_host: PluginHost, home: Path, messages: list[dict[str, Any]], window: int, ids: list[str]
) -> None:
    session = open_session(shared_host, home, window)
    reply = assistant("", *[call(i, "terminal", command=f"next {k}") for k, i in enumerate(ids)])
    sent = [*messages, reply]
    # Usage over the threshold: compression fires after this response.
    out = session.after_response({"prompt_tokens": session.engine.threshold_tokens + 1}, sent)
    assert out[-1]["tool_calls"] == reply["tool_calls"]
    assert out[-1]["content"] == reply["content"]
    assert pairing_problems(out) == []
    # The host answers the calls; the next request is valid with every result paired.
    answered = [*out, *(tool(i, f"result {k}") for k, i in enumerate(ids))]
    assert pairing_problems(answered, allow_pending=False) == []


def test_after_response_with_the_documented_call_shape_keeps_the_reply(shared_host: PluginHost, home: Path) -> None:
    session = open_session(shared_host, home, 16_000)
    messages = [user("refactor src/")]
    for i in range(30):
        messages += [assistant("", call("call_1", "read_file", path=f"src/m{i}.py")),
                     tool("call_1", f"# m{i}\n" + "x = 1\n" * 300)]
    reply = assistant("reading one more", call("call_2", "read_file", path="src/last.py"))
    out = session.after_response({"prompt_tokens": 15_000}, messages + [reply])
    assert session.engine.compression_count == 1
    assert out[-1] == reply
    assert "(tool call removed)" not in json.dumps(out)
