"""Gemini CLI: saved chats, session recordings and ``--output-format stream-json`` events.

- **Saved chats** (``/chat save TAG`` -> ``checkpoint-TAG.json``): a JSON list of Gemini
  ``Content`` (``{role: "user"|"model", parts}``), or ``{"history": [...]}``; the ``/restore``
  checkpoints of file edits hold it as ``clientHistory`` (beside the UI's ``history``). Parts are ``text``
  (``thought: true`` is reasoning, kept as ``_reasoning``), ``functionCall`` (``{id?, name,
  args}``), ``functionResponse`` (``{id?, name, response}``), ``inlineData``/``fileData`` (a
  placeholder). Calls without an id get one (``gemini_call_N``) and the responses that follow
  answer them in order, by name (counted). The CLI's opening setup message ("This is the
  Gemini CLI. We are setting up the context ...") is marked ``_injected: "environment-context"``.
- **Session recordings** (``~/.gemini/tmp/<project>/chats/session-*.json`` and, since 0.2x,
  ``.jsonl``): ``{sessionId, projectHash, messages: [MessageRecord]}`` or one record a line -
  a metadata line, message records (a later line with the same ``id`` replaces the earlier
  one: counted as superseded), ``{"$rewindTo": id}`` (that message and the later ones are
  dropped, counted) and ``{"$set": {...}}`` metadata updates. ``user`` records are the user,
  ``gemini`` records the model with ``toolCalls`` (each with its ``result``; status ``error``
  or ``cancelled`` marks ``_is_error``) and ``thoughts``; ``info``/``error``/``warning``
  records are the CLI's own notices (dropped by type).
- **stream-json** (``gemini -p ... --output-format stream-json``): ``init`` (session, model:
  absorbed), ``message`` (``delta: true`` chunks of one reply are merged), ``tool_use`` /
  ``tool_result`` (a call and its result, ``status: error`` marks ``_is_error``), ``error``
  (the CLI's notices: metadata) and ``result`` (stats: metadata).
- **json** (``gemini -p ... --output-format json``): one object ``{session_id?, response?,
  stats?, error?}`` (later versions add ``auth_method``, ``user_tier``, diagnostics). It holds the
  final reply only: ``response`` is one assistant message; the prompt and the turn's tool calls
  are not in it - ``stats.tools.totalCalls`` says how many there were, and a warning says they
  are missing (never invented). ``stats`` and ``error`` go to the metadata (an error is a warning
  too); the model is ``stats.models``' only key (several: all listed, none chosen). Each
  top-level field is a record.

``GeminiContents`` (Content lists) is shared with Qwen Code, whose records hold the same Content.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    image_placeholder,
    make_tool_call,
)
from hermes_plugins.transcripts.common import (
    MAPPING,
    head_objects,
    listed,
    mapping,
    mark_user_text,
    object_records,
    simplify_parts,
    tag,
    unknown_role_message,
)

NAME = "gemini-cli"
STREAM_EVENTS = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
RECORD_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
#: The opening of the context message Gemini CLI puts before the first request.
SETUP_OPENING = "This is the Gemini CLI. We are setting up the context for our chat."
_ERROR_STATUSES = frozenset({"error", "cancelled", "canceled"})


# --- Gemini Content ---------------------------------------------------------------------------

#: A tool call's arguments as JSON text, exactly as ``make_tool_call`` writes them
#: (``json.dumps(..., ensure_ascii=False)``): ``json.dumps`` with an option builds a new encoder
#: each call, about half the cost of encoding a call's few arguments.
_ARGUMENTS_JSON = json.JSONEncoder(ensure_ascii=False)


def _tool_call(ident: str, name: str, arguments: Any) -> dict[str, Any]:
    """``make_tool_call(ident, name, arguments)``, the arguments encoded by the one encoder."""
    if not isinstance(arguments, str):
        arguments = _ARGUMENTS_JSON.encode(arguments if arguments is not None else {})
    return make_tool_call(ident, name, arguments)


def _parts(content: Any) -> list[Any]:
    """A ``PartListUnion`` (a string, one part or a list of parts) as a list of parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, MAPPING):
        return [content]
    return list(content) if isinstance(content, list) else [{"text": str(content)}]


