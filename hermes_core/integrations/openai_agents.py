"""An OpenAI Agents SDK ``Session`` backed by hermes-core (``pip install 'hermes-core[openai-agents]'``).

``HermesAgentsSession`` keeps the SDK's Responses items as they came and, at the start of each
run (``get_items``), compacts them through ``Session.before_request`` when they outgrow the window;
``agent_tools`` adds the recall tools, ``instructions`` the byte-stable system prompt. Usage and
the item rules: docs/embedding.md. Imports the Agents SDK; ``hermes_core`` never does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents import FunctionTool
from agents.memory import SessionSettings

from hermes_core.diagnostics import collecting, record_warning
from hermes_core.logging import get_logger
from hermes_core.session import Session

__all__ = ["HermesAgentsSession"]

log = get_logger(__name__)

#: The metadata key under which a chat message carries the items it was read from.
ITEMS_KEY = "_agents_items"
#: Item types with a chat form (``None``: an easy input message ``{"role", "content"}``).
_CHAT_KINDS = frozenset({None, "message", "function_call", "function_call_output"})


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _as_dict(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    return dump(exclude_unset=True) if callable(dump) else item


def _text(content: Any) -> Any:
    """A message item's content as chat content: its text parts joined, else the parts as
    chat parts (images kept as ``image_url``)."""
    if content is None or isinstance(content, str):
        return content or ""
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = _get(part, "type")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": _get(part, "text") or ""})
        elif kind == "refusal":
            parts.append({"type": "text", "text": _get(part, "refusal") or ""})
        elif kind == "input_image" and _get(part, "image_url"):
            parts.append({"type": "image_url", "image_url": {"url": _get(part, "image_url")}})
        else:  # a file or audio part: kept as its JSON so nothing is silently lost
            parts.append({"type": "text", "text": json.dumps(_as_dict(part), default=str)})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    text = _text(output)
    return text if isinstance(text, str) else json.dumps(output, default=str)


def items_to_messages(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The items as OpenAI chat messages, each carrying (under ``_agents_items``) the items it
    was read from; consecutive ``function_call`` items join the assistant message before them."""
    messages: list[dict[str, Any]] = []
    pending: list[Any] = []  # items with no chat form, waiting for the next message
    for item in items:
        kind = _get(item, "type")
        role = _get(item, "role")
        if kind in (None, "message") and role in ("user", "system", "developer", "assistant"):
            chat_role = "system" if role == "developer" else role
            messages.append({"role": chat_role, "content": _text(_get(item, "content")),
                             ITEMS_KEY: [*pending, item]})
        elif kind == "function_call":
            call = {"id": _get(item, "call_id"), "type": "function",
                    "function": {"name": _get(item, "name"), "arguments": _get(item, "arguments") or "{}"}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and not pending:
                last.setdefault("tool_calls", []).append(call)
                last[ITEMS_KEY].append(item)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call],
                                 ITEMS_KEY: [*pending, item]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": _get(item, "call_id"),
                             "content": _output_text(_get(item, "output")), ITEMS_KEY: [*pending, item]})
        else:
            pending.append(item)
            continue
        pending = []
    if pending:  # trailing items with no message after them: an empty carrier keeps them
        messages.append({"role": "assistant", "content": "", ITEMS_KEY: pending, "_carrier": True})
    return messages


