"""Cline and Roo Code tasks: ``tasks/<id>/api_conversation_history.json`` (and the
``ui_messages.json`` beside it).

The history is a list of Anthropic messages, but with the XML tool protocol the model's calls
are XML in its text (``<read_file><path>x</path></read_file>``) and their results are text in
the next user message: a header block ``[read_file for 'x'] Result:`` followed by the result's
blocks. Read as plain Anthropic, every call would look unanswered and every result like the
user's words. This reader pairs them: a header whose tool has an XML call in the previous
assistant message becomes a ``tool`` result of a call taken out of that text (counted as
``xml_tool_calls_extracted``); a header with no such call stays user text marked
``_injected: "observation"`` (counted). Native tool calling (``tool_use``/``tool_result``
blocks, Roo Code's native protocol, newer Cline) reads as Anthropic.

Text the extension writes into the user role is marked: ``<environment_details>`` blocks
(``environment-details``), and its steering notes (``[TASK RESUMPTION]``, ``Tool [x] was not
executed ...``, ``[ERROR] You did not use a tool ...``) as ``harness-message``. The first
request (``<task>...</task>``) stays the user's. With ``ui_messages.json`` beside the history,
its records are absorbed into the metadata (API requests, tokens and cost summed); with
``task_metadata.json``, the model is its last ``model_usage`` entry.

Roo Code (Cline's fork) writes the same files; it is told apart by its ``ts`` on every message
and the ``<slug>`` of its mode in the environment details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    content_text,
    make_tool_call,
)
from hermes_plugins.transcripts.common import (
    assistant_from_blocks,
    listed,
    mapping,
    reads,
    result_content,
    tag,
    unknown_role_message,
    user_from_blocks,
)

#: ``[tool_name for 'x'] Result:`` (the header Cline and Roo Code put before a tool's result).
_HEADER = re.compile(r"\A\s*\[(?P<name>[A-Za-z_][\w-]*)(?P<rest>[^\n]*?)\] Result:[ \t]*(?:\n|\Z)")
#: Openings of the extension's own steering text in the user role.
_HARNESS = ("[TASK RESUMPTION]", "Tool [", "Skipping tool", "[ERROR] You did not use a tool",
            "[ERROR]", "[Response interrupted", "<answer>\n")
#: Tags models write that are not tool calls.
_NOT_TOOLS = frozenset({"thinking", "task", "environment_details", "feedback", "answer", "result"})


def _messages(doc: Any) -> list[Any] | None:
    # Most entries are messages; Roo Code also keeps role-less entries (encrypted reasoning items).
    if not isinstance(doc, list):
        return None
    sample = doc[:200]
    if sample and all(isinstance(m, Mapping) for m in sample) and len(sample) - sum(
        isinstance(m.get("role"), str) for m in sample
    ) <= max(1, len(sample) // 10):
        return doc
    return None


def _texts(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text") or "") for b in listed(content) if isinstance(b, Mapping) and b.get("type") == "text"]


def _is_roo(messages: Sequence[Any]) -> bool:
    sample = [m for m in messages[:200] if isinstance(m, Mapping)]
    if any("isSummary" in m or "condenseId" in m for m in sample):
        return True
    if sample and all("ts" in m for m in sample):
        return True
    return any("<slug>" in text for m in sample[:6] if m.get("role") == "user" for text in _texts(m))


def _signals(messages: Sequence[Any]) -> str | None:
    for message in messages[:200]:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        for text in _texts(message):
            if text.lstrip().startswith("<task>"):
                return "a <task> request"
            if text.lstrip().startswith("<environment_details>"):
                return "<environment_details> blocks"
            if _HEADER.match(text):
                return "'[tool ...] Result:' blocks"
    return None


def _detector(roo: bool) -> Any:
    own = "Roo Code" if roo else "Cline"

    @reads("json")
    def detect(source: TranscriptSource) -> Detection:
        messages = _messages(source.document_or_none())
        if messages is None:
            return Detection.refuse("not a list of messages")
        why = _signals(messages)
        if why is None:
            return Detection.refuse("no <task>, <environment_details> or '[tool] Result:' text")
        if _is_roo(messages) != roo:
            return Detection.refuse(f"{why}, but no Roo Code markers (ts on messages, <slug> mode): Cline's"
                                    if roo else f"{why}, but Roo Code's markers (ts on messages, <slug> mode)")
        return Detection.accept(0.9, f"{own} API history: {why}")

    return detect


# --- XML tool calls ---------------------------------------------------------------------------


def _xml_call(text: str, name: str) -> tuple[dict[str, str], int, int] | None:
    """The first ``<name>...</name>`` block in ``text``: its parameters and its span."""
    match = re.search(rf"<{re.escape(name)}>(.*?)</{re.escape(name)}>", text, re.DOTALL)
    if match is None:
        return None
    params = {m.group(1): m.group(2).strip("\n") for m in re.finditer(r"<(\w+)>(.*?)</\1>", match.group(1), re.DOTALL)}
    return params, match.start(), match.end()


class _Pairing:
    """Takes XML calls out of the last assistant message as its results arrive."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.assistant: dict[str, Any] | None = None
        self.count = 0

    def take(self, name: str) -> str | None:
        message = self.assistant
        if message is None or name in _NOT_TOOLS:
            return None
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            if not isinstance(part, dict) or part.get("type") != "text":
                continue
            found = _xml_call(str(part.get("text") or ""), name)
            if found is None:
                continue
            params, start, end = found
            text = str(part["text"])
            part["text"] = (text[:start].rstrip() + "\n" + text[end:].lstrip()).strip()
            self.count += 1
            ident = f"xml_call_{self.count}"
            message.setdefault("tool_calls", []).append(make_tool_call(ident, name, params))
            message["content"] = parts if isinstance(content, list) else (parts[0]["text"] or None)
            self.report.changed("xml_tool_calls_extracted")
            return ident
        return None


