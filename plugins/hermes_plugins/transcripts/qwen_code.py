"""Qwen Code (Gemini CLI's fork) session recordings:
``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``.

One ``ChatRecord`` a line: ``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
version, message?, toolCallResult?, systemPayload?, provenance?}``. ``message`` is Gemini
``Content`` (read as Gemini CLI's saved chats are): ``user`` records are requests,
``assistant`` records the model (``functionCall`` and ``thought`` parts), ``tool_result``
records the responses (``toolCallResult.error`` marks ``_is_error``). The records form a tree by
``parentUuid``: the conversation is the chain that ends at the last record; records on other
branches (abandoned by a rewind) are dropped and counted. Bookkeeping records are remembered
for the last 1,024 only (memory follows the messages): a parent further back is read as the
conversation continuing (counted as ``parent_outside_window_read_as_linear``). User records the CLI wrote itself
(``provenance`` other than ``real_user``, or subtypes such as ``notification``, ``cron``) are
marked ``_injected: "harness-message"``; ``system`` records are bookkeeping (``chat_compression``
goes to ``metadata["compactions"]``), dropped by subtype.

Qwen Code's ``--output-format stream-json`` follows Claude Code's SDK message shape and is read
by the ``claude-code`` reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import Detection, ReportBuilder, Transcript, TranscriptFormat, TranscriptSource
from hermes_plugins.transcripts.common import head_objects, mapping, object_records, reads, tag
from hermes_plugins.transcripts.gemini_cli import GeminiContents

NAME = "qwen-code"
RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
_HARNESS_SUBTYPES = frozenset({
    "notification", "cron", "background_task_completed", "agent_launch_prompt", "goal_runtime",
    "agent_retry", "mid_turn_user_message",
})


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    typed = [r for r in records if tag(r.get("type")) in RECORD_TYPES and "uuid" in r and "sessionId" in r]
    if len(typed) < len(records) * 0.9:
        return Detection.refuse("records are not ChatRecords (type user/assistant/tool_result/system with uuid)")
    parts = [r for r in typed if isinstance(mapping(r.get("message")).get("parts"), list)]
    if not parts:
        return Detection.refuse("no record holds Gemini Content (message.parts)")
    return Detection.accept(0.96, "ChatRecords holding Gemini Content (message.role/parts)")


#: How many recent bookkeeping records a parent may point back to (beyond: read as linear).
ALIAS_WINDOW = 1024


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    tree = _RecordTree(report)
    for _lineno, record in object_records(source):
        tree.add(record)
    chain = tree.active_chain()
    converter = GeminiContents(report)
    model = None
    for uuid, record in tree.kept.items():
        if uuid not in chain:
            report.dropped("off_the_active_branch")
            continue
        if _convert(record, converter, report) and record["type"] == "assistant" \
                and isinstance(record.get("model"), str):
            model = model or record["model"]
    if tree.compactions:
        tree.metadata["compactions"] = tree.compactions
    return source.transcript(converter.messages, model=model, metadata=tree.metadata)


class _RecordTree:
    """The conversation records read so far, linked by ``parentUuid``; bookkeeping records are
    counted and, for the last ``ALIAS_WINDOW`` of them, remembered by the ancestor they stand for."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.kept: dict[str, Mapping[str, Any]] = {}  # uuid -> record (conversation records only)
        self.up: dict[str, str | None] = {}  # conversation uuid -> its nearest conversation ancestor
        # Bookkeeping uuid -> nearest conversation ancestor, for the last ALIAS_WINDOW of them only:
        # memory follows the messages, not the records (a session is mostly telemetry records).
        self.alias: dict[str, str | None] = {}
        self.tail: str | None = None  # the newest conversation record read
        self.tip: str | None = None  # nearest conversation ancestor of the newest record
        self.metadata: dict[str, Any] = {}
        self.compactions: list[dict[str, Any]] = []

    def _resolve(self, parent: Any) -> str | None:
        if not isinstance(parent, str):
            return None
        if parent in self.kept:
            return parent
        if parent in self.alias:
            return self.alias[parent]
        self.report.changed("parent_outside_window_read_as_linear")
        return self.tail

    def add(self, record: Mapping[str, Any]) -> None:
        uuid = record.get("uuid")
        kind = tag(record.get("type"))
        if not self.metadata and record.get("sessionId"):
            self.metadata = {k: record[k] for k in ("sessionId", "cwd", "version", "gitBranch") if record.get(k)}
        if isinstance(uuid, str):
            ancestor = self._resolve(record.get("parentUuid"))
            if kind in ("user", "assistant", "tool_result") and isinstance(record.get("message"), Mapping):
                if uuid in self.kept:
                    self.report.dropped("duplicate_uuid")  # written again (a resumed session): the later stands
                    del self.kept[uuid]
                self.up[uuid] = ancestor if ancestor != uuid else None
                self.kept[uuid] = record
                self.tail = self.tip = uuid
                return
            self.alias[uuid] = ancestor
            if len(self.alias) > ALIAS_WINDOW:
                del self.alias[next(iter(self.alias))]
            self.tip = ancestor
        self._bookkeeping(record, kind)

    def _bookkeeping(self, record: Mapping[str, Any], kind: str | None) -> None:
        report = self.report
        if kind == "system" and record.get("subtype") == "chat_compression":
            self.compactions.append({"timestamp": record.get("timestamp"),
                                     **{k: v for k, v in mapping(record.get("systemPayload")).items()
                                        if isinstance(v, (str, int, float, bool))}})
            report.absorbed("chat_compression")
        elif kind == "system":
            report.dropped(f"system:{record.get('subtype')}")
        elif kind in RECORD_TYPES:
            report.dropped(f"{kind}_without_message")
        else:
            report.dropped(f"unknown:{kind}")

    def active_chain(self) -> set[str]:
        """The conversation records on the chain that ends at the newest record."""
        chain: set[str] = set()
        node = self.tip
        while node is not None and node not in chain:
            chain.add(node)
            node = self.up.get(node)
        return chain


def _convert(record: Mapping[str, Any], converter: GeminiContents, report: ReportBuilder) -> bool:
    """Add ``record``'s messages to ``converter``, marked; whether it gave any."""
    kind = record["type"]
    message = mapping(record.get("message"))
    before = len(converter.messages)
    converter.add({"role": "model" if kind == "assistant" else "user", "parts": message.get("parts")})
    added = converter.messages[before:]
    if not added:
        report.dropped(f"empty_{kind}_record")
        return False
    report.converted()
    if kind == "tool_result" and mapping(record.get("toolCallResult")).get("error"):
        for item in added:
            if item["role"] == "tool":
                item["_is_error"] = True
    provenance = record.get("provenance")
    if kind == "user" and (tag(record.get("subtype")) in _HARNESS_SUBTYPES
                           or provenance not in (None, "real_user")):
        for item in added:
            if item["role"] == "user" and "_injected" not in item:
                item["_injected"] = "harness-message"
                report.relabelled("marked_injected:harness-message")
    return True


FORMAT = TranscriptFormat(
    name=NAME,
    description="Qwen Code session recordings (~/.qwen/projects/<project>/chats/<session>.jsonl)",
    versions="Qwen Code ChatRecord JSONL (uuid/parentUuid tree); its stream-json is read as claude-code",
    detect=detect,
    read=read,
)
