"""mini-swe-agent trajectories (``*.traj.json``): ``{info, messages, trajectory_format}``.

1.x (``trajectory_format: "mini-swe-agent-1"``) is text ReAct: the model answers with one
fenced ``bash`` block and every later user message is the environment's output (or an error
the agent raised), so user turns after the first action are marked ``_injected:
"observation"``. 2.x (``"mini-swe-agent-1.1"``) may use tool calling: observations are ``tool``
messages (``extra.returncode`` non-zero or ``extra.exception_info`` marks ``_is_error``),
format errors and other interruptions are user messages with ``extra.interrupt_type`` (marked
``_injected: "harness-message"``), models on the Responses API leave Responses items in the
list, and the run ends with a message of role ``exit`` (status and submission: absorbed into
the metadata - the model never saw it). ``extra`` (the raw response, cost, timestamps) is
dropped with a count; ``info`` goes to the metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    ROLES,
    Detection,
    InvalidMessagesError,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    validate_messages,
)
from hermes_plugins.transcripts.common import (
    document_list,
    mapping,
    reads,
    tag,
    unknown_role_message,
    with_list,
)
from hermes_plugins.transcripts.openai_chat import convert_message
from hermes_plugins.transcripts.responses import ITEM_TYPES, ItemConverter

NAME = "mini-swe-agent"


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    doc = with_list(source.document_or_none(), "messages")
    if doc is None:
        return Detection.refuse("no 'messages' list")
    fmt = doc.get("trajectory_format")
    if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
        return Detection.accept(0.95, f"trajectory_format {fmt!r}")
    if "mini_version" in mapping(doc.get("info")):
        return Detection.accept(0.9, "info.mini_version (a mini-swe-agent trajectory)")
    return Detection.refuse("no trajectory_format 'mini-swe-agent-*' nor info.mini_version")


def _failed(extra: Mapping[str, Any]) -> bool:
    code = extra.get("returncode")
    return bool(extra.get("exception_info")) or (isinstance(code, int) and code != 0)


def read(source: TranscriptSource) -> Transcript:
    doc, raw = document_list(source, "messages")
    info = mapping(doc.get("info"))
    trajectory = _Trajectory(source, info, str(doc.get("trajectory_format") or ""))
    for number, item in enumerate(raw):
        trajectory.add(number, item)
    model_cfg = mapping(mapping(info.get("config")).get("model"))
    model = model_cfg.get("model_name") if isinstance(model_cfg.get("model_name"), str) else None
    metadata = {k: v for k, v in trajectory.metadata.items() if v is not None}
    return source.transcript(trajectory.converter.finish(), system_prompt=trajectory.system_prompt,
                             model=model, metadata=metadata)


class _Trajectory:
    """The messages of a trajectory read so far: Responses items (2.x on the Responses API) go
    through an ``ItemConverter``, chat messages are checked, marked and appended to its list."""

    def __init__(self, source: TranscriptSource, info: Mapping[str, Any], fmt: str) -> None:
        self.source = source
        self.report = report = source.report
        self.version = "2.x" if fmt == "mini-swe-agent-1.1" or str(info.get("mini_version", "")).startswith("2") \
            else "1.x"
        self.converter = ItemConverter(report)
        self.system_prompt: str | None = None
        self.metadata: dict[str, Any] = {"trajectory_format": fmt or None, "mini_swe_agent_version": self.version}
        for key in ("exit_status", "submission", "mini_version"):
            if info.get(key) is not None:
                self.metadata[key] = info[key]
        if isinstance(info.get("model_stats"), Mapping):
            self.metadata["model_stats"] = dict(info["model_stats"])
        self.acted = False  # the agent has acted: later user turns are the environment's

    def add(self, number: int, item: Any) -> None:
        report = self.report
        if not isinstance(item, Mapping):
            report.dropped("not_an_object")
            return
        extra = mapping(item.get("extra"))
        if "extra" in item:
            report.changed("extra_metadata_dropped")
        if tag(item.get("type")) in ITEM_TYPES:
            self._item(item, extra)
            return
        self.converter._open = None  # a chat message ends any open Responses turn
        role = item.get("role")
        if role == "exit":
            self.metadata.setdefault("exit_status", extra.get("exit_status"))
            self.metadata.setdefault("submission", extra.get("submission", item.get("content")))
            report.absorbed("exit_message")
        elif not isinstance(role, str) or role not in ROLES:
            kept = unknown_role_message(item, str(role or "none"), report)
            if kept is not None:
                self.converter.messages.append(kept)
        else:
            self._message(number, role, item, extra)

    def _item(self, item: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
        messages = self.converter.messages
        before = len(messages)
        self.converter.add({k: v for k, v in item.items() if k != "extra"})
        self.acted = self.acted or item.get("type") != "message"
        if extra.get("interrupt_type") and len(messages) > before and messages[-1]["role"] == "user":
            messages[-1]["_injected"] = "harness-message"
            self.report.relabelled("marked_injected:harness-message")

    def _message(self, number: int, role: str, item: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
        report, messages = self.report, self.converter.messages
        message = {k: v for k, v in item.items() if k != "extra"}
        try:
            validate_messages((message,))
        except InvalidMessagesError as exc:  # a malformed message (not an odd role): named
            what = str(exc).partition(": ")[2]
            raise InvalidMessagesError(f"{self.source.name}: message {number}: {what}", index=number) from None
        if role == "system" and not messages and self.system_prompt is None \
                and isinstance(message.get("content"), str):
            self.system_prompt = message["content"]
            report.absorbed("system_prompt")
            return
        if role == "assistant":
            self.acted = True
        elif role == "tool" and _failed(extra):
            message["_is_error"] = True
        elif role == "user" and self.acted:
            if extra.get("interrupt_type"):
                message["_injected"] = "harness-message"
                report.relabelled("marked_injected:harness-message")
            elif self.version == "1.x" or "returncode" in extra:
                # 1.x writes every observation (and the agent's own errors) as a user turn.
                message["_injected"] = "observation"
                report.relabelled("marked_injected:observation")
        messages.append(convert_message(message, report))
        report.converted()


FORMAT = TranscriptFormat(
    name=NAME,
    description="mini-swe-agent trajectory (.traj.json): text ReAct and tool calling",
    versions="mini-swe-agent 1.x (mini-swe-agent-1), 2.x (mini-swe-agent-1.1)",
    detect=detect,
    read=read,
)