def _user_message(item: Mapping[str, Any], pairing: _Pairing, report: ReportBuilder) -> list[dict[str, Any]]:
    content = item.get("content")
    if isinstance(content, list):
        blocks: list[Any] = list(content)
    else:  # a string (or, in a damaged file, anything else: kept as its text)
        blocks = [{"type": "text", "text": content if isinstance(content, str) else json.dumps(content)}] \
            if content is not None else []
    results: list[dict[str, Any]] = []
    rest: list[Any] = []
    current: dict[str, Any] | None = None  # the header-led result still taking blocks
    body: list[Any] = []

    def close() -> None:
        nonlocal current, body
        if current is None:
            return
        text = result_content(body, report) if body else ""
        current["content"] = text
        results.append(current)
        current, body = None, []

    for block in blocks:
        text = block.get("text") if isinstance(block, Mapping) and block.get("type") == "text" else None
        header = _HEADER.match(text) if isinstance(text, str) else None
        if header is not None:
            close()
            name = header.group("name")
            ident = pairing.take(name)
            if ident is not None:
                current = {"role": "tool", "tool_call_id": ident}
                report.changed("tool_result_text_attached_to_its_call")
            else:  # no call to answer: the result stays text, marked as the environment's
                current = {"role": "user", "_injected": "observation", "_header": header.string[: header.end()].strip()}
                report.relabelled("unattached_tool_result_text:observation")
            remainder = header.string[header.end():]
            if remainder.strip():
                body.append({"type": "text", "text": remainder})
            continue
        is_note = isinstance(text, str) and (text.lstrip().startswith(_HARNESS)
                                             or text.lstrip().startswith("<environment_details>"))
        if current is not None and not is_note:
            body.append(block)
            continue
        close()
        rest.append(block)
    close()
    out: list[dict[str, Any]] = []
    for result in results:
        if result["role"] == "user":  # an unattached result: header and body as one user text
            header = result.pop("_header")
            result["content"] = f"{header}\n{content_text(result['content'])}".strip()
        out.append(result)
    if rest:
        converted = user_from_blocks(rest, report)
        for message in converted:
            text = content_text(message.get("content")).lstrip()
            if message["role"] == "user" and "_injected" not in message and text.startswith(_HARNESS):
                message["_injected"] = "harness-message"
                report.relabelled("marked_injected:harness-message")
        # The user's own text (and any native tool results) after the header-led results.
        out.extend(m for m in converted if m["role"] == "tool")
        out.extend(m for m in converted if m["role"] != "tool")
    # A native tool_result block answers the previous assistant message: results first.
    tools = [m for m in out if m["role"] == "tool"]
    return tools + [m for m in out if m["role"] != "tool"]


