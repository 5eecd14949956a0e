"""SWE-agent trajectories (``*.traj``): ``{trajectory, history, info}``.

``history`` holds the chat the model saw. In 0.x (text ReAct) actions and observations are
assistant and user turns: observations (every user turn after the first action, or
``message_type: observation``) are marked ``_injected: "observation"``, and the in-context
demonstration (``is_demo``, or ``message_type: demonstration``) ``_demonstration``; in 1.x assistant messages carry
``tool_calls`` and observations are ``tool`` messages answering ``tool_call_ids`` (ids are
reused across calls: pairing stays positional). ``thought``/``action`` repeat the content and
are dropped with a count; ``trajectory`` steps repeat the history and are counted as such;
``info`` (exit status, submission, model stats) goes to the metadata.
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
)
from hermes_plugins.transcripts.common import document_list, mapping, reads, with_list
from hermes_plugins.transcripts.openai_chat import convert_message

NAME = "swe-agent"
_EXTRA = ("agent", "message_type", "thought", "action", "is_demo", "tool_call_ids", "cache_control")


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    doc = with_list(source.document_or_none(), "history")
    if doc is None:
        return Detection.refuse("no 'history' list")
    if "trajectory" in doc or "info" in doc:
        return Detection.accept(0.95, "{trajectory, history, info} (a SWE-agent .traj)")
    return Detection.refuse("a 'history' without 'trajectory' or 'info'")


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    doc, history = document_list(source, "history")
    trajectory = doc.get("trajectory") if isinstance(doc.get("trajectory"), list) else []
    if trajectory:
        report.saw(len(trajectory))
        report.dropped("trajectory_steps_repeating_the_history", len(trajectory))
    messages: list[dict[str, Any]] = []
    system_prompt = None
    version = "1.x" if any(isinstance(m, Mapping) and (m.get("tool_calls") or m.get("role") == "tool")
                           for m in history) else "0.x"
    for number, item in enumerate(history):
        if not isinstance(item, Mapping) or not isinstance(item.get("role"), str):
            raise TypeError(f"history[{number}] is not a message with a role")
        message = {k: v for k, v in item.items() if k not in _EXTRA}
        demo = item.get("is_demo") or item.get("message_type") == "demonstration"
        if any(k in item for k in ("thought", "action")):
            report.changed("thought_and_action_repeating_content_dropped")
        if item["role"] == "system" and not messages and system_prompt is None and not demo:
            system_prompt = item.get("content") if isinstance(item.get("content"), str) else None
            if system_prompt is not None:
                report.absorbed("system_prompt")
                continue
        if item["role"] == "tool" and _one_result_per_call(item, message, messages, report):
            continue
        if demo:
            message["_demonstration"] = True
            report.relabelled("marked_demonstration")
        elif item["role"] == "user" and _is_observation(item, messages, version):
            # Nobody types after the task statement: later user turns are the environment's
            # output, not requests (else the last "request" is ``bash-$`` and the task is lost).
            message["_injected"] = "observation"
            report.relabelled("marked_injected:observation")
        messages.append(convert_message(message, report))
        report.converted()
    info = mapping(doc.get("info"))
    stats = mapping(info.get("model_stats"))
    metadata = {"swe_agent_version": version, **{k: info[k] for k in ("exit_status", "submission") if k in info}}
    if stats:
        metadata["model_stats"] = dict(stats)
    return source.transcript(messages, system_prompt=system_prompt, model=_model(doc), metadata=metadata)


def _one_result_per_call(item: Mapping[str, Any], message: dict[str, Any], messages: list[dict[str, Any]],
                         report: ReportBuilder) -> bool:
    """Give the tool ``message`` the id of the call it answers; when one observation answers
    several calls, add one result each (the text on the first) and say so (``True``)."""
    ids = item.get("tool_call_ids") or ([item["tool_call_id"]] if item.get("tool_call_id") else [])
    message["tool_call_id"] = str(ids[0]) if ids else ""
    if len(ids) <= 1:
        return False
    messages.append(convert_message(message, report))
    for extra in ids[1:]:
        messages.append({"role": "tool", "tool_call_id": str(extra),
                         "content": "[see the previous result: one observation answered several calls]"})
        report.changed("observation_shared_by_calls_split")
    report.converted()
    return True


def _model(doc: Mapping[str, Any]) -> str | None:
    """The model the run's ``replay_config`` (an object, or its JSON text) names."""
    replay = doc.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = json.loads(replay)
        except ValueError:
            replay = None
    if not isinstance(replay, Mapping):
        return None
    model_cfg = mapping(mapping(replay.get("agent")).get("model"))
    return model_cfg.get("name") if isinstance(model_cfg.get("name"), str) else None


def _is_observation(item: Mapping[str, Any], messages: list[dict[str, Any]], version: str) -> bool:
    """A user-role history item the environment wrote: one after an assistant action that 1.x
    labels ``message_type: observation``, or in 0.x (which does not say) any such user turn.
    Before the first action a user turn is the task statement, though 1.x labels the instance
    template an observation too."""
    if not any(m.get("role") == "assistant" for m in messages):
        return False
    if item.get("message_type") == "observation":
        return True
    return item.get("message_type") is None and version == "0.x"


FORMAT = TranscriptFormat(
    name=NAME,
    description="SWE-agent trajectory (.traj), 0.x text ReAct and 1.x function calling",
    versions="SWE-agent 0.x (text ReAct), 1.x (function calling)",
    detect=detect,
    read=read,
)
