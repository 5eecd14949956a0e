"""OpenHands trajectories: the event stream saved as a JSON list (or ``{"trajectory": [...]}``).

Actions (``action``) and observations (``observation``) carry a ``source`` (``user``, ``agent``,
``environment``). Agent actions made through function calling hold ``tool_call_metadata``
(``tool_call_id``, ``function_name``, the ``model_response``): actions of one model response
become one assistant message with several calls, their observations the tool results.
``message`` actions are user or assistant text, the ``system`` action is the system prompt;
observations with no call (agent state changes, recalled knowledge) are not conversation:
``recall`` becomes a user message marked ``_injected: "recall"``, the rest are dropped by type.
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
    make_tool_call,
)
from hermes_plugins.transcripts.common import listed, mapping, mark_user_text, reads, tag

NAME = "openhands"
_ERRORS = frozenset({"error", "user_rejected"})


def _events(doc: Any) -> list[Any] | None:
    if isinstance(doc, Mapping):
        for key in ("trajectory", "history", "events"):
            events = doc.get(key)
            if isinstance(events, list):
                return events
        return None
    return doc if isinstance(doc, list) else None


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    events = _events(source.document_or_none())
    if not events:
        return Detection.refuse("not a list of events")
    sample = [e for e in flatten(events)[:100] if isinstance(e, Mapping)]
    typed = [e for e in sample if ("action" in e or "observation" in e) and "source" in e]
    if sample and len(typed) >= len(sample) * 0.9:
        return Detection.accept(0.9, "events with action/observation and source")
    return Detection.refuse("events have no action/observation with a source")


def _arguments(event: Mapping[str, Any], meta: Mapping[str, Any]) -> Any:
    response = meta.get("model_response")
    ident = meta.get("tool_call_id")
    if isinstance(response, Mapping):
        for choice in listed(response.get("choices")):
            message = choice.get("message") if isinstance(choice, Mapping) else None
            for call in listed((message or {}).get("tool_calls")):
                if isinstance(call, Mapping) and call.get("id") == ident:
                    fn = call.get("function") or {}
                    return fn.get("arguments")
    args = event.get("args")
    return {k: v for k, v in dict(args).items() if k not in ("thought", "security_risk")} if isinstance(args, Mapping) else {}


def _assistant_text(response: Any) -> str:
    if isinstance(response, Mapping):
        for choice in listed(response.get("choices")):
            content = mapping(mapping(choice).get("message")).get("content")
            if isinstance(content, str):
                return content
    return ""


class EventConverter:
    """OpenHands events, one at a time, as OpenAI chat messages (counted on ``report``)."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.messages: list[dict[str, Any]] = []
        self.system_prompt: str | None = None
        self._open_response: str | None = None
        self._open_message: dict[str, Any] | None = None

    def add(self, event: Any) -> None:
        report = self.report
        messages = self.messages
        if not isinstance(event, Mapping):
            report.dropped("not_an_object")
            return
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), Mapping) else None
        args = mapping(event.get("args"))
        if "action" in event:
            action = event.get("action")
            if action == "system":
                self.system_prompt = str(args.get("content") or event.get("message") or "")
                report.absorbed("system_prompt")
                return
            if meta and event.get("source") == "agent":
                response = meta.get("model_response")
                response_id = response.get("id") if isinstance(response, Mapping) else None
                call = make_tool_call(str(meta.get("tool_call_id") or ""), str(meta.get("function_name") or action),
                                      _arguments(event, meta))
                if self._open_message is not None and response_id and response_id == self._open_response:
                    self._open_message["tool_calls"].append(call)
                    report.merged("actions_of_one_model_response")
                    return
                text = _assistant_text(response) or str(args.get("thought") or "")
                self._open_message = {"role": "assistant", "content": text or None, "tool_calls": [call]}
                self._open_response = response_id
                messages.append(self._open_message)
                report.converted()
                return
            self._open_message = self._open_response = None
            if action == "message":
                text = str(args.get("content") or event.get("message") or "")
                if event.get("source") == "user":
                    messages.append(mark_user_text({"role": "user", "content": text}, report))
                else:
                    messages.append({"role": "assistant", "content": text})
                report.converted()
            else:
                report.dropped(f"action:{action}")
            return
        observation = tag(event.get("observation"))
        if meta and meta.get("tool_call_id"):
            result: dict[str, Any] = {"role": "tool", "tool_call_id": str(meta["tool_call_id"]),
                                      "content": str(event.get("content") or "")}
            extras = mapping(event.get("extras"))
            exit_code = extras.get("exit_code")
            if exit_code is None and isinstance(extras.get("metadata"), Mapping):
                exit_code = extras["metadata"].get("exit_code")
            if observation in _ERRORS or (isinstance(exit_code, int) and exit_code not in (0, -1)):
                result["_is_error"] = True
            messages.append(result)
            report.converted()
            return
        self._open_message = self._open_response = None
        if observation == "recall" and event.get("content"):
            messages.append({"role": "user", "content": str(event["content"]), "_injected": "recall"})
            report.converted()
            report.relabelled("marked_injected:recall")
        elif observation == "error" and event.get("content"):
            messages.append({"role": "user", "content": str(event["content"]), "_injected": "error-observation"})
            report.converted()
            report.relabelled("marked_injected:error-observation")
        elif observation is None and "observation" not in event:
            report.dropped("unknown_event")  # neither an action nor an observation
        else:
            report.dropped(f"observation:{observation}")


def flatten(history: list[Any]) -> list[Any]:
    """Early OpenHands histories hold ``[action, observation]`` pairs; later ones events."""
    if history and all(isinstance(item, list) for item in history[:50]):
        return [event for pair in history if isinstance(pair, list) for event in pair]
    return history


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    events = _events(source.document())
    if events is None:
        raise ValueError("expected a list of events")
    events = flatten(events)
    report.saw(len(events))
    converter = EventConverter(report)
    for event in events:
        converter.add(event)
    return source.transcript(converter.messages, system_prompt=converter.system_prompt)


FORMAT = TranscriptFormat(
    name=NAME,
    description="OpenHands trajectory (event stream of actions and observations)",
    versions="OpenHands event lists (current), early [action, observation] pair histories",
    detect=detect,
    read=read,
)
