"""Hand-made sessions in the native formats of real agents, for the quality bar of issue 13.

Each builder writes one transcript the way that agent records it, with the habits the recorded
real sessions show: parallel tool calls, reused call ids, errors reported as ``is_error``, as
exit codes or only as a traceback in the output, each agent's own file-writing tools (Claude
Code ``Edit``/``MultiEdit``/``Write``/``NotebookEdit``, Codex ``apply_patch`` with ``*** Update
File:`` headers, SWE-agent ``str_replace_editor create/str_replace`` and ``submit``, OpenHands
actions, Aider edit blocks), user decisions, continuation summaries, images, and one very long
tool result. All text is invented for these tests.

A scenario is a list of steps, rendered per format:

- ``User(text, image=False)``: the user typed it (optionally with a screenshot attached);
- ``Injected(text, kind)``: the agent put it in the user role (a reminder, its own summary);
- ``Act(say, calls)``: one assistant message, ``calls`` made in parallel, each ``Call`` with its
  result, ``error`` when the agent's format marks the failure (``is_error``/exit code) and
  ``exit`` the exit code where the format records one;
- ``Say(text)``: an assistant reply without calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

# --- the steps ------------------------------------------------------------------------------


@attrs.frozen
class User:
    text: str
    image: bool = False


@attrs.frozen
class Injected:
    text: str
    kind: str = "system-reminder"


@attrs.frozen
class Call:
    name: str
    args: dict[str, Any]
    result: str
    error: bool = False
    exit: int | None = None


@attrs.frozen
class Act:
    say: str
    calls: tuple[Call, ...]


@attrs.frozen
class Say:
    text: str


Step = User | Injected | Act | Say

# --- shared ingredients (invented) ----------------------------------------------------------

REQUEST = (
    "Add retries with exponential backoff to the webhook sender in src/hooks/sender.py; "
    "keep the public send_event() signature unchanged and make the tests in tests/test_sender.py pass."
)
DECISION = "Don't use the requests library for this, use httpx instead. Never edit files under gen/."
SECOND_REQUEST = (
    "Also log each retry at warning level with the attempt number and the event id, "
    "for example evt_5521 attempt 2."
)
LAST_REQUEST = (
    "Good. Now write a short CHANGELOG entry for the retry work under version 2.4.1 "
    "and tell me which settings a deployer may need to change."
)
TRACEBACK = (
    "============================= test session starts ==============================\n"
    "collected 6 items\n\n"
    "tests/test_sender.py ..F...                                              [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "___________________________ test_retries_on_timeout ____________________________\n"
    "Traceback (most recent call last):\n"
    '  File "tests/test_sender.py", line 48, in test_retries_on_timeout\n'
    "    assert transport.calls == 3\n"
    "AssertionError: expected 3 delivery attempts for evt_7731, got 1\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_sender.py::test_retries_on_timeout - AssertionError: expected 3 delivery\n"
    "1 failed, 5 passed in 0.41s\n"
)
IMPORT_ERROR = (
    "Traceback (most recent call last):\n"
    '  File "src/hooks/sender.py", line 3, in <module>\n'
    "    from hooks.backoff import delays\n"
    "ModuleNotFoundError: No module named 'hooks.backoff'\n"
)
TOOL_ERROR = "Error: file not found: src/hooks/retry_policy.py"
SENDER_OLD = "def send_event(event, url):\n    return _post(url, event)\n"
SENDER_NEW = (
    "def send_event(event, url):\n"
    "    for attempt, delay in enumerate(delays(3), 1):\n"
    "        try:\n"
    "            return _post(url, event)\n"
    "        except httpx.TimeoutException:\n"
    "            log.warning('retrying %s attempt %d', event.id, attempt)\n"
    "            time.sleep(delay)\n"
    "    return _post(url, event)\n"
)
BACKOFF = "def delays(n, base=0.5):\n    return [base * 2 ** i for i in range(n)]\n"

EXPECTED_ERRORS = (
    "AssertionError: expected 3 delivery attempts for evt_7731, got 1",
    "ModuleNotFoundError: No module named 'hooks.backoff'",
)


def source_file(name: str, lines: int = 40) -> str:
    """An invented Python module of about ``lines`` lines (filler a read returns)."""
    body = [f"# {name}: part of the invented payments service used by these tests"]
    for i in range(lines):
        body.append(f"def helper_{i}(value, scale={i}):  # computes the {name} figure number {i}")
        body.append(f"    return (value * scale + {i * 7}) % {997 + i}")
    return "\n".join(body) + "\n"


def long_log(lines: int = 1_500) -> str:
    """One very long result: a build log with a warning near the end."""
    out = [f"[{i:05d}] compiling module payments.part{i % 40} ... ok" for i in range(lines)]
    out.insert(lines - 5, "warning: deprecated option --legacy-tls used by scripts/deploy.sh")
    return "\n".join(out) + "\n"


def filler(make: Callable[[str, int], Act], count: int, start: int = 0) -> list[Step]:
    return [make(f"src/payments/module_{i}.py", i) for i in range(start, start + count)]


def coding_steps(read: Callable[[str, int], Act], parallel: Act, failing: Act, fixing: list[Step],
                 broken_import: Act, long_one: Act, done: list[Step], *, summary: Step | None = None,
                 image: bool = True, fill: int = 24) -> list[Step]:
    """The common shape: request and decision, parallel reads, a failing run, edits, an import
    error, a long result, filler, an agent's summary (when it has one), a second request, more
    filler, the last request and the reply."""
    steps: list[Step] = [
        User(REQUEST),
        Injected("<system-reminder>Remember to keep the todo list current.</system-reminder>"),
        parallel,
        User(DECISION, image=image),
        failing,
        *fixing,
        broken_import,
        long_one,
        *filler(read, fill),
    ]
    if summary is not None:
        steps.append(summary)
    steps += [User(SECOND_REQUEST), *done, *filler(read, fill // 2, start=fill), User(LAST_REQUEST),
              Say("Here is the CHANGELOG entry for 2.4.1 and the settings to review.")]
    return steps


# --- rendering per format ---------------------------------------------------------------------

COMPACTED = "(compacted)"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def _ids(prefix: str, reuse: bool) -> Callable[[int], str]:
    return (lambda _n: f"{prefix}_0") if reuse else (lambda n: f"{prefix}_{n}")


def claude_code(steps: list[Step], path: Path) -> Path:
    records: list[dict[str, Any]] = []
    parent: str | None = None
    counter = [0]

    def record(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        counter[0] += 1
        uuid = f"u-{counter[0]:04d}"
        records.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s-eval",
                        "timestamp": "2026-02-01T10:00:00Z", "cwd": "/work/payments", "isSidechain": False,
                        "userType": "external", "version": "2.1.9", "message": message, **extra})
        parent = uuid

    n = 0
    for step in steps:
        if isinstance(step, User):
            content: Any = step.text
            if step.image:
                content = [{"type": "text", "text": step.text},
                           {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]
            record("user", {"role": "user", "content": content})
        elif isinstance(step, Injected):
            if step.kind == "summary":
                records.append({"type": "system", "subtype": "compact_boundary", "uuid": f"cb-{n}",
                                "parentUuid": None, "sessionId": "s-eval", "content": "Conversation compacted",
                                "compactMetadata": {"trigger": "auto", "preTokens": 150_000}})
                record("user", {"role": "user", "content": step.text}, isCompactSummary=True)
            else:
                record("user", {"role": "user", "content": [{"type": "text", "text": step.text}]}, isMeta=True)
        elif isinstance(step, Say):
            n += 1
            record("assistant", {"id": f"msg_{n}", "type": "message", "role": "assistant",
                                 "model": "claude-opus-4-6", "content": [{"type": "text", "text": step.text}]})
        else:
            n += 1
            ident = f"msg_{n}"
            base = {"id": ident, "type": "message", "role": "assistant", "model": "claude-opus-4-6"}
            record("assistant", {**base, "content": [{"type": "text", "text": step.say}]})
            # One record per block; the result of each parallel call arrives before the next
            # block of the same response (message.id), as Claude Code writes them. Results of
            # failed calls come as a list of text blocks.
            for k, call in enumerate(step.calls):
                tid = f"toolu_{n:03d}{k}"
                record("assistant", {**base, "content": [{"type": "tool_use", "id": tid, "name": call.name,
                                                          "input": call.args}]})
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": call.result}
                if call.error:
                    block["is_error"] = True
                    block["content"] = [{"type": "text", "text": call.result}]
                record("user", {"role": "user", "content": [block]}, toolUseResult=call.result[:100])
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _chat_messages(steps: list[Step], ids: Callable[[int], str], result: Callable[[Call], str],
                   image_part: bool = False) -> list[dict[str, Any]]:
    """OpenAI chat messages (tau-bench, Hermes Agent, SWE-agent 1.x histories)."""
    out: list[dict[str, Any]] = []
    n = 0
    for step in steps:
        if isinstance(step, User):
            content: Any = step.text
            if step.image and image_part:
                content = [{"type": "text", "text": step.text},
                           {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]
            out.append({"role": "user", "content": content})
        elif isinstance(step, Injected):
            out.append({"role": "user", "content": step.text})
        elif isinstance(step, Say):
            out.append({"role": "assistant", "content": step.text})
        else:
            calls = []
            for call in step.calls:
                calls.append({"id": ids(n), "type": "function",
                              "function": {"name": call.name, "arguments": json.dumps(call.args)}})
                n += 1
            out.append({"role": "assistant", "content": step.say, "tool_calls": calls})
            out.extend({"role": "tool", "tool_call_id": c["id"], "name": call.name, "content": result(call)}
                       for c, call in zip(calls, step.calls))
    return out


def hermes_agent(steps: list[Step], path: Path) -> Path:
    def result(call: Call) -> str:
        if call.name == "terminal":
            return json.dumps({"output": call.result, "exit_code": call.exit or 0, "error": None})
        return json.dumps({"error": call.result} if call.error else {"content": call.result})

    messages = _chat_messages(steps, _ids("call", False), result, image_part=True)
    # The session was saved mid-turn: the newest assistant message's call is still in flight.
    messages.append({"role": "assistant", "content": "Checking the deploy settings.", "tool_calls": [
        {"id": "call_pending", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "deploy/settings.toml"})}}]})
    doc = {"session_id": "20260201_100000_ev", "model": "gpt-5.3-codex", "base_url": "https://llm.invalid",
           "platform": "cli", "session_start": "2026-02-01T10:00:00", "last_updated": "2026-02-01T11:00:00",
           "system_prompt": "You are Hermes, a coding agent.", "tools": [], "message_count": len(messages),
           "messages": messages}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def tau_bench(runs: list[list[Step]], path: Path) -> Path:
    docs = []
    for task, steps in enumerate(runs):
        traj = [{"role": "system", "content": "# Airline policy\nYou help airline customers. " * 20},
                *_chat_messages(steps, _ids("call_xk2", True), lambda c: c.result)]
        docs.append({"task_id": task, "trial": 0, "reward": 1.0, "info": {}, "traj": traj})
    path.write_text(json.dumps(docs), encoding="utf-8")
    return path


def swe_agent_1x(steps: list[Step], path: Path) -> Path:
    history: list[dict[str, Any]] = [{"role": "system", "content": "SETTING: you are an autonomous programmer.",
                                      "agent": "main", "message_type": "system_prompt"}]
    for message in _chat_messages(steps, _ids("call", True), lambda c: c.result):
        item = dict(message)
        item["agent"] = "main"
        if item["role"] == "tool":
            item["tool_call_ids"] = [item.pop("tool_call_id")]
            item["message_type"] = "observation"
        elif item["role"] == "assistant":
            item["message_type"] = "action"
            item["thought"] = item["content"]
        else:
            item["message_type"] = "user"
        history.append(item)
    doc = {"trajectory": [{"action": "ls", "observation": "", "thought": ""}], "history": history,
           "info": {"exit_status": "submitted", "submission": "diff --git a/src/hooks/sender.py"},
           "replay_config": json.dumps({"agent": {"model": {"name": "claude-sonnet-4-20250514"}}})}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def swe_agent_0x(steps: list[Step], path: Path) -> Path:
    """Text ReAct: actions in the assistant's text, observations as user turns, a demonstration."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "SETTING: you are an autonomous programmer.", "agent": "primary"},
        {"role": "user", "content": "Here is a demonstration of how to correctly accomplish this task.\n"
         + "DISCUSSION\nLet me open the file.\n```\nopen src/a.py\n```\n" * 120, "agent": "primary", "is_demo": True},
    ]
    for step in steps:
        if isinstance(step, User) and len(history) == 2:
            history.append({"role": "user", "content": step.text, "agent": "primary"})
        elif isinstance(step, Act):
            for call in step.calls:
                command = call.args.get("command") or f"open {call.args.get('path', '')}"
                history.append({"role": "assistant", "content": f"{step.say}\n```\n{command}\n```",
                                "agent": "primary"})
                history.append({"role": "user", "content": f"{call.result}\n(Open file: n/a)\nbash-$",
                                "agent": "primary"})
        elif isinstance(step, Say):
            history.append({"role": "assistant", "content": step.text, "agent": "primary"})
    doc = {"environment": "swe_main", "trajectory": [], "history": history, "info": {"exit_status": "submitted"}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _response_items(steps: list[Step], custom: set[str]) -> list[dict[str, Any]]:
    """Responses API items (Codex rollouts, ``openai-responses`` inputs)."""
    items: list[dict[str, Any]] = []
    n = 0
    for step in steps:
        if isinstance(step, User):
            parts: list[dict[str, Any]] = [{"type": "input_text", "text": step.text}]
            if step.image:
                parts.append({"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"})
            items.append({"type": "message", "role": "user", "content": parts})
        elif isinstance(step, Injected) and step.kind == "summary":
            items.append({"type": COMPACTED, "message": step.text})
        elif isinstance(step, Injected):
            items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": step.text}]})
        elif isinstance(step, Say):
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": step.text}]})
        else:
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": step.say}]})
            ids = []
            for call in step.calls:
                n += 1
                ids.append(f"call_{n}")
                if call.name in custom:
                    items.append({"type": "custom_tool_call", "name": call.name, "call_id": ids[-1],
                                  "input": call.args["input"]})
                else:
                    items.append({"type": "function_call", "name": call.name, "call_id": ids[-1],
                                  "arguments": json.dumps(call.args)})
            for ident, call in zip(ids, step.calls):
                if call.name in custom:
                    items.append({"type": "custom_tool_call_output", "call_id": ident, "output": call.result})
                elif call.exit is not None:
                    output = json.dumps({"output": call.result, "metadata": {"exit_code": call.exit,
                                                                             "duration_seconds": 0.4}})
                    items.append({"type": "function_call_output", "call_id": ident, "output": output})
                else:
                    items.append({"type": "function_call_output", "call_id": ident, "output": call.result})
    return items


def codex(steps: list[Step], path: Path) -> Path:
    lines: list[dict[str, Any]] = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "sess-eval", "cwd": "/work/payments",
                                                                "cli_version": "0.98.0",
                                                                "base_instructions": {"text": "You are Codex."}}},
        {"timestamp": "t", "type": "turn_context", "payload": {"model": "gpt-5-codex", "cwd": "/work/payments"}},
    ]
    for item in _response_items(steps, {"apply_patch"}):
        if item["type"] == COMPACTED:
            lines.append({"timestamp": "t", "type": "compacted", "payload": {"message": item["message"]}})
        else:
            lines.append({"timestamp": "t", "type": "response_item", "payload": item})
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n", encoding="utf-8")
    return path


