"""A LangChain v1 agent middleware: hermes-core's system prompt, compaction and tool search in a
``create_agent`` loop (``pip install 'hermes-core[langchain]'``).

``HermesMiddleware`` hooks ``before_model`` (compaction), ``wrap_model_call`` (system prompt,
cache key, tool disclosure), ``wrap_tool_call`` (bridge calls) and ``after_model`` (real usage);
what each does: docs/embedding.md. Imports LangChain; ``hermes_core`` never does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from hermes_core.compaction_feedback import CompactionEvent
from hermes_core.logging import get_logger
from hermes_core.session import Session

__all__ = ["HermesMiddleware"]

log = get_logger(__name__)

BRIDGE_TOOLS = frozenset({"tool_search", "tool_describe", "tool_call"})


def _tool_name(tool: Any) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, Mapping):
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        return str(name or "")
    return str(getattr(tool, "name", "") or "")


def _definition(tool: Any) -> dict[str, Any]:
    """The OpenAI-format definition of a LangChain tool, with its ``source`` when it has one."""
    definition = dict(convert_to_openai_tool(tool))
    metadata = getattr(tool, "metadata", None) or {}
    source = metadata.get("source") if isinstance(metadata, Mapping) else None
    if isinstance(source, str) and source.strip():
        definition["source"] = source.strip()
    return definition


def _usage(message: AIMessage) -> dict[str, int] | None:
    meta = message.usage_metadata
    if not meta:
        return None
    details = meta.get("input_token_details") or {}
    return {
        # LangChain's input_tokens already include cached tokens: report them as OpenAI's
        # prompt_tokens so nothing is added twice.
        "prompt_tokens": int(meta.get("input_tokens") or 0),
        "completion_tokens": int(meta.get("output_tokens") or 0),
        "total_tokens": int(meta.get("total_tokens") or 0),
        "cache_read_tokens": int(details.get("cache_read") or 0),
    }


class HermesMiddleware(AgentMiddleware):  # type: ignore[type-arg]
    """hermes-core in a LangChain ``create_agent`` loop (see the module docstring).

    Give an open ``session`` or ``Session.open``'s keywords. ``on_status`` receives each
    ``CompactionEvent``; ``stream_status=False`` keeps them out of the graph's custom stream.
    """

    def __init__(
        self,
        session: Session | None = None,
        *,
        on_status: Callable[[CompactionEvent], Any] | None = None,
        stream_status: bool = True,
        **open_kwargs: Any,
    ) -> None:
        super().__init__()
        self._events: list[CompactionEvent] = []
        self._user_status = on_status
        self.stream_status = stream_status
        if session is None:
            session = Session.open(on_status=self._status, **open_kwargs)
        elif open_kwargs:
            raise TypeError("give either an open session or Session.open's keywords, not both")
        else:  # the session's own callback keeps running, after the stream's
            self._user_status = session._loop.on_status
            session._loop.on_status = self._status
        self.session = session
        self.tools: list[BaseTool] = []
        self._prompt_cache_key: str | None = None
        self._cache_key_asked = False
        self._tools_by_name: dict[str, BaseTool] = {}

    @property
    def name(self) -> str:
        return "HermesMiddleware"

    # --- status -------------------------------------------------------------------------

    def _status(self, event: CompactionEvent) -> None:
        self._events.append(event)
        if self._user_status is not None:
            self._user_status(event)

    def _flush_status(self, runtime: Any) -> None:
        events, self._events = self._events, []
        writer = getattr(runtime, "stream_writer", None) if self.stream_status else None
        if not callable(writer):
            return
        for event in events:
            try:
                writer({"hermes_status": {"kind": event.kind, "message": event.message}})
            except Exception:  # noqa: BLE001 - outside a streaming run there is no writer
                return

    # --- messages -----------------------------------------------------------------------

    def _compact(
        self, messages: Sequence[BaseMessage], step: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
        runtime: Any,
    ) -> dict[str, Any] | None:
        dicts = convert_to_openai_messages(list(messages))
        originals = {id(d): m for d, m in zip(dicts, messages, strict=True)}
        out = step(dicts)
        self._flush_status(runtime)
        if out is dicts or [id(d) for d in out] == [id(d) for d in dicts]:
            return None
        rebuilt: list[BaseMessage] = []
        for message in out:
            original = originals.get(id(message))
            if original is not None:
                rebuilt.append(original)
            else:
                clean = {k: v for k, v in message.items() if not str(k).startswith("_")}
                rebuilt.extend(convert_to_messages([clean]))
        log.debug("langchain_messages_replaced", before=len(messages), after=len(rebuilt))
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *rebuilt]}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._compact(state["messages"], lambda d: self.session.before_request(d), runtime)

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = state["messages"]
        last = messages[-1] if messages else None
        usage = _usage(last) if isinstance(last, AIMessage) else None
        if usage is None:
            return None
        return self._compact(messages, lambda d: self.session.after_response(usage, d), runtime)

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.before_model, state, runtime)

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.after_model, state, runtime)

    # --- the model call -----------------------------------------------------------------

    def _adopt_identity(self, own: str) -> None:
        # The agent's own system_prompt is who the agent is: it becomes the session's identity
        # block (no Hermes identity or documentation pointer), built once while it is the same.
        session = self.session
        with session._lock:
            if session.identity != own:
                session.identity = own
                session.invalidate_system_prompt()

    def _cache_key(self) -> str | None:
        # The payload hooks decide (provider, prompt_caching.prompt_cache_key); asked once.
        if not self._cache_key_asked:
            probe = self.session.request([{"role": "user", "content": "."}])
            key = probe.get("prompt_cache_key")
            self._prompt_cache_key = key if isinstance(key, str) and key else None
            self._cache_key_asked = True
        return self._prompt_cache_key

    def _request(self, request: ModelRequest) -> ModelRequest:  # type: ignore[type-arg]
        own = request.system_message
        if own is not None and own.text.strip():
            self._adopt_identity(own.text.strip())
        system = self.session.system_prompt
        settings = dict(request.model_settings or {})
        key = self._cache_key()
        if key and "prompt_cache_key" not in settings:
            # Bound into the chat model's call (ChatOpenAI sends it as the request parameter).
            settings["prompt_cache_key"] = key
        real = [t for t in request.tools if _tool_name(t) not in BRIDGE_TOOLS]
        self._tools_by_name = {t.name: t for t in real if isinstance(t, BaseTool)}
        by_name = {_tool_name(t): t for t in real}
        assembled = self.session.assemble_tools([_definition(t) for t in real])
        tools: list[Any] = []
        for definition in assembled:
            name = _tool_name(definition)
            tools.append(definition if name in BRIDGE_TOOLS else by_name.get(name, definition))
        return request.override(system_message=SystemMessage(content=system), tools=tools, model_settings=settings)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]  # type: ignore[type-arg]
    ) -> ModelResponse:  # type: ignore[type-arg]
        return handler(self._request(request))  # type: ignore[no-any-return]

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> ModelResponse:  # type: ignore[type-arg]
        prepared = await asyncio.to_thread(self._request, request)
        return await handler(prepared)  # type: ignore[no-any-return]

    # --- tool calls ---------------------------------------------------------------------

    def _invoke(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self._tools_by_name.get(name)
        if tool is None:
            raise KeyError(f"the agent has no tool named {name!r}")
        result = tool.invoke(arguments)
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def _bridge(self, request: Any) -> ToolMessage:
        call = request.tool_call
        answer = self.session.handle_tool_call(
            call["name"], call.get("args") or {}, tool_call_id=call.get("id") or "",
            invoke=self._invoke,
        )
        content = answer if isinstance(answer, str) else json.dumps(answer, default=str)
        return ToolMessage(content=content, tool_call_id=call.get("id") or "", name=call["name"])

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        if request.tool_call["name"] in BRIDGE_TOOLS:
            return self._bridge(request)
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        if request.tool_call["name"] in BRIDGE_TOOLS:
            return await asyncio.to_thread(self._bridge, request)
        return await handler(request)
