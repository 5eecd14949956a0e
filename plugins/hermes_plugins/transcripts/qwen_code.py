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

from hermes_core.transcripts import Detection, Transcript, TranscriptFormat, TranscriptSource
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
    kept: dict[str, Mapping[str, Any]] = {}  # uuid -> record (conversation records only)
    up: dict[str, str | None] = {}  # conversation uuid -> its nearest conversation ancestor
    # Bookkeeping uuid -> nearest conversation ancestor, for the last ALIAS_WINDOW of them only:
    # memory follows the messages, not the records (a session is mostly telemetry records).
    alias: dict[str, str | None] = {}
    tail: str | None = None  # the newest conversation record read
    tip: str | None = None  # nearest conversation ancestor of the newest record
    metadata: dict[str, Any] = {}
    compactions: list[dict[str, Any]] = []

    def resolve(parent: Any) -> str | None:
        if not isinstance(parent, str):
            return None
        if parent in kept:
            return parent
        if parent in alias:
            return alias[parent]
        report.changed("parent_outside_window_read_as_linear")
        return tail

    for _lineno, record in object_records(source):
        uuid = record.get("uuid")
        kind = tag(record.get("type"))
        if not metadata and record.get("sessionId"):
            metadata = {k: record[k] for k in ("sessionId", "cwd", "version", "gitBranch") if record.get(k)}
        conversation = kind in ("user", "assistant", "tool_result") and isinstance(uuid, str) \
            and isinstance(record.get("message"), Mapping)
        if isinstance(uuid, str):
            ancestor = resolve(record.get("parentUuid"))
            if conversation:
                if uuid in kept:
                    report.dropped("duplicate_uuid")  # written again (a resumed session): the later stands
                    del kept[uuid]
                up[uuid] = ancestor if ancestor != uuid else None
                kept[uuid] = record
                tail = tip = uuid
                continue
            alias[uuid] = ancestor
            if len(alias) > ALIAS_WINDOW:
                del alias[next(iter(alias))]
            tip = ancestor
        if kind == "system" and record.get("subtype") == "chat_compression":
            compactions.append({"timestamp": record.get("timestamp"),
                                **{k: v for k, v in mapping(record.get("systemPayload")).items()
                                   if isinstance(v, (str, int, float, bool))}})
            report.absorbed("chat_compression")
        elif kind == "system":
            report.dropped(f"system:{record.get('subtype')}")
        elif kind in RECORD_TYPES:
            report.dropped(f"{kind}_without_message")
        else:
            report.dropped(f"unknown:{kind}")
    chain: set[str] = set()
    node = tip
    while node is not None and node not in chain:
        chain.add(node)
        node = up.get(node)
    converter = GeminiContents(report)
    model = None
    for uuid, record in kept.items():
        if uuid not in chain:
            report.dropped("off_the_active_branch")
            continue
        message = mapping(record.get("message"))
        kind = record["type"]
        content = {"role": "model" if kind == "assistant" else "user", "parts": message.get("parts")}
        before = len(converter.messages)
        converter.add(content)
        added = converter.messages[before:]
        if not added:
            report.dropped(f"empty_{kind}_record")
            continue
        report.converted()
        if kind == "assistant" and isinstance(record.get("model"), str):
            model = model or record["model"]
        result = mapping(record.get("toolCallResult"))
        if kind == "tool_result" and result.get("error"):
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
    if compactions:
        metadata["compactions"] = compactions
    return source.transcript(converter.messages, model=model, metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="Qwen Code session recordings (~/.qwen/projects/<project>/chats/<session>.jsonl)",
    versions="Qwen Code ChatRecord JSONL (uuid/parentUuid tree); its stream-json is read as claude-code",
    detect=detect,
    read=read,
)