def responses(steps: list[Step], path: Path) -> Path:
    items = [item if item["type"] != COMPACTED else
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": item["message"]}]}
             for item in _response_items(steps, set())]
    doc = {"model": "gpt-4.1", "instructions": "You are a coding assistant.", "input": items}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def openhands(steps: list[Step], path: Path) -> Path:
    events: list[dict[str, Any]] = [{"id": 0, "timestamp": "t", "source": "agent", "message": "You are OpenHands.",
                                     "action": "system", "args": {"content": "You are OpenHands.", "tools": []}}]

    def add(event: dict[str, Any]) -> None:
        events.append({"id": len(events), "timestamp": "t", **event})

    n = 0
    for step in steps:
        if isinstance(step, User):
            add({"source": "user", "message": step.text, "action": "message",
                 "args": {"content": step.text, "image_urls": [f"data:image/png;base64,{PNG}"] if step.image else None}})
        elif isinstance(step, Injected):
            add({"source": "user", "message": "", "observation": "recall", "content": step.text, "extras": {}})
        elif isinstance(step, Say):
            add({"source": "agent", "message": step.text, "action": "message", "args": {"content": step.text}})
        else:
            n += 1
            calls = [{"id": f"toolu_{n}_{k}", "type": "function",
                      "function": {"name": c.name, "arguments": json.dumps(c.args)}} for k, c in enumerate(step.calls)]
            response = {"id": f"chatcmpl-{n}", "choices": [{"message": {"role": "assistant", "content": step.say,
                                                                        "tool_calls": calls}}]}
            for k, call in enumerate(step.calls):
                action = "run" if call.name == "execute_bash" else "edit" if call.args.get("command") != "view" else "read"
                add({"source": "agent", "message": step.say, "action": action, "args": dict(call.args),
                     "tool_call_metadata": {"function_name": call.name, "tool_call_id": f"toolu_{n}_{k}",
                                            "model_response": response, "total_calls_in_response": len(calls)}})
            for k, call in enumerate(step.calls):
                kind = "error" if call.error and call.exit is None else "run" if call.name == "execute_bash" else "edit"
                extras: dict[str, Any] = {"metadata": {"exit_code": call.exit}} if call.exit is not None else {}
                add({"source": "agent", "message": "", "observation": kind, "content": call.result, "extras": extras,
                     "tool_call_metadata": {"function_name": call.name, "tool_call_id": f"toolu_{n}_{k}",
                                            "model_response": response, "total_calls_in_response": len(calls)}})
    path.write_text(json.dumps(events), encoding="utf-8")
    return path


