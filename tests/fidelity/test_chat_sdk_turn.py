"""The one-call turn (``Session.create``) against the OpenAI SDK when the model calls a custom
tool (free-text input) and the history holds deprecated function calling: the tool gets the
call's name and text (before: an empty name and no input), and every request is valid."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from hermes_core import Session  # noqa: E402

import validators_openai_chat  # noqa: E402
from fake_llm_servers import json_reply, running  # noqa: E402

PATCH = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
TOOLS = [{"type": "custom", "custom": {"name": "apply_patch", "description": "Apply a patch."}}]


def _reply(message: dict[str, Any]) -> Any:
    return json_reply(200, {
        "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "gpt-5",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305},
    })


def _patching_session(tmp_path: Path, ran: list[tuple[str, Any]]) -> Session:
    """A session whose tools record each call in ``ran`` and answer "patched 1 file"."""

    def invoke(name: str, arguments: dict[str, Any]) -> str:
        ran.append((name, arguments))
        return "patched 1 file"

    return Session.open(cwd=tmp_path, home=tmp_path, persist=False, env={}, invoke=invoke,
                        model="gpt-5", provider="openai")


def test_a_custom_tool_call_is_answered_with_its_name_and_text(tmp_path: Path) -> None:
    ran: list[tuple[str, Any]] = []
    session = _patching_session(tmp_path, ran)
    history = [{"role": "user", "content": "What was the weather?"},
               {"role": "assistant", "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}},
               {"role": "function", "name": "get_weather", "content": "12C"},
               {"role": "assistant", "content": "12C in Oslo."},
               {"role": "user", "content": "Now set x to 2 in a.py."}]
    before = copy.deepcopy(history)
    call = {"id": "call_p1", "type": "custom", "custom": {"name": "apply_patch", "input": PATCH}}
    with running("openai") as server:
        server.push(_reply({"role": "assistant", "content": None, "tool_calls": [call]}),
                    _reply({"role": "assistant", "content": "Done."}))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        turn = session.create(client, history, tools=TOOLS)
        bodies = [r.json() for r in server.requests]
    assert history == before
    assert turn.finished and turn.content == "Done."
    assert ran == [("apply_patch", {"input": PATCH})]
    for body in bodies:
        validators_openai_chat.check(body)
        assert not any(m["role"] in ("function", "user") and m.get("content") == "12C" for m in body["messages"])
    sent = bodies[1]["messages"]
    assert sent[-2]["tool_calls"][0]["custom"] == call["custom"]
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_p1", "content": "patched 1 file"}
    assert json.dumps(TOOLS[0]) in json.dumps(bodies[0]["tools"])


def test_a_responses_custom_tool_call_runs_the_tool_with_its_text(tmp_path: Path) -> None:
    """Before, the Responses custom call came out a function call with the patch as its
    "arguments": the turn answered the model with a not-JSON error and never ran the tool."""
    from fake_llm_servers import responses_reply

    ran: list[tuple[str, Any]] = []
    session = _patching_session(tmp_path, ran)
    call = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p1", "name": "apply_patch",
            "input": PATCH, "status": "completed"}
    answer = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    with running("responses") as server:
        server.push(responses_reply([call]), responses_reply([answer]))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        turn = session.create(client, [{"role": "user", "content": "Set x to 2."}], tools=TOOLS, api="responses")
        bodies = [r.json() for r in server.requests]
    assert turn.finished and ran == [("apply_patch", {"input": PATCH})]
    outputs = [i for i in bodies[1]["input"] if i.get("type") == "custom_tool_call_output"]
    assert outputs == [{"type": "custom_tool_call_output", "call_id": "call_p1", "output": "patched 1 file"}]
