"""``hermes-ctx convert --to anthropic`` of parallel tool calls (QA finding).

The writer put each tool result in a user message of its own, so the results of a turn's
second and third calls were not in the message right after the calls: every such body was
rejected by the Messages API (examples/transcripts/coding_session.json: 204 validator problems).
"""

from __future__ import annotations

import json
from typing import Any

from hermes_core.transcript_format import Transcript
from hermes_core.transcripts import read_transcript, write_transcript

import validators_anthropic


def _call(ident: str, path: str) -> dict[str, Any]:
    return {"id": ident, "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": path})}}


MESSAGES = [
    {"role": "user", "content": "read both and grep"},
    {"role": "assistant", "content": "Reading.", "tool_calls": [_call("c1", "a.py"), _call("c2", "b.py"),
                                                                _call("c3", "c.py")]},
    {"role": "tool", "tool_call_id": "c1", "content": "a"},
    {"role": "tool", "tool_call_id": "c2", "content": "no such file", "_is_error": True},
    {"role": "tool", "tool_call_id": "c3", "content": "c"},
    {"role": "assistant", "content": None, "tool_calls": [_call("c4", "d.py")]},
    {"role": "tool", "tool_call_id": "c4", "content": "d"},
    {"role": "assistant", "content": "Done."},
]


def test_the_results_of_parallel_calls_go_in_one_user_message_right_after_them() -> None:
    body = json.loads(write_transcript(Transcript(messages=MESSAGES, model="claude-x"), "anthropic"))
    body["max_tokens"] = 1024
    validators_anthropic.check(body)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    results = body["messages"][2]["content"]
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in results] == [
        ("c1", False), ("c2", True), ("c3", False)]


def test_grouped_results_read_back_as_the_same_messages() -> None:
    text = write_transcript(Transcript(messages=MESSAGES, model="claude-x"), "anthropic")
    back = read_transcript(text, "anthropic")
    assert [(m["role"], m.get("tool_call_id"), m.get("_is_error", False)) for m in back.messages] == [
        (m["role"], m.get("tool_call_id"), m.get("_is_error", False)) for m in MESSAGES]