def atif(steps: list[Step], path: Path) -> Path:
    out: list[dict[str, Any]] = [{"step_id": 1, "timestamp": "t", "source": "system", "message": "You are a terminal agent."}]
    n = 0
    for step in steps:
        number = len(out) + 1
        if isinstance(step, (User, Injected)):
            out.append({"step_id": number, "timestamp": "t", "source": "user", "message": step.text})
        elif isinstance(step, Say):
            out.append({"step_id": number, "timestamp": "t", "source": "agent", "message": step.text})
        else:
            calls, results = [], []
            for call in step.calls:
                n += 1
                calls.append({"tool_call_id": f"call_{n}", "function_name": call.name, "arguments": call.args})
                results.append({"source_call_id": f"call_{n}", "content": call.result})
            out.append({"step_id": number, "timestamp": "t", "source": "agent", "message": step.say,
                        "tool_calls": calls, "observation": {"results": results}})
    doc = {"schema_version": "ATIF-v1.4", "session_id": "run-eval",
           "agent": {"name": "terminus", "version": "2.0", "model_name": "claude-sonnet-4"}, "steps": out}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def aider(steps: list[Step], path: Path) -> Path:
    """Aider's Markdown: ``####`` user lines, ``>`` tool output, edit blocks in the replies."""
    lines = ["", "# aider chat started at 2026-02-01 10:00:00", "", "> aider --model gpt-4o", "> Aider v0.80.0", ""]
    for step in steps:
        if isinstance(step, User):
            lines += [f"#### {line}" for line in step.text.splitlines()] + [""]
        elif isinstance(step, Say):
            lines += [step.text, ""]
        elif isinstance(step, Act):
            lines += [step.say, ""]
            for call in step.calls:
                if "path" in call.args and "new" in call.args:
                    lines += [call.args["path"], "```python", "<<<<<<< SEARCH", call.args.get("old", ""), "=======",
                              call.args["new"], ">>>>>>> REPLACE", "```", "", f"> Applied edit to {call.args['path']}", ""]
                else:
                    lines += [f"> {line}" if line else ">" for line in call.result.splitlines()] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


__all__ = [
    "BACKOFF", "DECISION", "EXPECTED_ERRORS", "IMPORT_ERROR", "LAST_REQUEST", "REQUEST", "SECOND_REQUEST",
    "SENDER_NEW", "SENDER_OLD", "TOOL_ERROR", "TRACEBACK", "Act", "Call", "Injected", "Say", "User",
    "aider", "atif", "claude_code", "codex", "coding_steps", "filler", "hermes_agent", "long_log",
    "openhands", "responses", "source_file", "swe_agent_0x", "swe_agent_1x", "tau_bench",
]
