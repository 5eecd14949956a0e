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

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
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
    reader = _Records(source.report)
    for _lineno, record in object_records(source):
        reader.add(record)
    return source.transcript(reader.finish(), model=reader.model, metadata=reader.metadata)


class _Records:
    """The conversation being rebuilt from the records read so far.

    An assistant message stays open (its blocks in ``blocks_of``) while further records of the
    same response (``message.id``) arrive with only tool results between them; ``finish``
    builds each assistant message from its blocks."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.out: list[dict[str, Any]] = []
        self.blocks_of: dict[int, list[Any]] = {}  # out index -> blocks of an assistant message
        self.open_id: str | None = None  # message.id of the assistant message still taking blocks
        self.open_index = -1
        self.seen_uuids: set[str] = set()
        self.metadata: dict[str, Any] = {}
        self.compactions: list[dict[str, Any]] = []
        self.summary_due = False  # a compact_boundary was read: the next user text is its summary
        self.model: str | None = None

    def add(self, record: Mapping[str, Any]) -> None:
        kind = tag(record.get("type"))
        if self._absorbed(record, kind):
            return
        self._session_facts(record)
        if "toolUseResult" in record:
            self.report.changed("tool_use_result_duplicates_dropped")
        message = record.get("message")
        if not isinstance(message, Mapping):
            self.report.dropped(f"{kind}_without_message")
        elif kind == "assistant":
            self._assistant(record, message)
        else:
            self._user(record, message.get("content"))

    def _absorbed(self, record: Mapping[str, Any], kind: str | None) -> bool:
        """Whether ``record`` is counted here and leaves no message: a duplicate, a compaction
        boundary, bookkeeping, a sidechain."""
        report = self.report
        uuid = record.get("uuid")
        if isinstance(uuid, str) and kind in CONVERSATION:
            if uuid in self.seen_uuids:
                report.dropped("duplicate_uuid")
                return True
            self.seen_uuids.add(uuid)
        if kind == "system" and record.get("subtype") == "compact_boundary":
            meta = mapping(record.get("compactMetadata"))
            self.compactions.append({"timestamp": record.get("timestamp"), **dict(meta)})
            report.absorbed("compact_boundary")
            self.summary_due = True
            return True
        if kind not in CONVERSATION:
            subtype = record.get("subtype")
            report.dropped(f"{kind}:{subtype}" if kind == "system" and subtype else str(kind))
            if kind == "summary" and isinstance(record.get("summary"), str):
                self.metadata.setdefault("titles", []).append(record["summary"])
            return True
        if record.get("isSidechain"):
            report.dropped("sidechain")
            return True
        return False

    def _session_facts(self, record: Mapping[str, Any]) -> None:
        if not self.metadata.get("session_id") and record.get("sessionId"):
            self.metadata["session_id"] = record.get("sessionId")
            for key, name in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("version", "claude_code_version")):
                if record.get(key):
                    self.metadata[name] = record[key]

    def _assistant(self, record: Mapping[str, Any], message: Mapping[str, Any]) -> None:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
        ident = message.get("id")
        named = message.get("model")
        if not self.model and isinstance(named, str) and named != "<synthetic>":
            self.model = named
        out, open_index = self.out, self.open_index
        only_results_since = all(m.get("role") == "tool" for m in out[open_index + 1:]) if open_index >= 0 else False
        if ident and ident == self.open_id and only_results_since:
            self.blocks_of[open_index].extend(blocks)
            self.report.merged("assistant_records_of_one_response")
            return
        placeholder: dict[str, Any] = {"role": "assistant"}
        if record.get("isApiErrorMessage"):
            placeholder["_is_error"] = True
        out.append(placeholder)
        self.open_index = len(out) - 1
        self.blocks_of[self.open_index] = list(blocks)
        self.open_id = ident if isinstance(ident, str) else None
        self.report.converted()

    def _user(self, record: Mapping[str, Any], content: Any) -> None:
        report = self.report
        converted = user_from_blocks(content, report)
        if not converted:
            report.dropped("empty_user_record")
            return
        last = converted[-1]
        if last.get("role") == "user":
            self._mark_user(record, last)
        if any(m.get("role") != "tool" for m in converted):
            self.open_id, self.open_index = None, -1
        self.out.extend(converted)
        report.converted()

    def _mark_user(self, record: Mapping[str, Any], last: dict[str, Any]) -> None:
        """Mark the user text of ``record``: a compaction summary, harness meta text, or what
        its words say (``mark_user_text``)."""
        report = self.report
        if record.get("isCompactSummary") or self.summary_due:
            if record.get("isCompactSummary") or last.get("_summary"):
                if "_summary" not in last:
                    report.relabelled("marked_summary:claude-code")
                last.pop("_injected", None)
                last["_summary"] = "claude-code"
                self.summary_due = False
        elif record.get("isMeta") and "_injected" not in last:
            last["_injected"] = "meta"
            report.relabelled("marked_injected:meta")
        elif "_injected" not in last and "_summary" not in last:
            mark_user_text(last, report)

    def finish(self) -> list[dict[str, Any]]:
        """The messages, each assistant message built from its blocks."""
        out = self.out
        for index, blocks in self.blocks_of.items():
            message = assistant_from_blocks(blocks, self.report)
            if out[index].get("_is_error"):
                message["_is_error"] = True
            out[index].clear()
            out[index].update(message)
        if self.compactions:
            self.metadata["compactions"] = self.compactions
        return out


FORMAT = TranscriptFormat(
    name=NAME,
    description="Claude Code project JSONL (~/.claude/projects/<dir>/<session>.jsonl)",
    versions="Claude Code project JSONL as of 2025-2026; SDK stream-json (also Qwen Code's)",
    detect=detect,
    read=read,
)
