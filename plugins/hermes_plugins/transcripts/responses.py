"""OpenAI Responses API items: ``message`` (``input_text``/``output_text`` parts),
``function_call``/``function_call_output`` (paired by ``call_id``), ``custom_tool_call`` and
its output, ``local_shell_call``, ``reasoning`` (summary kept as ``_reasoning``, encrypted
content dropped with a count). A JSON array of items, ``{"input": [...]}``, a response object
(``{"object": "response", "output": [...]}``), the first Codex CLI's (TypeScript) session files
(``{"session": {instructions}, "items": [...]}``) or JSON Lines. ``ItemConverter`` is shared with
the Codex CLI reader, whose rollouts hold the same items.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    image_placeholder,
    make_tool_call,
    responses_input,
    responses_tool,
)
from hermes_plugins.transcripts.common import listed, mapping, mark_user_text, simplify_parts, tag
from hermes_plugins.transcripts.openai_chat import dumps

NAME = "openai-responses"
ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "web_search_call",
    "file_search_call", "computer_call", "computer_call_output", "image_generation_call",
    "code_interpreter_call", "mcp_call", "mcp_list_tools", "item_reference",
})
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                     "computer_call_output"})


def _unwrap(output: Any) -> Any:
    """Codex writes shell results as a JSON string ``{"output": ..., "metadata": {exit_code}}``."""
    if isinstance(output, str) and output.startswith('{"output"'):
        try:
            value = json.loads(output)
        except ValueError:
            return output
        if isinstance(value, Mapping) and isinstance(value.get("output"), str):
            return value
    return output


def _failed(output: Mapping[str, Any]) -> bool:
    meta = output.get("metadata")
    code = meta.get("exit_code") if isinstance(meta, Mapping) else None
    return isinstance(code, int) and code != 0


class ItemConverter:
    """Turns a stream of Responses items into OpenAI chat messages.

    Consecutive calls (and the assistant text before them) form one assistant message, as one
    response produced them; a reasoning item's summary goes to the next assistant message.
    """

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.messages: list[dict[str, Any]] = []
        self._reasoning: list[str] = []
        self._open: dict[str, Any] | None = None  # assistant message still taking calls
        self.system_prompt: str | None = None

    def _assistant(self) -> dict[str, Any]:
        if self._open is None:
            self._open = {"role": "assistant", "content": None}
            self.messages.append(self._open)
            if self._reasoning:
                self._open["_reasoning"] = "\n\n".join(self._reasoning)
                self._reasoning = []
            return self._open
        return self._open

    def add(self, item: Any) -> None:
        """Convert one item, counting it on the report."""
        report = self.report
        if not isinstance(item, Mapping):
            report.dropped("not_an_object")
            return
        kind = tag(item.get("type")) or ("message" if "role" in item else None)
        if kind == "message":
            self._message(item)
        elif kind in CALLS:
            fresh = self._open is None
            message = self._assistant()
            message.setdefault("tool_calls", []).append(self._call(item))
            report.converted() if fresh else report.merged("calls_of_one_response")
        elif kind in OUTPUTS:
            self._open = None
            output = _unwrap(item.get("output"))
            result: dict[str, Any] = {"role": "tool", "tool_call_id": str(item.get("call_id") or ""),
                                      "content": self._output(output)}
            if isinstance(output, Mapping) and (output.get("success") is False or _failed(output)):
                result["_is_error"] = True
            self.messages.append(result)
            report.converted()
        elif kind == "reasoning":
            summary = [str(s.get("text") or "") for s in listed(item.get("summary")) if isinstance(s, Mapping)]
            summary += [str(c.get("text") or "") for c in listed(item.get("content"))
                        if isinstance(c, Mapping) and c.get("type") == "reasoning_text"]
            text = "\n\n".join(s for s in summary if s)
            if item.get("encrypted_content"):
                report.changed("encrypted_reasoning_dropped")
            if text:
                report.changed("reasoning_kept_as_metadata")
                if self._open is not None:
                    self._open["_reasoning"] = (self._open.get("_reasoning", "") + "\n\n" + text).strip()
                else:
                    self._reasoning.append(text)
                report.merged("reasoning_into_assistant_message")
            else:
                report.dropped("reasoning_without_text")
        else:
            report.dropped(f"item:{kind}")

    def finish(self) -> list[dict[str, Any]]:
        """The messages; reasoning that no assistant message followed gets one of its own."""
        if self._reasoning:
            self.messages.append({"role": "assistant", "content": "", "_reasoning": "\n\n".join(self._reasoning)})
            self._reasoning = []
            self.report.changed("assistant_message_added_for_trailing_reasoning")
        return self.messages

    def _message(self, item: Mapping[str, Any]) -> None:
        role = item.get("role")
        content = item.get("content")
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        else:
            for part in listed(content):
                if not isinstance(part, Mapping):
                    continue
                kind = part.get("type")
                if kind in ("input_text", "output_text", "text", "summary_text"):
                    parts.append({"type": "text", "text": str(part.get("text") or "")})
                elif kind == "refusal":
                    parts.append({"type": "text", "text": str(part.get("refusal") or "")})
                elif kind in ("input_image", "image_url", "image"):
                    parts.append(image_placeholder(part, self.report))
                else:
                    self.report.changed(f"parts_kept_as_text:{kind}")
                    parts.append({"type": "text", "text": f"[{kind}] {json.dumps(dict(part), ensure_ascii=False, default=str)}"})
        text = simplify_parts(parts)
        if role == "assistant":
            if self._open is not None and not self._open.get("tool_calls") and self._open.get("content"):
                # Two text items of one turn stay two parts of one message.
                self._open["content"] = (self._open["content"] if isinstance(self._open["content"], list)
                                         else [{"type": "text", "text": self._open["content"]}]) + parts
                self.report.merged("assistant_text_items")
                return
            if self._open is not None and self._open.get("tool_calls"):
                self._open = None
            message = self._assistant()
            message["content"] = text
            self.report.converted()
            return
        self._open = None
        if role in ("system", "developer") and not self.messages and self.system_prompt is None and isinstance(text, str):
            self.system_prompt = text
            self.report.absorbed("system_prompt")
            return
        message = {"role": role if role in ("user", "system", "developer") else "user", "content": text}
        if role == "user":
            mark_user_text(message, self.report)
        self.messages.append(message)
        self.report.converted()

    def _call(self, item: Mapping[str, Any]) -> dict[str, Any]:
        ident = str(item.get("call_id") or item.get("id") or "")
        if item.get("type") == "local_shell_call":
            action = mapping(item.get("action"))
            return make_tool_call(ident, "local_shell", dict(action))
        if item.get("type") == "custom_tool_call":
            return make_tool_call(ident, str(item.get("name") or ""), {"input": item.get("input")})
        return make_tool_call(ident, str(item.get("name") or ""), item.get("arguments"))

    def _output(self, output: Any) -> Any:
        if isinstance(output, str):
            return output
        if isinstance(output, list):
            parts = []
            for part in output:
                if isinstance(part, Mapping) and part.get("type") in ("input_image", "image_url"):
                    parts.append(image_placeholder(part, self.report))
                elif isinstance(part, Mapping):
                    parts.append({"type": "text", "text": str(part.get("text") or part.get("output") or "")})
            return simplify_parts(parts)
        if isinstance(output, Mapping) and isinstance(output.get("output"), str):
            return output["output"]
        return json.dumps(output, ensure_ascii=False, default=str)


def _items_of(doc: Any) -> list[Any] | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, Mapping):
        for key in ("input", "output", "items"):
            items = doc.get(key)
            if isinstance(items, list):
                return items
    return None


def _typed(items: list[Any]) -> bool:
    typed = [i for i in items if isinstance(i, Mapping) and tag(i.get("type")) in ITEM_TYPES]
    return bool(typed) and all(
        isinstance(i, Mapping) and (tag(i.get("type")) in ITEM_TYPES or ("role" in i and "type" not in i))
        for i in items
    ) and any(i.get("type") != "message" or any(
        isinstance(p, Mapping) and str(p.get("type", "")).startswith(("input_", "output_"))
        for p in (i["content"] if isinstance(i.get("content"), list) else ())
    ) for i in typed)


def detect(source: TranscriptSource) -> Detection:
    if source.kind == "jsonl":
        records = [r for r in source.head_records if r is not None]
        if records and _typed(records):
            return Detection.accept(0.8, "lines are Responses API items (typed)")
        return Detection.refuse("lines are not Responses API items")
    if source.kind != "json":
        return Detection.refuse(f"not JSON ({source.kind})")
    items = _items_of(source.document_or_none())
    if items is None:
        return Detection.refuse("not a list of items nor an object with input/output")
    if items and _typed(items[:200]):
        return Detection.accept(0.8, "Responses API items (message/function_call/...)")
    return Detection.refuse("items have no Responses API type")


def read(source: TranscriptSource) -> Transcript:
    converter = ItemConverter(source.report)
    model = None
    if source.kind == "jsonl":
        for _lineno, item in source.records():
            converter.add(item)
    else:
        doc = source.document()
        items = _items_of(doc)
        if items is None:
            raise ValueError("expected a list of items or an object with 'input'/'output'")
        source.report.saw(len(items))
        for item in items:
            converter.add(item)
        if isinstance(doc, Mapping):
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
            if isinstance(doc.get("instructions"), str) and converter.system_prompt is None:
                converter.system_prompt = doc["instructions"]
            session = mapping(doc.get("session"))  # Codex CLI's first (TypeScript) sessions
            if isinstance(session.get("instructions"), str) and converter.system_prompt is None:
                converter.system_prompt = session["instructions"] or None
    return source.transcript(converter.finish(), system_prompt=converter.system_prompt, model=model)


def write(transcript: Transcript, notes: ReportBuilder) -> str:
    """A ``client.responses.create`` body: ``instructions``, ``tools`` in the Responses function
    shape, ``input`` items (``hermes_core.responses``); what could not go as it was (another
    vendor's reasoning, parts without a Responses form) is counted on ``notes``."""
    items, conversion = responses_input(list(transcript.messages))
    for kind, count in conversion.counts.items():
        if "dropped" in kind:
            notes.dropped(kind, count)
        else:
            notes.changed(kind, count)
    body: dict[str, Any] = {}
    if transcript.model:
        body["model"] = transcript.model
    if transcript.system_prompt:
        body["instructions"] = transcript.system_prompt
    if transcript.tools:
        body["tools"] = [responses_tool(t) for t in transcript.tools]
    body["input"] = items
    return dumps(body)


FORMAT = TranscriptFormat(
    name=NAME,
    description="OpenAI Responses API items (input/output lists, JSON or JSON Lines)",
    versions="Responses API items; Codex CLI (TypeScript) sessions",
    detect=detect,
    read=read,
    write=write,
)
