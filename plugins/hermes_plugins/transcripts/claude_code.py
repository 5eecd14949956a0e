"""Claude Code project JSONL (``~/.claude/projects/<dir>/<session>.jsonl``).

One record per line. ``user``/``assistant`` records carry an Anthropic ``message``; one API
response is written as several ``assistant`` records sharing ``message.id`` (one per content
block), and the results of parallel tool calls can arrive between them. Records of a response
are merged back into one assistant message, and results are placed after it (the core's
pairing repair moves any that arrived early). Bookkeeping records (``progress``,
``file-history-snapshot``, ``queue-operation``, most ``system`` subtypes) are dropped and
counted by type; the ``compact_boundary`` record goes to ``metadata["compactions"]`` and the
continuation summary after it is marked ``_summary: "claude-code"``; ``<system-reminder>`` and
``<task-notification>`` text is marked ``_injected``; ``toolUseResult`` (the result again, in
structured form) is dropped and counted. No system prompt is stored in these files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.transcripts import (
    Detection,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
)
from hermes_plugins.transcripts.common import (
    assistant_from_blocks,
    head_objects,
    mapping,
    mark_user_text,
    object_records,
    reads,
    tag,
    user_from_blocks,
)

NAME = "claude-code"
CONVERSATION = frozenset({"user", "assistant"})
BOOKKEEPING = frozenset({
    "progress", "file-history-snapshot", "queue-operation", "summary", "system", "custom-title",
    "tag", "agent-name",
})
#: ``session_id``: the SDK's stream-json messages (``claude -p --output-format stream-json``, and
#: Qwen Code's, which follows the same shape).
_MARKERS = ("sessionId", "parentUuid", "uuid", "isSidechain", "userType", "session_id")


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    typed = [r for r in records if isinstance(r.get("type"), str)]
    known = [r for r in typed if r["type"] in CONVERSATION or r["type"] in BOOKKEEPING]
    marked = [r for r in records if any(key in r for key in _MARKERS)]
    # Newer Claude Code versions add record types; typed records and known ones suffice.
    if not known or len(typed) < len(records) * 0.8:
        return Detection.refuse("records have no Claude Code 'type' (user/assistant/progress ...)")
    if not marked:
        return Detection.refuse("records have no sessionId/uuid/parentUuid")
    return Detection.accept(0.95, "typed records with sessionId/uuid (Claude Code project log)")


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    out: list[dict[str, Any]] = []
    blocks_of: dict[int, list[Any]] = {}  # out index -> blocks of an assistant message being merged
    open_id: str | None = None  # message.id of the assistant message still taking blocks
    open_index = -1
    seen_uuids: set[str] = set()
    metadata: dict[str, Any] = {}
    compactions: list[dict[str, Any]] = []
    summary_due = False
    model = None
    for _lineno, record in object_records(source):
        kind = tag(record.get("type"))
        uuid = record.get("uuid")
        if isinstance(uuid, str) and kind in CONVERSATION:
            if uuid in seen_uuids:
                report.dropped("duplicate_uuid")
                continue
            seen_uuids.add(uuid)
        if kind == "system" and record.get("subtype") == "compact_boundary":
            meta = mapping(record.get("compactMetadata"))
            compactions.append({"timestamp": record.get("timestamp"), **dict(meta)})
            report.absorbed("compact_boundary")
            summary_due = True
            continue
        if kind not in CONVERSATION:
            subtype = record.get("subtype")
            report.dropped(f"{kind}:{subtype}" if kind == "system" and subtype else str(kind))
            if kind == "summary" and isinstance(record.get("summary"), str):
                metadata.setdefault("titles", []).append(record["summary"])
            continue
        if record.get("isSidechain"):
            report.dropped("sidechain")
            continue
        if not metadata.get("session_id") and record.get("sessionId"):
            metadata["session_id"] = record.get("sessionId")
            for key, name in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("version", "claude_code_version")):
                if record.get(key):
                    metadata[name] = record[key]
        if "toolUseResult" in record:
            report.changed("tool_use_result_duplicates_dropped")
        message = record.get("message")
        if not isinstance(message, Mapping):
            report.dropped(f"{kind}_without_message")
            continue
        content = message.get("content")
        if kind == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
            ident = message.get("id")
            if not model and isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
                model = message["model"]
            only_results_since = all(m.get("role") == "tool" for m in out[open_index + 1:]) if open_index >= 0 else False
            if ident and ident == open_id and only_results_since:
                blocks_of[open_index].extend(blocks)
                report.merged("assistant_records_of_one_response")
                continue
            placeholder: dict[str, Any] = {"role": "assistant"}
            if record.get("isApiErrorMessage"):
                placeholder["_is_error"] = True
            out.append(placeholder)
            open_index = len(out) - 1
            blocks_of[open_index] = list(blocks)
            open_id = ident if isinstance(ident, str) else None
            report.converted()
            continue
        converted = user_from_blocks(content, report)
        if not converted:
            report.dropped("empty_user_record")
            continue
        last = converted[-1]
        if last.get("role") == "user":
            if record.get("isCompactSummary") or summary_due:
                if record.get("isCompactSummary") or last.get("_summary"):
                    if "_summary" not in last:
                        report.relabelled("marked_summary:claude-code")
                    last.pop("_injected", None)
                    last["_summary"] = "claude-code"
                    summary_due = False
            elif record.get("isMeta") and "_injected" not in last:
                last["_injected"] = "meta"
                report.relabelled("marked_injected:meta")
            else:
                mark_user_text(last, report) if "_injected" not in last and "_summary" not in last else None
        if any(m.get("role") != "tool" for m in converted):
            open_id, open_index = None, -1
        out.extend(converted)
        report.converted()
    for index, blocks in blocks_of.items():
        message = assistant_from_blocks(blocks, report)
        if out[index].get("_is_error"):
            message["_is_error"] = True
        out[index].clear()
        out[index].update(message)
    if compactions:
        metadata["compactions"] = compactions
    return source.transcript(out, model=model, metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="Claude Code project JSONL (~/.claude/projects/<dir>/<session>.jsonl)",
    versions="Claude Code project JSONL as of 2025-2026; SDK stream-json (also Qwen Code's)",
    detect=detect,
    read=read,
)
