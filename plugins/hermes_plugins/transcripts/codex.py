"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}``: ``session_meta`` (id, cwd, cli version, base
instructions: the system prompt) and ``turn_context`` (model) go to the transcript fields;
``response_item`` payloads are Responses API items (converted like ``openai-responses``);
``compacted`` holds Codex's own summary (marked ``_summary: "codex"``); ``event_msg`` lines
repeat what the items hold for the UI and are dropped by event type. Older rollouts (a first
line with ``instructions``, then bare items and ``record_type: state`` lines) read too. A
``compacted`` line with no summary text (remote compaction: only ``replacement_history``) and
encrypted ``compaction`` items are counted, never turned into empty summaries.

``codex exec --json`` events (``thread.started``, ``item.completed`` with ``agent_message``,
``reasoning``, ``command_execution``, ``file_change``, ``mcp_tool_call``, ``web_search`` items,
``turn.completed`` usage) read as one conversation; the prompt itself is not in that stream.
Before 0.44 ``codex exec --json`` wrote a config line, a ``{"prompt"}`` line and protocol events
``{id, msg: {type}}``: ``exec_command_begin``/``_end``, ``patch_apply_begin``/``_end``,
``mcp_tool_call_begin``/``_end`` become a call and its result, ``agent_message`` the reply,
``agent_reasoning`` its ``_reasoning``; deltas and lifecycle events are dropped by type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    make_tool_call,
)
from hermes_plugins.transcripts.common import (
    head_objects,
    listed,
    mapping,
    mark_user_text,
    object_records,
    reads,
    tag,
)
from hermes_plugins.transcripts.responses import ITEM_TYPES, ItemConverter

NAME = "codex"
ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: ``codex exec --json`` events (0.4x+): threads, turns and the items of a turn.
EXEC_EVENTS = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                         "item.updated", "item.completed", "error"})


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    # Later versions add record types: any {type, payload} envelope counts, some must be known.
    enveloped = [r for r in records if isinstance(r.get("type"), str) and "payload" in r]
    if len(enveloped) >= len(records) * 0.9 and any(tag(r.get("type")) in ENVELOPES for r in enveloped):
        return Detection.accept(0.95, "{timestamp, type, payload} envelopes (session_meta, response_item ...)")
    if all(tag(r.get("type")) in EXEC_EVENTS for r in records) and any(
            r.get("type") in ("thread.started", "item.completed") for r in records):
        return Detection.accept(0.9, "codex exec --json events (thread.started, item.completed ...)")
    events = [r for r in records if isinstance(mapping(r.get("msg")).get("type"), str)]
    if events and len(events) >= (len(records) - 2) * 0.9:  # a config line and a prompt line may lead
        return Detection.accept(0.85, "codex exec --json events of before 0.44 ({id, msg: {type ...}})")
    first = records[0]
    if "instructions" in first and "id" in first and all(
        tag(r.get("type")) in ITEM_TYPES or r.get("record_type") for r in records[1:]
    ):
        return Detection.accept(0.9, "a legacy rollout: session header, then Responses items")
    return Detection.refuse("no Codex envelopes (session_meta/response_item with payload)")


def read(source: TranscriptSource) -> Transcript:
    head = head_objects(source)
    if head and tag(head[0].get("type")) in EXEC_EVENTS:
        return _read_exec_events(source)
    if head and any(isinstance(r.get("msg"), Mapping) for r in head[:3]):
        return _read_exec_legacy(source)
    rollout = _Rollout(source.report)
    add_item = rollout.converter.add
    for lineno, record in object_records(source):
        kind = tag(record.get("type"))
        payload = record.get("payload")
        # Most records are response items: read here, without a call per record.
        if kind == "response_item" and isinstance(payload, Mapping) and payload.get("type") not in _COMPACTION_ITEMS:
            add_item(payload)
        else:
            rollout.add(lineno, record, kind, payload)
    return rollout.transcript(source)


#: Response items that hold an encrypted compaction (nothing readable: dropped, counted).
_COMPACTION_ITEMS = ("compaction", "compaction_summary")
#: The envelopes ``_Rollout._envelope`` reads.
_READ_ENVELOPES = frozenset({"session_meta", "turn_context", "compacted"})


