"""Large JSON Lines files of each streaming transcript format, written by hand-made generators
(shared by the streaming test and tests/benchmarks/bench_readers.py).

``lines(fmt, n)`` yields ``n`` records of a plausible session: turns of a request, a reply (in
chunks where the format streams them), tool calls with results of a few hundred bytes, and the
format's bookkeeping records between them. ``quiet(fmt, n)`` is mostly records that never become
messages (dropped or merged): reading it must take little memory whatever ``n`` is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

OUTPUT = "line of tool output " * 12  # ~240 bytes
TS = "2025-11-01T10:00:00.000Z"


def _gemini_stream(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return [{"type": "init", "timestamp": TS, "session_id": "s", "model": "gemini-2.5-pro"}]
    return [
        {"type": "message", "timestamp": TS, "role": "user", "content": f"request {i}"},
        *({"type": "message", "timestamp": TS, "role": "assistant", "content": f"chunk {k} ", "delta": True}
          for k in range(3)),
        {"type": "tool_use", "timestamp": TS, "tool_name": "run_shell_command", "tool_id": f"t{i}",
         "parameters": {"command": f"ls {i}"}},
        {"type": "tool_result", "timestamp": TS, "tool_id": f"t{i}", "status": "success", "output": OUTPUT},
    ]


def _gemini_quiet(i: int) -> list[dict[str, Any]]:
    return [{"type": "message", "timestamp": TS, "role": "assistant", "content": f"chunk {i} ", "delta": True}]


def _gemini_recording(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return [{"sessionId": "s", "projectHash": "p", "startTime": TS, "lastUpdated": TS}]
    call = {"id": f"c{i}", "name": "read_file", "args": {"path": f"f{i}.py"}, "status": "success", "timestamp": TS,
            "result": [{"functionResponse": {"id": f"c{i}", "name": "read_file", "response": {"output": OUTPUT}}}]}
    return [
        {"id": f"u{i}", "timestamp": TS, "type": "user", "content": [{"text": f"request {i}"}]},
        {"id": f"g{i}", "timestamp": TS, "type": "gemini", "content": "", "model": "gemini-2.5-flash"},
        {"id": f"g{i}", "timestamp": TS, "type": "gemini", "content": "Reading.", "toolCalls": [call]},
        {"$set": {"lastUpdated": TS}},
    ]


def _gemini_recording_quiet(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return [{"sessionId": "s", "projectHash": "p", "startTime": TS, "lastUpdated": TS}]
    return [{"$set": {"lastUpdated": TS, "summary": f"step {i}"}}]


def _qwen(i: int) -> list[dict[str, Any]]:
    base = {"sessionId": "s", "cwd": "/w", "version": "0.1.0", "timestamp": TS}
    return [
        {**base, "uuid": f"u{i}", "parentUuid": f"t{i - 1}" if i else None, "type": "user",
         "message": {"role": "user", "parts": [{"text": f"request {i}"}]}},
        {**base, "uuid": f"a{i}", "parentUuid": f"u{i}", "type": "assistant", "model": "qwen3-coder",
         "message": {"role": "model", "parts": [{"text": "Reading."},
                                                 {"functionCall": {"id": f"c{i}", "name": "read_file",
                                                                   "args": {"path": f"f{i}"}}}]}},
        {**base, "uuid": f"s{i}", "parentUuid": f"a{i}", "type": "system", "subtype": "ui_telemetry",
         "systemPayload": {"uiEvent": {"event.name": "api_response"}}},
        {**base, "uuid": f"t{i}", "parentUuid": f"s{i}", "type": "tool_result",
         "message": {"role": "user", "parts": [{"functionResponse": {"id": f"c{i}", "name": "read_file",
                                                                      "response": {"output": OUTPUT}}}]}},
    ]


def _qwen_quiet(i: int) -> list[dict[str, Any]]:
    return [{"sessionId": "s", "cwd": "/w", "version": "0.1.0", "timestamp": TS, "uuid": f"s{i}",
             "parentUuid": f"s{i - 1}" if i else None, "type": "system", "subtype": "ui_telemetry",
             "systemPayload": {"uiEvent": {"event.name": "api_response", "duration_ms": i}},
             "message": None}]


def _goose(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return [{"working_dir": "/w", "description": "bench", "message_count": 0, "total_tokens": 0}]
    return [
        {"role": "user", "created": 1, "content": [{"type": "text", "text": f"request {i}"}]},
        {"role": "assistant", "created": 2, "content": [
            {"type": "text", "text": "Running."},
            {"type": "toolRequest", "id": f"t{i}", "toolCall": {"status": "success", "value": {
                "name": "developer__shell", "arguments": {"command": f"ls {i}"}}}}]},
        {"role": "user", "created": 3, "content": [
            {"type": "toolResponse", "id": f"t{i}", "toolResult": {"status": "success", "value": [
                {"type": "text", "text": OUTPUT}]}}]},
    ]


def _goose_quiet(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return [{"working_dir": "/w", "description": "bench", "message_count": 0, "total_tokens": 0}]
    return [{"role": "assistant", "created": 2, "content": [{"type": "text", "text": f"ui note {i}"}],
             "metadata": {"userVisible": True, "agentVisible": False}}]


def _codex(i: int) -> list[dict[str, Any]]:
    def env(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": TS, "type": kind, "payload": payload}

    if i == 0:
        return [env("session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.46.0",
                                     "base_instructions": {"text": "You are Codex."}})]
    return [
        env("response_item", {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": f"request {i}"}]}),
        env("event_msg", {"type": "user_message", "message": f"request {i}"}),
        env("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{i}",
                              "arguments": json.dumps({"command": ["ls", str(i)]})}),
        env("response_item", {"type": "function_call_output", "call_id": f"c{i}",
                              "output": json.dumps({"output": OUTPUT, "metadata": {"exit_code": 0}})}),
        env("event_msg", {"type": "token_count", "info": {"total": i}}),
    ]


def _codex_quiet(i: int) -> list[dict[str, Any]]:
    if i == 0:
        return _codex(0)
    return [{"timestamp": TS, "type": "event_msg", "payload": {"type": "token_count", "info": {"total": i}}}]


def _openhands(i: int) -> list[dict[str, Any]]:
    response = {"id": f"r{i}", "choices": [{"message": {"role": "assistant", "content": "Running.", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "execute_bash",
                                                         "arguments": json.dumps({"command": "ls"})}}]}}]}
    meta = {"function_name": "execute_bash", "tool_call_id": f"c{i}", "model_response": response,
            "total_calls_in_response": 1}
    return [
        {"id": 4 * i, "source": "user", "action": "message", "args": {"content": f"request {i}"}, "message": ""},
        {"id": 4 * i + 1, "source": "agent", "action": "run", "args": {"command": "ls"},
         "tool_call_metadata": meta, "message": ""},
        {"id": 4 * i + 2, "source": "agent", "observation": "run", "content": OUTPUT,
         "extras": {"metadata": {"exit_code": 0}}, "tool_call_metadata": meta, "message": ""},
        {"id": 4 * i + 3, "source": "environment", "observation": "agent_state_changed", "content": "",
         "extras": {"agent_state": "running"}, "message": ""},
    ]


def _openhands_quiet(i: int) -> list[dict[str, Any]]:
    return [{"id": i, "source": "environment", "observation": "agent_state_changed", "content": "",
             "extras": {"agent_state": "running"}, "message": ""}]


GENERATORS: dict[str, tuple[Callable[[int], list[dict[str, Any]]], Callable[[int], list[dict[str, Any]]]]] = {
    "gemini-cli (stream-json)": (_gemini_stream, _gemini_quiet),
    "gemini-cli (recording)": (_gemini_recording, _gemini_recording_quiet),
    "qwen-code": (_qwen, _qwen_quiet),
    "goose": (_goose, _goose_quiet),
    "codex": (_codex, _codex_quiet),
    "openhands-jsonl": (_openhands, _openhands_quiet),
}


def _take(make: Callable[[int], list[dict[str, Any]]], n: int) -> Iterator[str]:
    made = 0
    i = 0
    while made < n:
        for record in make(i):
            if made >= n:
                return
            yield json.dumps(record)
            made += 1
        i += 1


def lines(fmt: str, n: int) -> Iterator[str]:
    """``n`` records of a plausible session in ``fmt`` (a key of ``GENERATORS``)."""
    return _take(GENERATORS[fmt][0], n)


def quiet(fmt: str, n: int) -> Iterator[str]:
    """``n`` records that are almost all dropped or merged (after the format's first record)."""
    first = list(_take(GENERATORS[fmt][0], 1))
    return iter([*first, *_take(GENERATORS[fmt][1], n - 1)]) if fmt != "qwen-code" else _qwen_quiet_stream(n)


def _qwen_quiet_stream(n: int) -> Iterator[str]:
    # One request and reply first (the detector wants Gemini Content), then bookkeeping only.
    yield from _take(_qwen, 2)
    yield from _take(_qwen_quiet, n - 2)
