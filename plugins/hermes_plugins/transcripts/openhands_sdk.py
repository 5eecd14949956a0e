"""The OpenHands SDK's events (``kind``-tagged, as its conversation persistence writes them to
``events/event-<index>-<id>.json``), one at a time, as OpenAI chat messages.

Read from the SDK's event classes: ``SystemPromptEvent`` (``system_prompt`` text, with
``dynamic_context`` appended: the system prompt; the names of its ``tools`` in
``metadata["tools"]``, as the stored definitions hold no parameter schemas), ``MessageEvent``
(``llm_message``: role and content parts, ``extended_content`` appended as the SDK sends it),
``ActionEvent`` (one call, ``tool_call`` ``{id, name, arguments}``; actions of one
``llm_response_id`` form one assistant message, the ``thought`` text its content,
``reasoning_content`` its ``_reasoning``), ``ObservationEvent`` (the result: ``observation``
``content`` - a string or text/image parts - and ``is_error``, with ``extended_content``),
``UserRejectObservation`` (``Action rejected: <reason>``, an error result) and
``AgentErrorEvent`` (the scaffold's error as the call's result, ``_is_error``).
``CondensationSummaryEvent``/``Condensation`` summaries go to ``metadata["compactions"]`` (the
events they summarise are still in the folder: reading them again would repeat the history).
Every other kind (state updates, pauses, token streams ...) carries nothing the model was sent
and is dropped by kind. Tools that render their observation their own way (the SDK's
``to_llm_content`` overrides) are read from the stored ``content``; that rendering is not
reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import ReportBuilder, image_placeholder, make_tool_call
from hermes_plugins.transcripts.common import listed, mapping, mark_user_text, simplify_parts, tag, unknown_role_message

_ERROR_PREFIX = "Tool Execution Error. "


def _parts(content: Any, report: ReportBuilder) -> list[dict[str, Any]]:
    """SDK content (a string, or ``TextContent``/``ImageContent`` parts) as OpenAI parts."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for part in listed(content):
        part = mapping(part)
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            out.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image":
            for url in listed(part.get("image_urls")) or [None]:
                out.append(image_placeholder({"image_url": url if isinstance(url, str) else None}, report))
        elif part:
            report.changed(f"blocks_kept_as_text:{part.get('type')}")
            out.append({"type": "text", "text": str(part.get("text") or part)})
    return out


def _text(parts: list[dict[str, Any]]) -> Any:
    body = simplify_parts(parts)
    if isinstance(body, list) and all(p.get("type") == "text" for p in body):
        return "\n".join(str(p["text"]) for p in body)
    return body


class SdkEventConverter:
    """OpenHands SDK events as OpenAI chat messages (counted on ``report``)."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.messages: list[dict[str, Any]] = []
        self.system_prompt: str | None = None
        self.tools: list[str] = []
        self.compactions: list[str] = []
        self._open_response: str | None = None
        self._open_message: dict[str, Any] | None = None

    def add(self, event: Any) -> None:
        report = self.report
        if not isinstance(event, Mapping):
            report.dropped("not_an_object")
            return
        kind = tag(event.get("kind"))
        if kind != "ActionEvent":
            self._open_message = self._open_response = None
        if kind == "SystemPromptEvent":
            prompt = _text(_parts([event.get("system_prompt"), event.get("dynamic_context")], report))
            self.system_prompt = prompt if isinstance(prompt, str) else str(prompt)
            # Names only: the stored definitions do not hold the parameter schemas a provider
            # would be sent, so they are not passed off as tools (metadata["tools"]).
            self.tools = [str(t.get("name")) for t in listed(event.get("tools")) if isinstance(t, Mapping)]
            report.absorbed("system_prompt")
        elif kind == "MessageEvent":
            self._message(event)
        elif kind == "ActionEvent":
            self._action(event)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self._result(kind, event)
        elif kind in ("CondensationSummaryEvent", "Condensation") and isinstance(event.get("summary"), str):
            self.compactions.append(event["summary"])
            report.absorbed(f"{kind}:summary")
        else:
            report.dropped(f"kind:{kind}" if kind else "unknown_event")

    def _message(self, event: Mapping[str, Any]) -> None:
        report = self.report
        llm = mapping(event.get("llm_message"))
        parts = _parts(llm.get("content"), report) + _parts(event.get("extended_content"), report)
        role = tag(llm.get("role")) or ("user" if event.get("source") == "user" else "assistant")
        if role == "user":
            self.messages.append(mark_user_text({"role": "user", "content": _text(parts)}, report))
        elif role == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": _text(parts)}
            if isinstance(llm.get("reasoning_content"), str) and llm["reasoning_content"]:
                message["_reasoning"] = llm["reasoning_content"]
                report.changed("reasoning_kept_as_metadata")
            self.messages.append(message)
        else:
            kept = unknown_role_message({"content": _text(parts)}, role, report)
            if kept is None:
                return
            self.messages.append(kept)
        report.converted()

    def _action(self, event: Mapping[str, Any]) -> None:
        report = self.report
        call_record = mapping(event.get("tool_call"))
        ident = str(call_record.get("id") or event.get("tool_call_id") or "")
        name = str(call_record.get("name") or event.get("tool_name") or "")
        call = make_tool_call(ident, name, call_record.get("arguments"))
        response = event.get("llm_response_id")
        if self._open_message is not None and isinstance(response, str) and response == self._open_response:
            self._open_message["tool_calls"].append(call)
            report.merged("actions_of_one_model_response")
            return
        thought = _text(_parts(event.get("thought"), report))
        message: dict[str, Any] = {"role": "assistant", "content": thought or None, "tool_calls": [call]}
        if isinstance(event.get("reasoning_content"), str) and event["reasoning_content"]:
            message["_reasoning"] = event["reasoning_content"]
            report.changed("reasoning_kept_as_metadata")
        if listed(event.get("thinking_blocks")):
            report.changed("thinking_blocks_not_kept")
        self.messages.append(message)
        self._open_message = message
        self._open_response = response if isinstance(response, str) else None
        report.converted()

    def _result(self, kind: str, event: Mapping[str, Any]) -> None:
        report = self.report
        failed = kind != "ObservationEvent"
        if kind == "ObservationEvent":
            observation = mapping(event.get("observation"))
            failed = observation.get("is_error") is True
            parts = _parts(observation.get("content"), report)
            if failed:
                parts.insert(0, {"type": "text", "text": _ERROR_PREFIX})
            parts += _parts(event.get("extended_content"), report)
            body = _text(parts)
            if isinstance(body, str) and failed:
                body = body.replace(_ERROR_PREFIX + "\n", _ERROR_PREFIX, 1)
        elif kind == "UserRejectObservation":
            body = f"Action rejected: {event.get('rejection_reason') or 'User rejected the action'}"
        else:
            body = str(event.get("error") or "")
        result: dict[str, Any] = {"role": "tool", "tool_call_id": str(event.get("tool_call_id") or ""),
                                  "content": body}
        if failed:
            result["_is_error"] = True
        self.messages.append(result)
        report.converted()
