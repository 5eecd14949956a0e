"""OpenAI Responses API (issue 28): histories of Responses items become the canonical history with
nothing lost, ``Session.request(api="responses")`` gives valid ``client.responses.create``
keyword arguments (checked by ``validators_openai_responses``), untouched items go back
byte-identical, and other providers' requests count what they cannot carry."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import Session, as_message, normalize_messages
from hermes_core.pairing import pairing_problems
from hermes_core.responses import responses_input, responses_tool
from hermes_core.responses_items import ORIGINAL_KEY

import validators_openai_responses as vr
from hypothesis_budget import examples

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


def _session(tmp_path: Path, window: int = 200_000, **kwargs: Any) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5", provider="openai",
                        context_length=window, persist=False, env={}, **kwargs)


def reasoning(n: int, text: str = "plan") -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"gAAAA-secret-{n}==",
            "summary": [{"type": "summary_text", "text": text}] if text else []}


def call(n: int, args: str | None = None) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "read_file",
            "arguments": args if args is not None else json.dumps({"path": f"f{n}.py"}),
            "status": "completed"}


def output(n: int, text: str | None = None) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"call_{n}",
            "output": text if text is not None else f"contents of f{n}.py"}


def said(text: str, n: int = 0) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def asked(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


HISTORY = [
    asked("read f1 and f2"),
    reasoning(1), call(1), call(2),        # one turn: reasoning, two parallel calls
    output(2), output(1),                   # answered out of order: paired by call_id
    reasoning(2, ""),
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "python release"}},
    said("Both read; 3.13 is out.", 1),
    {"role": "user", "content": "thanks"},  # an easy input message: Chat-shaped already
]


# --- in ------------------------------------------------------------------------------------------


def test_items_become_one_assistant_message_per_turn_paired_by_call_id() -> None:
    canon = normalize_messages(HISTORY)
    assert [m["role"] for m in canon] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    first = canon[1]
    assert [c["id"] for c in first["tool_calls"]] == ["call_1", "call_2"]
    assert first["_reasoning"] == "plan"
    assert first[ORIGINAL_KEY] == HISTORY[1:4]
    assert canon[4]["content"] == "[web_search_call omitted: python release]\n\nBoth read; 3.13 is out."
    assert canon[4][ORIGINAL_KEY] == HISTORY[6:9]
    assert pairing_problems(canon, allow_pending=False) == []
    assert normalize_messages(canon) is canon  # canonical messages are left alone
    # every item is kept, in order, once
    kept = [item for m in canon for item in m.get(ORIGINAL_KEY, [m])]
    assert kept == HISTORY


def test_role_less_items_never_reach_chat_or_anthropic_as_they_are(tmp_path: Path) -> None:
    session = _session(tmp_path)
    chat = session.request(HISTORY, tools=TOOLS)
    for message in chat["messages"]:
        assert "role" in message and "type" not in message
        assert not any(k.startswith("_") for k in message)
    assert pairing_problems(chat["messages"][1:], allow_pending=False) == []
    claude = session.request(HISTORY, tools=TOOLS, provider="anthropic")
    kinds = [b["type"] for m in claude["messages"] for b in m["content"]]
    assert kinds.count("tool_use") == 2 and kinds.count("tool_result") == 2
    warned = {w.kind: w for w in session.warnings}
    left_out = warned["responses_items_not_sent"].details
    assert left_out == {"reasoning_items_dropped": 2, "server_side_items_replaced_by_placeholders": 1}


# --- out -----------------------------------------------------------------------------------------


def test_a_responses_request_sends_untouched_items_back_byte_identical(tmp_path: Path) -> None:
    session = _session(tmp_path, max_tokens=999)
    original = copy.deepcopy(HISTORY)
    kwargs = session.request(HISTORY, tools=TOOLS, api="responses")
    vr.check(kwargs)
    assert json.dumps(kwargs["input"]) == json.dumps(original)
    assert HISTORY == original  # nothing mutated
    assert kwargs["instructions"] == session.system_prompt
    assert kwargs["tools"] == [{"type": "function", "name": "read_file", "description": "Read a file.",
                                "parameters": TOOLS[0]["function"]["parameters"], "strict": False}]
    assert kwargs["prompt_cache_key"].startswith("hermes-")
    assert kwargs["max_output_tokens"] == 999
    assert session.warnings == []
    with pytest.raises(ValueError, match="responses"):
        session.request(HISTORY, api="assistants")


def test_tool_definitions_in_every_shape_become_responses_function_tools() -> None:
    anthropic = {"name": "grep", "description": "Search.", "input_schema": {"type": "object"}}
    assert responses_tool(anthropic) == {"type": "function", "name": "grep", "description": "Search.",
                                         "parameters": {"type": "object"}, "strict": False}
    native = {"type": "function", "name": "x", "parameters": None, "strict": True, "source": "mcp"}
    assert responses_tool(native) == {"type": "function", "name": "x", "parameters": None, "strict": True}
    assert responses_tool({"type": "web_search"}) == {"type": "web_search"}


def test_a_chat_history_becomes_a_valid_responses_request(tmp_path: Path) -> None:
    session = _session(tmp_path)
    history = [
        {"role": "user", "content": [{"type": "text", "text": "what is in this image?"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]},
        {"role": "assistant", "content": None, "_reasoning": "let me look", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "no such file", "_is_error": True},
        {"role": "assistant", "content": "It shows a cat."},
    ]
    kwargs = session.request(history, tools=TOOLS, api="responses")
    vr.check(kwargs)
    items = kwargs["input"]
    assert items[0]["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,iVBO",
                                      "detail": "auto"}
    assert items[1] == {"type": "function_call", "call_id": "c1", "name": "read_file",
                        "arguments": '{"path":"a"}'}
    assert items[2]["output"] == "[tool error] no such file"  # the flag, visible to the model
    details = next(w for w in session.warnings if w.kind == "responses_conversion").details
    assert details == {"reasoning_of_another_api_dropped": 1, "error_flags_written_into_the_output": 1}


def test_a_changed_message_is_rebuilt_and_its_reasoning_kept(tmp_path: Path) -> None:
    canon = normalize_messages(HISTORY)
    changed = [dict(m) for m in canon]
    changed[1]["tool_calls"] = [{**changed[1]["tool_calls"][0], "function": {
        "name": "read_file", "arguments": '{"path":"f1.py","x":"[trimmed]"}'}},
        changed[1]["tool_calls"][1]]
    changed[2] = {**changed[2], "content": "[output trimmed]"}
    items, conversion = responses_input(changed)
    assert items[1] == HISTORY[1]  # the reasoning item, byte-identical, still before its call
    assert items[2] == {"type": "function_call", "call_id": "call_1", "name": "read_file",
                        "arguments": '{"path":"f1.py","x":"[trimmed]"}', "id": "fc_1"}
    assert items[3] == HISTORY[3]
    assert items[4] == {"type": "function_call_output", "call_id": "call_2", "output": "[output trimmed]"}
    assert conversion.counts == {"changed_messages_rebuilt": 2}
    vr.check({"input": items})


def test_a_reasoning_item_left_with_nothing_to_precede_is_dropped_and_counted() -> None:
    canon = normalize_messages([asked("hi"), reasoning(9), asked("still there?")])
    items, conversion = responses_input(canon)
    assert [i.get("type") for i in items] == ["message", "message"]
    assert conversion.counts == {"reasoning_items_without_a_following_item_dropped": 1}


def test_the_validator_has_teeth() -> None:
    good = {"input": copy.deepcopy(HISTORY)}
    assert vr.problems(good) == []
    broken = [
        [output(1), call(1)],                       # output before its call
        [asked("x"), reasoning(1), output(1)],      # reasoning followed by an output
        [asked("x"), reasoning(1)],                 # reasoning at the end
        [call(1)],                                  # call never answered
        [{**call(1), "_responses": []}, output(1)],  # metadata leaked
        [{"role": "tool", "content": "x"}],         # a Chat role
        [{"role": "user", "content": ""}],          # empty content
        [said("x"), call(1), call(1), output(1)],   # a call_id used twice
    ]
    for items in broken:
        assert vr.problems({"input": items}), items


# --- SDK objects ----------------------------------------------------------------------------------


def test_an_sdk_response_becomes_history_with_nothing_lost() -> None:
    types = pytest.importorskip("openai.types.responses")
    output_items = [reasoning(1), said("Reading.", 1), call(1), call(2)]
    response = types.Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5",
        "output": output_items, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    })
    message = as_message(response)
    assert message[ORIGINAL_KEY] == [item.model_dump(exclude_none=True) for item in response.output]
    assert message["content"] == "Reading." and len(message["tool_calls"]) == 2
    # the items themselves (as a host appends response.output) give the same message
    assert normalize_messages(list(response.output)) == [message]
    history = [asked("go"), *response.output, output(1), output(2)]
    items, conversion = responses_input(normalize_messages(history))
    assert items[1:5] == message[ORIGINAL_KEY] and conversion.counts == {}


# --- every entry point, random histories ---------------------------------------------------------

DEEP = '{"a":' * 10_000 + "1" + "}" * 10_000


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    n = 0
    for turn in range(draw(st.integers(1, 6))):
        items.append(asked(f"task {turn} " + "words " * draw(st.integers(0, 200))))
        for _step in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                items.append(reasoning(n, draw(st.sampled_from(["", "think", "plan " * 50]))))
            if draw(st.booleans()):
                items.append(said("checking " * draw(st.integers(1, 30)), n))
            ids = list(range(n, n + draw(st.integers(1, 3))))
            n = ids[-1] + 1
            for i in ids:
                items.append(call(i, DEEP if draw(st.integers(0, 9)) == 0 else None))
            for i in draw(st.permutations(ids)):
                items.append(output(i, "line\n" * draw(st.integers(0, 2000))))
        if draw(st.booleans()):
            items.append(reasoning(n))
            n += 1
        items.append(said(f"done {turn}", n))
        n += 1
    return items


def _last_turn(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tail: list[dict[str, Any]] = []
    for item in reversed(items):
        if item.get("role") == "user" or item.get("type") == "function_call_output":
            break
        tail.insert(0, item)
    return tail


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories(), window=st.sampled_from([8_000, 16_000, 64_000, 400_000]))
def test_random_responses_histories_always_give_valid_requests(
    tmp_path_factory: pytest.TempPathFactory, history: list[dict[str, Any]], window: int
) -> None:
    session = _session(tmp_path_factory.mktemp("s"), window=window)
    last = _last_turn(history)
    for messages in (
        history,
        session.before_request(history, tools=TOOLS),
        session.compress(history, tools=TOOLS).messages,
    ):
        kwargs = session.request(messages, tools=TOOLS, api="responses")
        vr.check(kwargs)
        json.dumps(kwargs)
        # the latest turn's reasoning goes out byte-identical, in its order (compaction may
        # rewrite the turn's text: a summary can be joined to the last assistant message)
        sent = [json.dumps(i) for i in kwargs["input"]]
        kept = [json.dumps(i) for i in last if i.get("type") == "reasoning"]
        assert [i for i in sent if i in kept] == kept
        if messages is history:  # untouched: the whole turn as it came, at the end
            assert sent[-len(last):] == [json.dumps(i) for i in last]
        chat = session.request(messages, tools=TOOLS)
        assert pairing_problems(chat["messages"][1:], allow_pending=False) == []
        assert all("role" in m and not any(k.startswith("_") for k in m) for m in chat["messages"])


# --- round trip ---------------------------------------------------------------------------------


def _meaning(items: list[Any]) -> list[Any]:
    """What a model reads of an input: texts, calls, outputs (ids and statuses aside)."""
    out: list[Any] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            content = item["content"]
            text = content if isinstance(content, str) else "\n\n".join(p["text"] for p in content)
            out.append((item["role"], text))
        elif kind == "function_call":
            out.append(("call", item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", item["call_id"], item["output"]))
        else:
            out.append((kind,))
    return out


def test_responses_to_chat_to_responses_loses_only_what_is_reported(tmp_path: Path) -> None:
    session = _session(tmp_path)
    chat = session.request(HISTORY, tools=TOOLS)["messages"][1:]  # the system prompt aside
    report = next(w for w in session.warnings if w.kind == "responses_items_not_sent").details
    back = session.request(chat, tools=TOOLS, api="responses")
    vr.check(back)
    assert session.warnings == []  # nothing more lost on the way back
    before = _meaning(HISTORY)
    lost = [m for m in before if m[0] in ("reasoning", "web_search_call")]
    assert len(lost) == report["reasoning_items_dropped"] + report["server_side_items_replaced_by_placeholders"]
    expected = [m for m in before if m not in lost]
    # the server-side item's placeholder line is what stands for it in the text
    expected[5] = ("assistant", "[web_search_call omitted: python release]\n\nBoth read; 3.13 is out.")
    assert _meaning(back["input"]) == expected


def test_the_left_out_count_follows_a_growing_and_a_rewritten_history() -> None:
    from hermes_core.responses import LeftOutCounter, not_sent_elsewhere

    canon = normalize_messages(HISTORY)
    counter = LeftOutCounter()
    assert counter.update(canon[:2]) == {"reasoning_items_dropped": 1}
    assert counter.update(canon) == not_sent_elsewhere(canon).counts  # appended: new ones counted
    shorter = [canon[0], {"role": "user", "content": "summary"}, *canon[2:4], canon[5]]
    assert counter.update(shorter) == {}  # rewritten before its end: counted again
    assert counter.update(canon, unchanged=1) == not_sent_elsewhere(canon).counts  # the cache's mark
    assert counter.update(canon, unchanged=0) == not_sent_elsewhere(canon).counts


def test_a_chat_session_hears_once_per_change_what_its_requests_leave_out(tmp_path: Path) -> None:
    session = _session(tmp_path)
    messages = session.before_request(HISTORY)
    session.request(messages)
    assert [w.kind for w in session.warnings] == ["responses_items_not_sent"]
    messages = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    session.request(messages)
    assert session.warnings == []  # the same items: said once
    messages = [*messages, reasoning(7), said("again", 7)]
    session.request(messages)
    assert [w.details for w in session.warnings] == [
        {"reasoning_items_dropped": 3, "server_side_items_replaced_by_placeholders": 1}]


@settings(max_examples=examples(60), deadline=None)
@given(history=histories(), edits=st.lists(st.tuples(st.sampled_from(["append", "cut", "change", "same"]),
                                                     st.integers(0, 10_000)), min_size=1, max_size=8))
def test_the_input_cache_gives_what_a_fresh_conversion_gives(
    history: list[dict[str, Any]], edits: list[tuple[str, int]]
) -> None:
    from hermes_core.responses import InputCache

    canon = normalize_messages(history)
    extra = [*normalize_messages([reasoning(900), said("tail", 900), asked("next"), reasoning(901)]),
             *REUSED[1:3]]  # a call whose id was used before, and its result
    cache = InputCache()
    messages = list(canon)
    for op, at in edits:
        if op == "append":
            messages = [*messages, extra[at % len(extra)]]
        elif op == "cut" and messages:
            messages = messages[: at % len(messages)]
        elif op == "change" and messages:
            i = at % len(messages)
            messages = [*messages[:i], {**messages[i], "content": "changed"}, *messages[i + 1:]]
        items, conversion = cache.build(messages, None)
        expected, expected_conversion = responses_input(messages)
        assert items == expected
        assert conversion.counts == expected_conversion.counts


EVERY_KIND = [
    asked("use every tool"),
    reasoning(50),
    {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c", "name": "apply_diff",
     "input": "*** Begin Patch\n*** End Patch"},
    {"type": "computer_call", "id": "cu_1", "call_id": "call_u", "status": "completed",
     "action": {"type": "click", "x": 10, "y": 20, "button": "left"}, "pending_safety_checks": []},
    {"type": "local_shell_call", "id": "ls_1", "call_id": "call_l", "status": "completed",
     "action": {"type": "exec", "command": ["ls"], "env": {}}},
    {"type": "custom_tool_call_output", "call_id": "call_c", "output": "patched"},
    {"type": "computer_call_output", "call_id": "call_u",
     "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBORw0KGgo="}},
    {"type": "local_shell_call_output", "id": "call_l", "output": "a.py\nb.py"},
    {"type": "file_search_call", "id": "fs_1", "queries": ["refund policy"], "status": "completed"},
    {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBORw0KGgo="},
    {"type": "code_interpreter_call", "id": "ci_1", "status": "completed", "code": "print(1)",
     "container_id": "cntr_1", "outputs": [{"type": "logs", "logs": "1"}]},
    {"type": "mcp_list_tools", "id": "ml_1", "server_label": "docs", "tools": []},
    {"type": "mcp_call", "id": "mc_1", "server_label": "docs", "name": "search",
     "arguments": "{}", "output": "found"},
    said("All done.", 51),
    {"type": "item_reference", "id": "msg_0"},
    asked("thanks"),
]


def test_every_documented_item_type_goes_back_as_it_came_and_elsewhere_is_counted(tmp_path: Path) -> None:
    canon = normalize_messages(EVERY_KIND)
    assert [m["role"] for m in canon] == ["user", "assistant", "tool", "tool", "tool", "assistant",
                                          "user"]  # the server-side items and the text: one turn
    calls = {c["id"]: c.get("function") or c["custom"] for c in canon[1]["tool_calls"]}
    assert calls["call_c"] == {"name": "apply_diff", "input": "*** Begin Patch\n*** End Patch"}  # Chat's custom call
    assert calls["call_u"]["name"] == "computer" and json.loads(calls["call_u"]["arguments"])["action"]["x"] == 10
    assert calls["call_l"]["name"] == "local_shell"
    assert [m.get("tool_call_id") for m in canon[2:5]] == ["call_c", "call_u", "call_l"]
    assert canon[3]["content"] == "[computer_screenshot omitted]"
    for kind in ("file_search_call omitted: refund policy", "image_generation_call", "code_interpreter_call",
                 "mcp_list_tools", "mcp_call omitted: search", "item_reference omitted: msg_0"):
        assert f"[{kind}" in canon[5]["content"]
    assert pairing_problems(canon, allow_pending=False) == []

    session = _session(tmp_path)
    kwargs = session.request(EVERY_KIND, api="responses")
    vr.check(kwargs)
    assert json.dumps(kwargs["input"]) == json.dumps(EVERY_KIND)
    chat = session.request(EVERY_KIND)
    assert pairing_problems(chat["messages"][1:], allow_pending=False) == []
    claude = session.request(EVERY_KIND, provider="anthropic")
    uses = [b["name"] for m in claude["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert uses == ["apply_diff", "computer", "local_shell"]
    left_out = next(w for w in session.warnings if w.kind == "responses_items_not_sent").details
    assert left_out == {"reasoning_items_dropped": 1, "server_side_items_replaced_by_placeholders": 6,
                        "parts_replaced_by_placeholders": 1}  # the screenshot


def test_thinking_blocks_and_flagged_part_outputs_are_counted_on_the_way_to_responses() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "redacted_thinking", "data": "xyz"},
            {"type": "text", "text": "Looking."}],
         "tool_calls": [{"id": "t1", "type": "function",
                         "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "_is_error": True, "content": [
            {"type": "text", "text": "denied"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    ]
    items, conversion = responses_input(messages)
    vr.check({"input": items})
    assert items[1] == {"role": "assistant", "content": "Looking."}
    assert items[3]["output"][0] == {"type": "input_text", "text": "[tool error]"}
    assert items[3]["output"][2]["type"] == "input_image"
    assert conversion.counts == {"reasoning_of_another_api_dropped": 2,
                                 "error_flags_written_into_the_output": 1}


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories(), window=st.sampled_from([8_000, 16_000, 400_000]))
def test_what_a_chat_session_says_it_leaves_out_is_always_the_current_count(
    tmp_path_factory: pytest.TempPathFactory, history: list[dict[str, Any]], window: int
) -> None:
    from hermes_core.responses import not_sent_elsewhere

    session = _session(tmp_path_factory.mktemp("s"), window=window)
    told: dict[str, int] = {}
    messages = normalize_messages(history)
    for step in range(4):
        if step == 2:
            messages = session.compress(messages).messages  # a rewrite before the end
        else:
            messages = session.before_request(messages)
        session.request(messages)
        for warning in session.warnings:
            if warning.kind == "responses_items_not_sent":
                told = dict(warning.details)
        assert told == not_sent_elsewhere(messages).counts or not not_sent_elsewhere(messages).counts
        messages = [*messages, *normalize_messages([reasoning(500 + step), said_item(step)]),
                    {"role": "user", "content": f"more {step}"}]


def said_item(n: int) -> dict[str, Any]:
    return said(f"step {n} done", 500 + n)


def test_parts_without_a_chat_form_are_counted_when_a_chat_request_leaves_them_out(tmp_path: Path) -> None:
    history = [
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "compare"},
            {"type": "input_image", "file_id": "file-1", "detail": "auto"},       # no Chat form
            {"type": "input_image", "image_url": "https://x.test/a.png", "detail": "low"},
            {"type": "input_file", "file_url": "https://x.test/a.pdf"}]},          # no Chat form
        call(1),
        {"type": "computer_call_output", "call_id": "call_1",
         "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"}},
    ]
    history[1] = {**call(1), "type": "computer_call", "action": {"type": "screenshot"}}
    del history[1]["name"], history[1]["arguments"]
    session = _session(tmp_path)
    chat = session.request(history)
    assert chat["messages"][1]["content"][1] == {"type": "text", "text": "[image omitted: file-1]"}
    details = next(w for w in session.warnings if w.kind == "responses_items_not_sent").details
    assert details == {"parts_replaced_by_placeholders": 3}
    vr.check(session.request(history, api="responses"))


REUSED = [
    {"role": "user", "content": "list twice"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_0", "content": "a.py"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_0", "content": "a.py b.py"},
]


def test_a_reused_call_id_is_renamed_with_its_result(tmp_path: Path) -> None:
    session = _session(tmp_path)
    kwargs = session.request(REUSED, api="responses")
    vr.check(kwargs)
    ids = [(i["type"], i["call_id"]) for i in kwargs["input"] if "call_id" in i]
    assert ids == [("function_call", "call_0"), ("function_call_output", "call_0"),
                   ("function_call", "call_0__r2"), ("function_call_output", "call_0__r2")]
    details = next(w for w in session.warnings if w.kind == "responses_conversion").details
    assert details == {"reused_call_ids_renamed": 2}
