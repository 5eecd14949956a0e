"""ATIF, Harbor's Agent Trajectory Interchange Format: ``{schema_version: "ATIF-v1.x",
session_id, agent, steps: [...]}``.

Each step has a ``source`` (``system``, ``user``, ``agent``) and a ``message``; agent steps may
carry ``reasoning_content`` (kept as ``_reasoning``), ``tool_calls``
(``tool_call_id``/``function_name``/``arguments``) and an ``observation`` whose ``results``
answer them by ``source_call_id`` (a result without one becomes a user message marked
``_injected: "observation"``). Agent name, version and model go to the metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    image_placeholder,
    make_tool_call,
)
from hermes_plugins.transcripts.common import document_list, mapping, mark_user_text, reads, simplify_parts, with_list

NAME = "atif"


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    doc = with_list(source.document_or_none(), "steps")
    if doc is None:
        return Detection.refuse("no 'steps' list")
    version = str(doc.get("schema_version") or "")
    if version.upper().startswith("ATIF"):
        return Detection.accept(0.98, f"schema_version {version}")
    if all(isinstance(s, Mapping) and "step_id" in s and "source" in s for s in doc["steps"][:20]):
        return Detection.accept(0.6, "steps with step_id and source")
    return Detection.refuse("no ATIF schema_version")


def _text(value: Any, source: TranscriptSource) -> Any:
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, Mapping) and part.get("type") == "image":
                parts.append(image_placeholder(part, source.report))
            elif isinstance(part, Mapping):
                parts.append({"type": "text", "text": str(part.get("text") or "")})
            else:
                parts.append({"type": "text", "text": str(part)})
        return simplify_parts(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    doc, steps = document_list(source, "steps")
    messages: list[dict[str, Any]] = []
    system_prompt = None
    for number, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise TypeError(f"step {number} is not an object")
        who = step.get("source")
        text = _text(step.get("message"), source)
        if who == "system":
            if not messages and system_prompt is None and isinstance(text, str):
                system_prompt = text
                report.absorbed("system_prompt")
            else:
                messages.append({"role": "system", "content": text})
                report.converted()
            continue
        if who == "user":
            messages.append(mark_user_text({"role": "user", "content": text}, report))
            report.converted()
            continue
        if who != "agent":
            raise ValueError(f"step {number}: unknown source {who!r}")
        message: dict[str, Any] = {"role": "assistant", "content": text}
        calls = [
            make_tool_call(str(c.get("tool_call_id") or ""), str(c.get("function_name") or ""), c.get("arguments"))
            for c in step.get("tool_calls") or () if isinstance(c, Mapping)
        ]
        if calls:
            message["tool_calls"] = calls
            if not text:
                message["content"] = None
        if step.get("reasoning_content"):
            message["_reasoning"] = str(step["reasoning_content"])
            report.changed("reasoning_kept_as_metadata")
        messages.append(message)
        report.converted()
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, Mapping) else None
        loose = []
        for result in results or ():
            if not isinstance(result, Mapping):
                continue
            content = _text(result.get("content"), source)
            if result.get("source_call_id"):
                messages.append({"role": "tool", "tool_call_id": str(result["source_call_id"]), "content": content})
                report.changed("observation_results_as_tool_messages")
            else:
                loose.append({"role": "user", "content": content, "_injected": "observation"})
                report.relabelled("marked_injected:observation")
        messages.extend(loose)
    agent = mapping(doc.get("agent"))
    metadata = {"session_id": doc.get("session_id"), "schema_version": doc.get("schema_version"),
                "agent": agent.get("name"), "agent_version": agent.get("version")}
    tools = [dict(t) for t in agent.get("tool_definitions") or () if isinstance(t, Mapping)]
    return source.transcript(messages, system_prompt=system_prompt, tools=tools,
                             model=agent.get("model_name") if isinstance(agent.get("model_name"), str) else None,
                             metadata={k: v for k, v in metadata.items() if v is not None})


FORMAT = TranscriptFormat(
    name=NAME,
    description="ATIF, Harbor's agent trajectory format ({schema_version: ATIF-v1.x, steps})",
    versions="ATIF-v1.x",
    detect=detect,
    read=read,
)
