"""One call for a whole agent turn against an official SDK client: ``Session.create`` and
``AsyncSession.create``.

Until the model answers without a tool call: tools, ``before_request``, the provider call,
``after_response``, every call answered by ``handle_tool_call``. A context overflow is retried
compressed, any other error raised; the caller's list is never changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

import attrs

from hermes_core.messages import tool_call_fields
from hermes_core.sdk import as_message, wire_format

if TYPE_CHECKING:
    from hermes_core.engine import ContextEngine

__all__ = ["MAX_OVERFLOW_RETRIES", "TurnResult", "run_turn", "run_turn_async"]

#: Overflow errors retried per turn: each retry follows a compression that made the messages
#: smaller, so a second overflow in a row is rare and a third means compression cannot help.
MAX_OVERFLOW_RETRIES = 3
#: Keys ``Session.request`` sets; passing them as extra keywords would send them twice.
_REQUEST_KEYS = frozenset({"model", "messages", "system", "tools", "max_tokens", "prompt_cache_key"})


@attrs.frozen(kw_only=True)
class TurnResult:
    """What a turn ended with.

    ``messages``: the conversation to continue with (OpenAI chat format, compressed when the
    session compressed it), ending with the model's last reply. ``reply``: that reply as a dict
    (``reply["content"]``). ``response``: the SDK's last response object. ``finished``: the
    model answered without calling a tool (``False``: ``max_steps`` ran out with tool calls
    still answered but not yet sent back). ``steps``: provider calls that returned a reply.
    ``overflow_retries``: requests retried after an overflow error and a compression.
    """

    messages: list[dict[str, Any]]
    reply: dict[str, Any]
    response: Any
    finished: bool
    steps: int
    overflow_retries: int = 0

    @property
    def content(self) -> Any:
        """The last reply's content (text for a plain answer)."""
        return self.reply.get("content")


def _endpoint(client: Any, provider: str, api: str | None = None) -> Callable[..., Any]:
    """The SDK method a request of this session's provider (or of ``api``) goes to."""
    if api == "responses":
        method, path = getattr(getattr(client, "responses", None), "create", None), "client.responses.create"
    elif wire_format(provider) == "anthropic":
        method, path = getattr(getattr(client, "messages", None), "create", None), "client.messages.create"
    else:
        completions = getattr(getattr(client, "chat", None), "completions", None)
        method, path = getattr(completions, "create", None), "client.chat.completions.create"
    if not callable(method):
        raise TypeError(
            f"{type(client).__name__} has no {path} (the session's provider is {provider or 'unset'!r}); "
            "pass the official OpenAI or Anthropic client that matches the provider"
        )
    return method  # type: ignore[no-any-return]


def _check_extra(create_kwargs: Mapping[str, Any]) -> None:
    clash = sorted(set(create_kwargs) & _REQUEST_KEYS)
    if clash:
        raise TypeError(f"{', '.join(clash)}: set by the session; give max_tokens= to create() itself")
    if create_kwargs.get("stream"):
        raise TypeError("create() runs whole responses; stream with the 20-line loop (docs/embedding.md)")


def _catalog(tools: Sequence[Mapping[str, Any]]) -> Sequence[dict[str, Any]]:
    # The host's own sequence, unchanged: frozen tools (freeze_tools) are proven by identity.
    return cast("Sequence[dict[str, Any]]", tools)