class _Rollout:
    """A rollout file read record by record: ``{timestamp, type, payload}`` envelopes, or the
    legacy form (a session header line, then bare Responses items)."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.converter = ItemConverter(report)
        self.metadata: dict[str, Any] = {}
        self.compactions: list[dict[str, Any]] = []
        self.model: str | None = None
        self.system_prompt: str | None = None

    def add(self, lineno: int, record: Mapping[str, Any], kind: str | None, payload: Any) -> None:
        """Any record but a response item in an envelope (``read`` takes those itself)."""
        report = self.report
        if kind in _READ_ENVELOPES and isinstance(payload, Mapping) and self._envelope(kind, payload):
            return
        if kind == "response_item" and mapping(payload).get("type") in _COMPACTION_ITEMS:
            report.changed("encrypted_compaction_dropped")
            report.dropped("item:compaction")
        elif kind == "event_msg":
            event = payload.get("type") if isinstance(payload, Mapping) else None
            report.dropped(f"event_msg:{event}")
        elif lineno == 1 and "instructions" in record and "payload" not in record:
            if isinstance(record.get("instructions"), str):
                self.system_prompt = record["instructions"] or None
            self.metadata["session_id"] = record.get("id")
            report.absorbed("legacy_session_header")
        elif record.get("record_type") == "state":
            report.dropped("legacy_state")
        elif kind in ITEM_TYPES:
            self.converter.add(record)
        else:
            report.dropped(f"unknown:{kind}")

    def _envelope(self, kind: str | None, payload: Mapping[str, Any]) -> bool:
        """Read an envelope this reader takes in; whether it was one."""
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = self.model or payload["model"]
            self.report.absorbed("turn_context")
        elif kind == "compacted":
            self._compacted(payload)
        else:
            return False
        return True

    def _session_meta(self, payload: Mapping[str, Any]) -> None:
        for key in ("id", "cwd", "cli_version", "originator", "model_provider", "source"):
            if payload.get(key) is not None:
                self.metadata.setdefault("session_id" if key == "id" else key, payload[key])
        base = payload.get("base_instructions") or payload.get("instructions")
        if isinstance(base, Mapping):
            base = base.get("text")
        if isinstance(base, str) and self.system_prompt is None:
            self.system_prompt = base
        self.report.absorbed("session_meta")

    def _compacted(self, payload: Mapping[str, Any]) -> None:
        report = self.report
        text = payload.get("message")
        replaced = payload.get("replacement_history")
        self.converter._open = None
        if isinstance(replaced, list):
            # The history the model continued from; the items it replaced are above in the file.
            self.compactions.append({"replacement_items": len(replaced), "summary": bool(text)})
        if isinstance(text, str) and text.strip():
            self.converter.messages.append({"role": "user", "content": text, "_summary": "codex"})
            report.converted()
            report.relabelled("marked_summary:codex")
        else:  # remote compaction: no summary text in the file, only the new history
            report.absorbed("compacted_without_summary_text")

    def transcript(self, source: TranscriptSource) -> Transcript:
        converter = self.converter
        system_prompt = self.system_prompt
        if converter.system_prompt and system_prompt is None:
            system_prompt = converter.system_prompt
        if self.compactions:
            self.metadata["compactions"] = self.compactions
        return source.transcript(converter.finish(), system_prompt=system_prompt, model=self.model,
                                 metadata=self.metadata)


def _exec_item(item: Mapping[str, Any], out: list[dict[str, Any]], reasoning: list[str],
               report: ReportBuilder) -> str:
    """One completed ``codex exec --json`` item as messages; returns how it was counted."""
    kind = item.get("type")
    ident = str(item.get("id") or "")
    call: dict[str, Any] | None = None
    result: dict[str, Any] = {"role": "tool", "tool_call_id": ident, "content": ""}
    if kind == "agent_message":
        message: dict[str, Any] = {"role": "assistant", "content": str(item.get("text") or "")}
        if reasoning:
            message["_reasoning"] = "\n\n".join(reasoning)
            reasoning.clear()
        out.append(message)
        return "converted"
    if kind == "reasoning":
        if item.get("text"):
            reasoning.append(str(item["text"]))
            report.changed("reasoning_kept_as_metadata")
            return "merged"
        return "dropped"
    if kind == "command_execution":
        call = make_tool_call(ident, "shell", {"command": item.get("command")})
        result["content"] = str(item.get("aggregated_output") or "")
        code = item.get("exit_code")
        failed = (isinstance(code, int) and code != 0) or item.get("status") in ("failed", "declined")
    elif kind == "file_change":
        call = make_tool_call(ident, "apply_patch", {"changes": item.get("changes")})
        result["content"] = str(item.get("status") or "")
        failed = item.get("status") == "failed"
    elif kind == "mcp_tool_call":
        call = make_tool_call(ident, f"{item.get('server') or ''}.{item.get('tool') or ''}".strip("."),
                              item.get("arguments"))
        outcome = mapping(item.get("result"))
        error = mapping(item.get("error"))
        texts = [str(c.get("text") or "") for c in listed(outcome.get("content")) if isinstance(c, Mapping)]
        result["content"] = "\n".join(texts) or str(error.get("message") or "")
        failed = bool(error) or item.get("status") == "failed"
    elif kind == "web_search":
        # The search results never reach the file: the call stays, its result is repaired as missing.
        call = make_tool_call(ident, "web_search", {"query": item.get("query")})
        result = {}
        failed = False
    else:
        return "dropped"
    assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    if reasoning:
        assistant["_reasoning"] = "\n\n".join(reasoning)
        reasoning.clear()
    out.append(assistant)
    if result:
        if failed:
            result["_is_error"] = True
        out.append(result)
    return "converted"


def _read_exec_events(source: TranscriptSource) -> Transcript:
    report = source.report
    out: list[dict[str, Any]] = []
    reasoning: list[str] = []
    metadata: dict[str, Any] = {}
    for _lineno, event in object_records(source):
        kind = event.get("type")
        if kind == "item.completed" and isinstance(event.get("item"), Mapping):
            item = event["item"]
            how = _exec_item(item, out, reasoning, report)
            if how == "converted":
                report.converted()
            elif how == "merged":
                report.merged("reasoning_into_assistant_message")
            elif item.get("type") == "error":
                metadata.setdefault("errors", []).append(item.get("message"))
                report.absorbed("error_item")
            else:
                report.dropped(f"item:{item.get('type')}")
        elif kind in ("item.started", "item.updated", "turn.started"):
            report.dropped(kind)  # the completed item (or the turn's end) carries the same
        elif kind == "thread.started":
            metadata["thread_id"] = event.get("thread_id")
            report.absorbed("thread.started")
        elif kind in ("turn.completed", "turn.failed", "error"):
            metadata.setdefault("turns", []).append(
                {k: event[k] for k in ("type", "usage", "error", "message") if k in event})
            report.absorbed(kind)
        else:
            report.dropped(f"unknown:{kind}")
    if reasoning:
        out.append({"role": "assistant", "content": "", "_reasoning": "\n\n".join(reasoning)})
        report.changed("assistant_message_added_for_trailing_reasoning")
    return source.transcript(out, metadata=metadata)


#: Begin events of a legacy exec stream: the call; the matching end event is its result.
_BEGINS = {"exec_command_begin": "shell", "patch_apply_begin": "apply_patch", "mcp_tool_call_begin": "",
           "web_search_begin": "web_search"}
_ENDS = frozenset({"exec_command_end", "patch_apply_end", "mcp_tool_call_end"})


def _legacy_result(msg: Mapping[str, Any]) -> tuple[str, bool]:
    kind = msg.get("type")
    if kind == "exec_command_end":
        text = msg.get("aggregated_output")
        if not isinstance(text, str):
            text = "".join(str(msg.get(k) or "") for k in ("stdout", "stderr"))
        code = msg.get("exit_code")
        return text, isinstance(code, int) and code != 0
    if kind == "patch_apply_end":
        text = "".join(str(msg.get(k) or "") for k in ("stdout", "stderr"))
        return text, msg.get("success") is False
    outcome = mapping(msg.get("result"))
    if "Err" in outcome:
        return str(outcome["Err"]), True
    ok = mapping(outcome.get("Ok"))
    texts = [str(c.get("text") or "") for c in listed(ok.get("content")) if isinstance(c, Mapping)]
    return "\n".join(texts), bool(ok.get("isError") or ok.get("is_error"))


def _with_reasoning(message: dict[str, Any], reasoning: list[str]) -> dict[str, Any]:
    """``message`` with the reasoning read since the last reply (then forgotten), if any."""
    if reasoning:
        message["_reasoning"] = "\n\n".join(reasoning)
        reasoning.clear()
    return message


def _legacy_call(kind: str, msg: Mapping[str, Any], ident: str) -> dict[str, Any]:
    """The tool call a ``*_begin`` event announces."""
    if kind == "mcp_tool_call_begin":
        invocation = mapping(msg.get("invocation"))
        name = f"{invocation.get('server') or ''}.{invocation.get('tool') or ''}".strip(".")
        args: Any = invocation.get("arguments")
    else:
        name = _BEGINS[kind]
        args = {k: msg[k] for k in ("command", "cwd", "changes", "query") if k in msg}
    return make_tool_call(ident, name, args)


def _read_exec_legacy(source: TranscriptSource) -> Transcript:
    """``codex exec --json`` before 0.44: a config line, a ``{"prompt"}`` line, then protocol
    events ``{id, msg: {type, ...}}`` (the same ``EventMsg`` a rollout's ``event_msg`` holds)."""
    report = source.report
    out: list[dict[str, Any]] = []
    reasoning: list[str] = []
    metadata: dict[str, Any] = {}
    model = None
    prompt: str | None = None
    for lineno, record in object_records(source):
        msg = record.get("msg")
        if not isinstance(msg, Mapping):
            if isinstance(record.get("prompt"), str):
                prompt = record["prompt"]
                out.append({"role": "user", "content": prompt})
                report.converted()
            elif lineno <= 2:
                metadata.update({k: v for k, v in record.items() if isinstance(v, (str, int, float, bool))})
                model = model or (record["model"] if isinstance(record.get("model"), str) else None)
                report.absorbed("exec_config")
            else:
                report.dropped("unknown_record")
            continue
        kind = tag(msg.get("type"))
        ident = str(msg.get("call_id") or "")
        if kind == "agent_message":
            out.append(_with_reasoning({"role": "assistant", "content": str(msg.get("message") or "")}, reasoning))
            report.converted()
        elif kind == "agent_reasoning" and msg.get("text"):
            reasoning.append(str(msg["text"]))
            report.changed("reasoning_kept_as_metadata")
            report.merged("reasoning_into_assistant_message")
        elif kind == "user_message" and msg.get("message") != prompt:
            out.append(mark_user_text({"role": "user", "content": str(msg.get("message") or "")}, report))
            report.converted()
        elif kind in _BEGINS:
            call = _legacy_call(kind, msg, ident)
            out.append(_with_reasoning({"role": "assistant", "content": None, "tool_calls": [call]}, reasoning))
            report.converted()
        elif kind in _ENDS:
            text, failed = _legacy_result(msg)
            result: dict[str, Any] = {"role": "tool", "tool_call_id": ident, "content": text}
            if failed:
                result["_is_error"] = True
            out.append(result)
            report.converted()
        elif kind in ("token_count", "task_complete", "error"):
            metadata.setdefault("events", []).append(
                {k: v for k, v in msg.items() if isinstance(v, (str, int, float, bool, Mapping))})
            report.absorbed(f"event:{kind}")
        else:  # deltas, task_started, web_search_end (its results are not in the stream) ...
            report.dropped(f"event:{kind}")
    if reasoning:
        out.append({"role": "assistant", "content": "", "_reasoning": "\n\n".join(reasoning)})
        report.changed("assistant_message_added_for_trailing_reasoning")
    return source.transcript(out, model=model, metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="Codex CLI rollout JSONL (~/.codex/sessions/.../rollout-*.jsonl) and codex exec --json events",
    versions="Codex CLI (Rust): header+items and enveloped rollouts; exec --json before and since 0.44",
    detect=detect,
    read=read,
)