def _media_part(part: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    data = mapping(part.get("inlineData") or part.get("fileData"))
    mime = str(data.get("mimeType") or "application/octet-stream")
    if isinstance(data.get("data"), str):
        return image_placeholder({"source": {"media_type": mime, "data": data["data"]}}, report)
    report.changed("file_references_kept_as_text")
    return {"type": "text", "text": f"[file: {mime}, {data.get('fileUri') or ''}]"}


def response_text(response: Any) -> tuple[str, bool]:
    """The text of a ``functionResponse.response`` and whether it reports an error."""
    body = mapping(response)
    if "error" in body and body.get("error"):
        err = body["error"]
        return (err if isinstance(err, str) else json.dumps(err, ensure_ascii=False, default=str)), True
    output = body.get("output", body.get("content", response))
    if isinstance(output, str):
        return output, False
    return json.dumps(output, ensure_ascii=False, default=str), False


class GeminiContents:
    """Turns Gemini ``Content`` (role + parts) into OpenAI chat messages, pairing calls and
    responses by id, or in order by name when the ids are missing."""

    def __init__(self, report: ReportBuilder, messages: list[dict[str, Any]] | None = None) -> None:
        self.report = report
        self.messages: list[dict[str, Any]] = [] if messages is None else messages
        self._unanswered: list[tuple[str, str]] = []  # (name, id) of calls awaiting a response
        self._generated = 0

    def add(self, content: Mapping[str, Any]) -> int:
        """Convert one Content; returns how many messages it produced (counting is the caller's)."""
        role = content.get("role")
        parts = [p for p in _parts(content.get("parts")) if isinstance(p, MAPPING)]
        before = len(self.messages)
        if role == "model":
            self._model(parts)
        else:
            self._user(parts)
        return len(self.messages) - before

    def call_id(self, name: str, ident: Any) -> str:
        if ident:
            self._unanswered.append((name, str(ident)))
            return str(ident)
        self._generated += 1
        made = f"gemini_call_{self._generated}"
        self._unanswered.append((name, made))
        self.report.changed("tool_call_ids_generated")
        return made

    def answer_id(self, name: str, ident: Any) -> str:
        if ident:
            self._unanswered = [c for c in self._unanswered if c[1] != str(ident)]
            return str(ident)
        for index, (waiting, made) in enumerate(self._unanswered):
            if waiting == name:
                del self._unanswered[index]
                return made
        return ""

    def _model(self, parts: list[Mapping[str, Any]]) -> None:
        texts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        reasoning: list[str] = []
        signed = False  # a thought signature beside a part's content (dropped: counted once a message)
        for part in parts:
            if len(part) > 1 and part.get("thoughtSignature"):
                signed = True
            if "functionCall" in part:
                call = mapping(part["functionCall"])
                name = str(call.get("name") or "")
                calls.append(_tool_call(self.call_id(name, call.get("id")), name, call.get("args")))
            elif part.get("thought") and isinstance(part.get("text"), str):
                reasoning.append(part["text"])
                self.report.changed("reasoning_kept_as_metadata")
            elif isinstance(part.get("text"), str):
                texts.append({"type": "text", "text": part["text"]})
            elif "inlineData" in part or "fileData" in part:
                texts.append(_media_part(part, self.report))
            elif part.get("thoughtSignature") is not None and len(part) == 1:
                self.report.changed("thought_signatures_dropped")
            else:
                self.report.changed(f"parts_kept_as_text:{next(iter(part), 'empty')}")
                texts.append({"type": "text", "text": json.dumps(dict(part), ensure_ascii=False, default=str)})
        if signed:
            self.report.changed("thought_signatures_dropped")
        message: dict[str, Any] = {"role": "assistant", "content": simplify_parts(texts) if texts else None}
        if calls:
            message["tool_calls"] = calls
        elif message["content"] is None:
            message["content"] = ""
        if reasoning:
            message["_reasoning"] = "\n\n".join(reasoning)
        self.messages.append(message)

    def _user(self, parts: list[Mapping[str, Any]]) -> None:
        texts: list[dict[str, Any]] = []
        for part in parts:
            if "functionResponse" in part:
                response = mapping(part["functionResponse"])
                text, failed = response_text(response.get("response"))
                result: dict[str, Any] = {
                    "role": "tool",
                    "tool_call_id": self.answer_id(str(response.get("name") or ""), response.get("id")),
                    "content": text,
                }
                if failed:
                    result["_is_error"] = True
                self.messages.append(result)
            elif isinstance(part.get("text"), str):
                texts.append({"type": "text", "text": part["text"]})
            elif "inlineData" in part or "fileData" in part:
                texts.append(_media_part(part, self.report))
            else:
                self.report.changed(f"parts_kept_as_text:{next(iter(part), 'empty')}")
                texts.append({"type": "text", "text": json.dumps(dict(part), ensure_ascii=False, default=str)})
        if texts:
            message = {"role": "user", "content": simplify_parts(texts)}
            if message["content"] and str(texts[0].get("text", "")).lstrip().startswith(SETUP_OPENING):
                message["_injected"] = "environment-context"
                self.report.relabelled("marked_injected:environment-context")
            else:
                mark_user_text(message, self.report)
            self.messages.append(message)


# --- detection --------------------------------------------------------------------------------


def _is_content(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("role") in ("user", "model") and isinstance(item.get("parts"), list)


def _content_list(doc: Any) -> list[Any] | None:
    """The list of a saved chat (or a /restore checkpoint's) when it holds any Content."""
    if isinstance(doc, Mapping):
        # A /restore checkpoint holds the UI's history and the model's (clientHistory): the latter.
        doc = doc.get("clientHistory") if isinstance(doc.get("clientHistory"), list) else doc.get("history")
    return doc if isinstance(doc, list) and any(map(_is_content, doc[:200])) else None


def _contents(doc: Any) -> list[Any] | None:
    """The saved chat's list when it is Content (detection: all but a stray item or two)."""
    doc = _content_list(doc)
    if not isinstance(doc, list):
        return None
    sample = doc[:200]
    # Tolerant: a stray item or two (a role of another version) is read as marked text.
    if sample and _is_content(sample[0]) and len(sample) - sum(map(_is_content, sample)) <= max(1, len(sample) // 10):
        return doc
    return None


def _recording(doc: Any) -> list[Any] | None:
    if isinstance(doc, Mapping) and "sessionId" in doc and "projectHash" in doc:
        messages = doc.get("messages")
        if isinstance(messages, list):
            return messages
    return None


def detect(source: TranscriptSource) -> Detection:
    if source.kind == "jsonl":
        records = head_objects(source)
        if not records:
            return Detection.refuse("no JSON object lines")
        events = [r for r in records if tag(r.get("type")) in STREAM_EVENTS and "timestamp" in r]
        if len(events) >= len(records) * 0.75 and any(r.get("type") in ("init", "tool_use", "result") or (
                r.get("type") == "message" and isinstance(r.get("content"), str)) for r in events):
            return Detection.accept(0.9, "stream-json events (init/message/tool_use/tool_result/result)")
        first = records[0]
        known = [r for r in records[1:] if tag(r.get("type")) in RECORD_TYPES or "$rewindTo" in r
                 or "$set" in r or "projectHash" in r]
        if isinstance(first.get("sessionId"), str) and isinstance(first.get("projectHash"), str) \
                and len(known) >= len(records[1:]) * 0.75:
            return Detection.accept(0.95, "a session recording: metadata line, then message records")
        return Detection.refuse("no stream-json events nor a session recording (sessionId, projectHash)")
    if source.kind != "json":
        return Detection.refuse(f"not JSON nor JSON Lines ({source.kind})")
    doc = source.document_or_none()
    if _json_output(doc):
        return Detection.accept(0.85, "--output-format json output {session_id, response, stats}")
    if _recording(doc) is not None:
        return Detection.accept(0.95, "a session recording {sessionId, projectHash, messages}")
    if _contents(doc) is not None:
        return Detection.accept(0.9, "Gemini Content list (role user/model with parts): a saved chat")
    return Detection.refuse("no Gemini Content list nor session recording")


# --- reading ----------------------------------------------------------------------------------


def read(source: TranscriptSource) -> Transcript:
    if source.kind == "jsonl":
        first = head_objects(source)[:1]
        if first and "projectHash" in first[0] and "type" not in first[0]:
            return _read_recording_lines(source)
        return _read_stream(source)
    doc = source.document()
    if _json_output(doc):
        return _read_json_output(source, doc)
    records = _recording(doc)
    if records is not None:
        source.report.saw(len(records))
        meta = {k: doc[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated", "summary") if k in doc}
        return _from_records(source, ((r, 1) for r in records), meta)
    contents = _content_list(doc)
    if contents is None:
        raise TypeError("expected a list of Gemini Content or a session recording")
    report = source.report
    report.saw(len(contents))
    converter = GeminiContents(report)
    for content in contents:
        if not _is_content(content):
            role = content.get("role") if isinstance(content, Mapping) else None
            if isinstance(role, str) and role:
                texts = [str(p.get("text")) for p in listed(content.get("parts")) if isinstance(p, Mapping)
                         and isinstance(p.get("text"), str)]
                kept = unknown_role_message({"content": "\n".join(texts)}, role, report)
                if kept is not None:
                    converter.messages.append(kept)
            else:
                report.dropped("not_a_content")
            continue
        if converter.add(content):
            report.converted()
        else:
            report.dropped("empty_content")
    return source.transcript(converter.messages)


#: The fields of ``--output-format json`` (``JsonOutput`` in Gemini CLI's output types).
_JSON_OUTPUT_FIELDS = frozenset({"session_id", "response", "stats", "error", "auth_method", "user_tier",
                                 "diagnostics", "retry_count", "loop_detected", "loop_type"})


def _json_output(doc: Any) -> bool:
    """Whether ``doc`` is the one object ``--output-format json`` prints: only its fields, a
    string reply or an error object, and stats (when present) with per-model ``models``."""
    if not isinstance(doc, Mapping) or not doc or not set(doc) <= _JSON_OUTPUT_FIELDS:
        return False
    stats = doc.get("stats")
    if stats is not None and not (isinstance(stats, Mapping) and isinstance(stats.get("models"), Mapping)):
        return False
    return isinstance(doc.get("response"), str) or isinstance(doc.get("error"), Mapping)


def _read_json_output(source: TranscriptSource, doc: Mapping[str, Any]) -> Transcript:
    report = source.report
    report.saw(len(doc))
    messages: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {"output_format": "json"}
    model = None
    for key, value in doc.items():
        if key == "response":
            if isinstance(value, str) and value:
                messages.append({"role": "assistant", "content": value})
                report.converted()
            else:
                report.dropped("empty_response")
            continue
        metadata[key] = value
        report.absorbed(key)
    stats = mapping(doc.get("stats"))
    models = [str(name) for name in mapping(stats.get("models"))]
    if len(models) == 1:
        model = models[0]
    elif models:
        metadata["models"] = models
    calls = mapping(stats.get("tools")).get("totalCalls")
    if isinstance(calls, int) and calls > 0:
        report.warn(f"the json output holds the final reply only: the {calls} tool call(s) of the turn "
                    "(stats.tools) and the prompt are not in it; read a session recording or stream-json "
                    "for the whole turn")
    else:
        report.warn("the json output holds the final reply only: the prompt is not in it")
    error = mapping(doc.get("error"))
    if error:
        report.warn(f"the run ended in an error: {error.get('type') or 'error'}: {error.get('message') or ''}".rstrip())
    return source.transcript(messages, model=model, metadata=metadata)


def _record_messages(record: Mapping[str, Any], converter: GeminiContents, report: ReportBuilder) -> int:
    """One session-recording message record as messages (how many were added)."""
    kind = record.get("type")
    out = converter.messages
    before = len(out)
    if kind == "user":
        converter.add({"role": "user", "parts": _parts(record.get("content"))})
        return len(out) - before
    text_parts = _parts(record.get("content"))
    converter.add({"role": "model", "parts": text_parts})
    message = out[-1]
    thoughts = [t for t in listed(record.get("thoughts")) if isinstance(t, MAPPING)]
    if thoughts:
        text = "\n\n".join(f"{t.get('subject') or ''}: {t.get('description') or ''}".strip(": ") for t in thoughts)
        message["_reasoning"] = "\n\n".join(filter(None, [message.get("_reasoning"), text]))
        report.changed("reasoning_kept_as_metadata")
    calls = [c for c in listed(record.get("toolCalls")) if isinstance(c, MAPPING)]
    results: list[dict[str, Any]] = []
    for call in calls:
        name = str(call.get("name") or "")
        ident = converter.call_id(name, call.get("id"))
        message.setdefault("tool_calls", []).append(_tool_call(ident, name, call.get("args")))
        converter.answer_id(name, ident)
        texts = []
        for part in _parts(call.get("result")):
            if isinstance(part, MAPPING) and "functionResponse" in part:
                texts.append(response_text(mapping(part["functionResponse"]).get("response"))[0])
            elif isinstance(part, MAPPING) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        result: dict[str, Any] = {"role": "tool", "tool_call_id": ident, "content": "\n".join(texts)}
        if tag(call.get("status")) in _ERROR_STATUSES:
            result["_is_error"] = True
        elif call.get("result") is None:
            continue  # still running when recorded: the pairing repair says so
        results.append(result)
    if message.get("tool_calls") and message.get("content") == "":
        message["content"] = None
    out.extend(results)
    return len(out) - before


def _from_records(source: TranscriptSource, records: Iterable[tuple[Any, int]],
                  metadata: dict[str, Any]) -> Transcript:
    report = source.report
    converter = GeminiContents(report)
    model = None
    for record, _n in records:
        if not isinstance(record, MAPPING):
            report.dropped("not_an_object")
            continue
        kind = record.get("type")
        if kind in ("user", "gemini"):
            if kind == "gemini" and isinstance(record.get("model"), str):
                model = model or record["model"]
            if _record_messages(record, converter, report):
                report.converted()
            else:
                report.dropped(f"empty_{kind}_record")
        elif kind in ("info", "error", "warning"):
            report.dropped(f"cli_notice:{kind}")
        else:
            report.dropped(f"unknown:{kind}")
    return source.transcript(converter.messages, model=model, metadata=metadata)


def _read_recording_lines(source: TranscriptSource) -> Transcript:
    """The JSON Lines recording: message records by id (a later line replaces an earlier one),
    rewinds and metadata updates applied in order; memory follows the messages kept."""
    report = source.report
    by_id: dict[str, Mapping[str, Any]] = {}
    metadata: dict[str, Any] = {}
    for _lineno, record in object_records(source):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(by_id)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for ident in ids[cut:]:
                del by_id[ident]
                report.dropped("rewound_message")
            report.dropped("rewind")
        elif record.get("$set") is not None and isinstance(record["$set"], MAPPING):  # most records: None
            metadata.update({k: v for k, v in record["$set"].items() if isinstance(v, (str, int, float, bool))})
            report.absorbed("metadata_update")
        elif isinstance(record.get("id"), str):
            if record["id"] in by_id:
                report.dropped("superseded_by_a_later_record")
            by_id[record["id"]] = record
        elif "projectHash" in record or "sessionId" in record:
            metadata.update({k: v for k, v in record.items() if isinstance(v, (str, int, float, bool))})
            report.absorbed("session_metadata")
        else:
            report.dropped("unknown_record")
    return _from_records(source, ((r, 1) for r in by_id.values()), metadata)


def _read_stream(source: TranscriptSource) -> Transcript:
    stream = _Stream(source.report)
    stream.read(object_records(source))
    return source.transcript(stream.finish(), model=stream.model, metadata=stream.metadata)


class _Stream:
    """``--output-format stream-json`` events read so far: an assistant reply takes its
    ``delta`` chunks, then the ``tool_use`` events of the same response.

    At most one message is open: ``open_text`` (a reply taking chunks, its text so far in
    ``chunks``) or ``open_calls`` (a message taking calls). Any other event closes the reply: its
    chunks are joined then, so one list of chunks is alive at a time. Records are one a line and
    most are chunks, so the counts of converted and merged records are kept here and handed to
    the report once, by ``finish``.
    """

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.out: list[dict[str, Any]] = []
        self.metadata: dict[str, Any] = {}
        self.model: str | None = None
        self.open_text: dict[str, Any] | None = None  # the assistant reply still taking delta chunks
        self.chunks: list[str] = []  # its text so far
        self.open_calls: dict[str, Any] | None = None  # the assistant message still taking tool_use events
        self.converted = 0
        self.merged_chunks = 0
        self.merged_calls = 0

    def read(self, records: Iterable[tuple[int, Mapping[str, Any]]]) -> None:
        """Take every event of ``records`` (one loop, no call per event: most are chunks)."""
        for _lineno, event in records:
            kind = event.get("type")
            if kind == "message":
                if event.get("role") != "assistant":
                    self._user_text(event)
                elif self.open_text is not None and event.get("delta"):
                    # The commonest record: one more chunk of the reply being streamed.
                    chunks = self.chunks
                    chunks.append(str(event.get("content") or ""))
                    if len(chunks) >= 1024:  # joined in batches: no copy of the whole text per chunk
                        chunks[:] = ["".join(chunks)]
                    self.merged_chunks += 1
                else:
                    self._reply(event)
            elif kind == "tool_use":
                self._tool_use(event)
            elif kind == "tool_result":
                self._tool_result(event)
            else:
                self._notice(kind, event)

    def _close_text(self) -> None:
        """The open reply takes no more chunks: its text is theirs, joined."""
        if self.open_text is not None:
            self.open_text["content"] = "".join(self.chunks)
            self.open_text = None
            self.chunks = []

    def _user_text(self, event: Mapping[str, Any]) -> None:
        self._close_text()
        self.open_calls = None
        self.out.append(mark_user_text({"role": "user", "content": str(event.get("content") or "")}, self.report))
        self.converted += 1

    def _reply(self, event: Mapping[str, Any]) -> None:
        """An assistant reply's first text (or a text that does not continue the open reply)."""
        self._close_text()
        self.open_calls = None
        self.open_text = {"role": "assistant", "content": None}
        self.chunks = [str(event.get("content") or "")]
        self.out.append(self.open_text)
        self.converted += 1

    def _tool_use(self, event: Mapping[str, Any]) -> None:
        call = _tool_call(str(event.get("tool_id") or ""), str(event.get("tool_name") or ""), event.get("parameters"))
        # The calls of a response follow its text: they join the open reply, or the calls before them.
        holder = self.open_text if self.open_text is not None else self.open_calls
        self._close_text()
        if holder is not None:
            holder.setdefault("tool_calls", []).append(call)
            self.merged_calls += 1
        else:
            holder = {"role": "assistant", "content": None, "tool_calls": [call]}
            self.out.append(holder)
            self.converted += 1
        self.open_calls = holder

    def _tool_result(self, event: Mapping[str, Any]) -> None:
        self._close_text()
        error = event.get("error")
        error = mapping(error) if error is not None else {}  # most results carry no error at all
        content = event.get("output")
        if content is None and error:
            content = str(error.get("message") or "")
        result: dict[str, Any] = {"role": "tool", "tool_call_id": str(event.get("tool_id") or ""),
                                  "content": str(content or "")}
        if event.get("status") == "error" or error:
            result["_is_error"] = True
        self.out.append(result)
        self.converted += 1
        # Results of one batch of calls stay after it; the next tool_use starts a new reply.
        self.open_calls = None

    def _notice(self, kind: Any, event: Mapping[str, Any]) -> None:
        """The session's init, result and error events (metadata), anything else dropped."""
        report, metadata = self.report, self.metadata
        if kind == "init":
            metadata.update({k: event[k] for k in ("session_id", "model") if event.get(k) is not None})
            self.model = self.model or (event.get("model") if isinstance(event.get("model"), str) else None)
            report.absorbed("init")
        elif kind == "result":
            metadata["status"] = event.get("status")
            if isinstance(event.get("stats"), Mapping):
                metadata["stats"] = dict(event["stats"])
            report.absorbed("result")
        elif kind == "error":
            metadata.setdefault("notices", []).append(
                {"severity": event.get("severity"), "message": event.get("message")})
            report.absorbed("error_notice")
        else:
            report.dropped(f"unknown:{kind}")

    def finish(self) -> list[dict[str, Any]]:
        """The messages (the last reply's chunks joined); the counts kept so far reported."""
        self._close_text()
        self.report.converted(self.converted)
        if self.merged_chunks:
            self.report.merged("assistant_delta_chunks", self.merged_chunks)
        if self.merged_calls:
            self.report.merged("calls_of_one_response", self.merged_calls)
        return self.out


FORMAT = TranscriptFormat(
    name=NAME,
    description="Gemini CLI saved chats, session recordings (JSON/JSONL), stream-json events and json output",
    versions="Gemini CLI: /chat save checkpoints, chats/session-*.json and .jsonl recordings, stream-json events, "
             "--output-format json objects (with and without session_id)",
    detect=detect,
    read=read,
)