def _calls(reply: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    for call in reply.get("tool_calls") or ():
        kind, name, arguments = tool_call_fields(call)
        if kind == "custom":  # free text: the tool gets it as {"input": text}, as Anthropic's tool_use has it
            arguments = {"input": arguments if isinstance(arguments, str) else ""}
        out.append((str(call.get("id") or ""), name, arguments))
    return out


_Msgs = list[dict[str, Any]]
_Tools = Sequence[Mapping[str, Any]] | None


class TurnSession(Protocol):
    """What a turn uses of ``session.Session`` (which stands on this module)."""

    provider: str
    engine: ContextEngine

    def assemble_tools(self, tools: Sequence[dict[str, Any]]) -> _Msgs: ...
    def before_request(self, messages: _Msgs, tools: _Tools = None) -> _Msgs: ...
    def request(self, messages: Sequence[Any], *, tools: _Tools = None, max_tokens: int | None = None,
                api: str | None = None) -> dict[str, Any]: ...
    def on_provider_error(self, error: BaseException, messages: _Msgs) -> _Msgs | None: ...
    def after_response(self, usage: Any, messages: _Msgs) -> _Msgs: ...
    def handle_tool_call(self, name: str, arguments: Mapping[str, Any] | str | None = None, *,
                         tool_call_id: str = "") -> Any: ...


class AsyncTurnSession(Protocol):
    """What an async turn uses of ``aio.AsyncSession`` (which stands on this module)."""

    @property
    def session(self) -> TurnSession: ...
    async def assemble_tools(self, tools: Sequence[dict[str, Any]]) -> _Msgs: ...
    async def before_request(self, messages: Sequence[Any], tools: _Tools = None) -> _Msgs: ...
    async def request(self, messages: Sequence[Any], *, tools: _Tools = None, max_tokens: int | None = None,
                      api: str | None = None) -> dict[str, Any]: ...
    async def on_provider_error(self, error: BaseException, messages: Sequence[Any]) -> _Msgs | None: ...
    async def after_response(self, usage: Any, messages: Sequence[Any]) -> _Msgs: ...
    async def handle_tool_call(self, name: str, arguments: Mapping[str, Any] | str | None = None, *,
                               tool_call_id: str = "") -> Any: ...


def _result(messages: list[dict[str, Any]], reply: dict[str, Any], response: Any, *, finished: bool,
            steps: int, retries: int) -> TurnResult:
    return TurnResult(messages=messages, reply=reply, response=response, finished=finished,
                      steps=steps, overflow_retries=retries)


def run_turn(
    session: TurnSession, client: Any, messages: Sequence[Any], *,
    tools: Sequence[Mapping[str, Any]] | None = None, max_steps: int = 50,
    max_tokens: int | None = None, api: str | None = None, **create_kwargs: Any,
) -> TurnResult:
    """``Session.create``: see the module docstring."""
    _check_extra(create_kwargs)
    create = _endpoint(client, session.provider, api)
    history = list(messages)
    steps = retries = 0
    reply: dict[str, Any] = {}
    response: Any = None
    while steps < max_steps:
        # Every step: the recall tools join once something is archived, even without tools.
        tool_defs = session.assemble_tools(_catalog(tools or ())) or None
        compressions = session.engine.compression_count
        history = session.before_request(history, tools=tool_defs)
        if session.engine.compression_count != compressions:  # archived just now: offer recall
            tool_defs = session.assemble_tools(_catalog(tools or ())) or None
        try:
            response = create(**session.request(history, tools=tool_defs, max_tokens=max_tokens, api=api),
                              **create_kwargs)
        except Exception as error:  # noqa: BLE001 - only an overflow is handled; the rest is re-raised
            retry = session.on_provider_error(error, history) if retries < MAX_OVERFLOW_RETRIES else None
            if retry is None:
                raise
            history, retries = retry, retries + 1
            continue
        steps += 1
        reply = as_message(response)
        history = session.after_response(response, [*history, reply])
        calls = _calls(reply)
        if not calls:
            return _result(history, reply, response, finished=True, steps=steps, retries=retries)
        for call_id, name, arguments in calls:
            answer = session.handle_tool_call(name, arguments, tool_call_id=call_id)
            history.append({"role": "tool", "tool_call_id": call_id, "content": answer})
    return _result(history, reply, response, finished=False, steps=steps, retries=retries)


async def run_turn_async(
    session: AsyncTurnSession, client: Any, messages: Sequence[Any], *,
    tools: Sequence[Mapping[str, Any]] | None = None, max_steps: int = 50,
    max_tokens: int | None = None, api: str | None = None, **create_kwargs: Any,
) -> TurnResult:
    """``AsyncSession.create``: the same turn with an async client (``AsyncOpenAI``,
    ``AsyncAnthropic``); the session's work runs off the loop as every ``AsyncSession`` step."""
    _check_extra(create_kwargs)
    create: Callable[..., Awaitable[Any]] = _endpoint(client, session.session.provider, api)
    history = list(messages)
    steps = retries = 0
    reply: dict[str, Any] = {}
    response: Any = None
    while steps < max_steps:
        tool_defs = await session.assemble_tools(_catalog(tools or ())) or None
        compressions = session.session.engine.compression_count
        history = await session.before_request(history, tools=tool_defs)
        if session.session.engine.compression_count != compressions:  # archived just now: offer recall
            tool_defs = await session.assemble_tools(_catalog(tools or ())) or None
        kwargs = await session.request(history, tools=tool_defs, max_tokens=max_tokens, api=api)
        try:
            response = await create(**kwargs, **create_kwargs)
        except Exception as error:  # noqa: BLE001 - only an overflow is handled; the rest is re-raised
            retry = await session.on_provider_error(error, history) if retries < MAX_OVERFLOW_RETRIES else None
            if retry is None:
                raise
            history, retries = retry, retries + 1
            continue
        steps += 1
        reply = as_message(response)
        history = await session.after_response(response, [*history, reply])
        calls = _calls(reply)
        if not calls:
            return _result(history, reply, response, finished=True, steps=steps, retries=retries)
        for call_id, name, arguments in calls:
            answer = await session.handle_tool_call(name, arguments, tool_call_id=call_id)
            history.append({"role": "tool", "tool_call_id": call_id, "content": answer})
    return _result(history, reply, response, finished=False, steps=steps, retries=retries)