def _ui_metadata(path: Path | None, report: ReportBuilder) -> dict[str, Any]:
    """What ``ui_messages.json`` beside the history adds: API requests, tokens and cost."""
    if path is None:
        return {}
    ui_path = path.with_name("ui_messages.json")
    try:
        ui = json.loads(ui_path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(ui, list):
        report.warn(f"{ui_path.name}: not a list of UI messages; not read")
        return {}
    report.saw(len(ui))
    usage = {"requests": 0, "tokens_in": 0, "tokens_out": 0, "cache_writes": 0, "cache_reads": 0, "cost": 0.0}
    for record in ui:
        kind = mapping(record).get("say") or mapping(record).get("ask") or "unknown"
        report.absorbed(f"ui_messages:{kind}")
        if kind == "api_req_started":
            try:
                info = mapping(json.loads(str(mapping(record).get("text") or "{}")))
            except ValueError:
                continue
            usage["requests"] += 1
            for key, field in (("tokens_in", "tokensIn"), ("tokens_out", "tokensOut"),
                               ("cache_writes", "cacheWrites"), ("cache_reads", "cacheReads"), ("cost", "cost")):
                value = info.get(field)
                if isinstance(value, (int, float)):
                    usage[key] += value
    return {"ui_messages": len(ui), "api_usage": usage}


def _task_model(path: Path | None, report: ReportBuilder, metadata: dict[str, Any]) -> str | None:
    """The model of ``task_metadata.json`` beside the history (its last ``model_usage`` entry)."""
    if path is None or not path.with_name("task_metadata.json").is_file():
        return None
    meta_path = path.with_name("task_metadata.json")
    try:
        doc = json.loads(meta_path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        report.warn(f"{meta_path.name}: not JSON; its model usage was not read")
        return None
    usage = [u for u in listed(mapping(doc).get("model_usage")) if isinstance(mapping(u).get("model_id"), str)]
    report.saw()
    report.absorbed("task_metadata")
    if not usage:
        return None
    metadata["models_used"] = list(dict.fromkeys(str(u["model_id"]) for u in usage))
    return str(usage[-1]["model_id"])


def _reader(name: str) -> Any:
    def read(source: TranscriptSource) -> Transcript:
        report = source.report
        doc = source.document()
        raw = [] if doc == [] else _messages(doc)
        if raw is None:
            raise TypeError("expected a list of messages (api_conversation_history.json)")
        report.saw(len(raw))
        messages: list[dict[str, Any]] = []
        pairing = _Pairing(report)
        for item in raw:
            role = item.get("role")
            if role == "assistant":
                content = item.get("content")
                blocks = content if isinstance(content, list) else [content] if content else []
                message = assistant_from_blocks(blocks, report)
                messages.append(message)
                pairing.assistant = message
                report.converted()
            elif role == "user":
                converted = _user_message(item, pairing, report)
                pairing.assistant = None
                if not converted:
                    report.dropped("empty_message")
                    continue
                messages.extend(converted)
                report.converted()
            elif not isinstance(role, str):
                if item.get("type") == "reasoning":
                    report.changed("encrypted_reasoning_dropped")
                report.dropped(f"entry_without_role:{tag(item.get('type'))}")
            else:
                kept = unknown_role_message(item, role, report)
                if kept is not None:
                    messages.append(kept)
        metadata = _ui_metadata(source.path, report)
        model = _task_model(source.path, report, metadata)
        return source.transcript(messages, metadata=metadata, model=model)

    return read


CLINE = TranscriptFormat(
    name="cline",
    description="Cline task history (tasks/<id>/api_conversation_history.json, ui_messages.json beside it)",
    versions="Cline API history: XML tool protocol and native tool calls",
    detect=_detector(roo=False),
    read=_reader("cline"),
)
ROO_CODE = TranscriptFormat(
    name="roo-code",
    description="Roo Code task history (tasks/<id>/api_conversation_history.json, ui_messages.json beside it)",
    versions="Roo Code API history: XML and native tool protocols",
    detect=_detector(roo=True),
    read=_reader("roo-code"),
)