def message_to_items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Plain items for a message hermes-core wrote or rewrote."""
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else _output_text(content) if content else ""
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message.get("tool_call_id") or "", "output": text}]
    items: list[dict[str, Any]] = []
    if text or role != "assistant":
        # An easy input message: the form the SDK accepts for any role without an output id.
        items.append({"role": role if role in ("user", "system", "assistant") else "user", "content": text})
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        items.append({"type": "function_call", "call_id": call.get("id") or "", "name": fn.get("name") or "",
                      "arguments": fn.get("arguments") or "{}"})
    return items


class HermesAgentsSession:
    """The Agents SDK ``Session`` protocol (``get_items``, ``add_items``, ``pop_item``,
    ``clear_session``) over a ``hermes_core.Session``; see the module docstring.

    Give an open ``session=`` or ``Session.open``'s keywords. ``session_id`` is the hermes
    session's id.
    """

    session_settings: SessionSettings | None = None

    def __init__(self, session: Session | None = None, **open_kwargs: Any) -> None:
        if session is None:
            session = Session.open(**open_kwargs)
        elif open_kwargs:
            raise TypeError("give either an open session or Session.open's keywords, not both")
        self.session = session
        self.session_id = session.session_id
        self._items: list[Any] = []
        self._lock = asyncio.Lock()
        #: Items dropped with a message a compaction removed (the archive keeps the message).
        self.dropped_items = 0

    # --- the protocol -------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The history (the latest ``limit`` items), compacted first when it outgrew the window."""
        async with self._lock:
            await asyncio.to_thread(self._compact)
            items = list(self._items)
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Any]) -> None:
        async with self._lock:
            self._items.extend(items)

    async def pop_item(self) -> Any | None:
        async with self._lock:
            return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        async with self._lock:
            self._items.clear()

    # --- the system prompt ------------------------------------------------------------------

    def instructions(self, own: str | None = None) -> str:
        """hermes-core's system prompt for ``Agent(instructions=...)``, with ``own`` (the agent's
        own instructions) as its identity: no Hermes identity, the project's context files,
        skills and memory after it, byte-stable across runs. Compaction then estimates what the
        model is really sent."""
        session = self.session
        own = own.strip() if isinstance(own, str) else None
        with session._lock:
            if own and session.identity != own:
                session.identity = own
                session.invalidate_system_prompt()
        return session.system_prompt

    # --- tools --------------------------------------------------------------------------

    def agent_tools(self, tools: Sequence[Any] = ()) -> list[Any]:
        """``tools`` plus the tools hermes-core offers now (``context_search`` /
        ``context_expand`` once something is archived), answered by ``handle_tool_call``."""
        own = {getattr(t, "name", None) for t in tools}
        definitions = [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.params_json_schema}}
            for t in tools if isinstance(t, FunctionTool)
        ]
        offered = self.session.assemble_tools(definitions)
        added: list[Any] = []
        for definition in offered:
            fn = definition.get("function") or {}
            name = fn.get("name")
            if not name or name in own:
                continue
            added.append(self._function_tool(name, fn.get("description") or "", fn.get("parameters") or {}))
        return [*tools, *added]

    def _function_tool(self, name: str, description: str, parameters: dict[str, Any]) -> FunctionTool:
        async def answer(ctx: Any, arguments: str) -> str:
            call_id = getattr(ctx, "tool_call_id", "") or ""
            result = await asyncio.to_thread(self.session.handle_tool_call, name, arguments, tool_call_id=call_id)
            return result if isinstance(result, str) else json.dumps(result, default=str)

        # strict=False: the schemas have optional keys with defaults, which strict mode forbids.
        return FunctionTool(name=name, description=description, params_json_schema=parameters,
                            on_invoke_tool=answer, strict_json_schema=False)

    # --- compaction ---------------------------------------------------------------------

    def _compact(self) -> None:
        if not self._items:
            return
        messages = items_to_messages(self._items)
        out = self.session.before_request(messages)
        if out is messages or [id(m) for m in out] == [id(m) for m in messages]:
            return
        kept = {id(m) for m in out}
        dropped = sum(
            1 for message in messages if id(message) not in kept
            for item in message[ITEMS_KEY] if _get(item, "type") not in _CHAT_KINDS
        )
        if dropped:
            # Reasoning / hosted-tool items of a message the compaction removed or rewrote: the
            # archive keeps the message's text, these items have no chat form to keep.
            self.dropped_items += dropped
            with collecting() as bucket:  # logged now, and returned by session.warnings
                record_warning(
                    "agents_items_dropped",
                    f"compaction of session {self.session_id} dropped {dropped} item(s) without a chat "
                    "form (reasoning, hosted-tool calls) along with the messages it condensed",
                    session_id=self.session_id, dropped=dropped,
                )
            self.session._pending_warnings.extend(bucket)
        rebuilt: list[Any] = []
        originals = {id(m): m for m in messages}
        for message in out:
            original = originals.get(id(message))
            if original is not None:
                rebuilt.extend(original[ITEMS_KEY])  # unchanged: the items exactly as added
            elif not message.get("_carrier"):
                rebuilt.extend(message_to_items(message))
        log.info("agents_session_compacted", session_id=self.session_id, items_before=len(self._items),
                 items_after=len(rebuilt), dropped_items=self.dropped_items)
        self._items = rebuilt
