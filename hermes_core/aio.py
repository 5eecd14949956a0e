"""``AsyncSession``: the same session for asyncio hosts (a gateway, a FastAPI service).

Each step runs the synchronous ``Session`` in a worker thread of one shared pool sized for
waiting; an LLM summary, ``on_status`` and an async ``invoke`` run on the host's loop. A worker
holds one of ``CPU_SLOTS`` slots while it computes, so the loop's thread competes for the GIL
with a couple of threads, never fifty (docs/embedding.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core.daemon_pool import DaemonPool
from hermes_core.logging import get_logger

if TYPE_CHECKING:  # the summarisers import this module: keep it light
    from hermes_core.compaction_feedback import CompactionEvent, ManualCompression
    from hermes_core.diagnostics import HostWarning
    from hermes_core.session import Session
    from hermes_core.turn import TurnResult

__all__ = ["AsyncSession", "host_loop", "run_on_host_loop"]

log = get_logger("hermes_core.aio")

_T = TypeVar("_T")

#: Worker threads for all async sessions of the process (they mostly wait on the loop).
MAX_WORKERS = 64

# Plumbing, not a memo: the loop of the AsyncSession whose step this worker runs, for a
# summariser called deep inside it (a parameter would cross the engine and summariser APIs).
_host_loop: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "hermes_host_loop", default=None
)
#: Workers running Python code at once (the rest wait for a slot or on the loop).
CPU_SLOTS = 2

#: Daemon workers that leave once no step is queued (hermes_core.daemon_pool): an idle
#: process holds none of them, and ``close`` waits for those on their way out.
_pool = DaemonPool(MAX_WORKERS, thread_name_prefix="hermes-async")
_cpu = threading.BoundedSemaphore(CPU_SLOTS)
_holding = threading.local()


def _with_cpu_slot(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    _cpu.acquire()
    _holding.slot = True
    try:
        return fn(*args, **kwargs)
    finally:
        _holding.slot = False
        _cpu.release()


def host_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the ``AsyncSession`` this worker thread runs for, else ``None``.

    ``None`` as well when called on the loop's own thread: waiting there would deadlock.
    """
    loop = _host_loop.get()
    if loop is None or loop.is_closed():
        return None
    try:
        if asyncio.get_running_loop() is loop:
            return None
    except RuntimeError:
        pass
    return loop


def run_on_host_loop(
    coro: Coroutine[Any, Any, _T], loop: asyncio.AbstractEventLoop, timeout: float | None = None
) -> _T:
    """Run ``coro`` on the host's loop from a worker thread and wait for its result."""
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    held = getattr(_holding, "slot", False)
    if held:  # waiting computes nothing: let another worker run meanwhile
        _holding.slot = False
        _cpu.release()
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise
    finally:
        if held:
            _cpu.acquire()
            _holding.slot = True


async def _off_loop(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    context.run(_host_loop.set, loop)
    call = functools.partial(context.run, _with_cpu_slot, fn, *args, **kwargs)
    return await loop.run_in_executor(_pool, call)


def _status_on_loop(
    on_status: Callable[[CompactionEvent], Any] | None, loop: asyncio.AbstractEventLoop
) -> Callable[[CompactionEvent], None] | None:
    if on_status is None:
        return None
    tasks: set[asyncio.Future[Any]] = set()

    def deliver(event: CompactionEvent) -> None:
        try:
            result = on_status(event)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                tasks.add(task)
                task.add_done_callback(_report_failure)
                task.add_done_callback(tasks.discard)
        except Exception:  # noqa: BLE001 - a UI callback must not break the turn
            log.warning("status_callback_failed", exc_info=True)

    def from_worker(event: CompactionEvent) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            deliver(event)
        else:
            loop.call_soon_threadsafe(deliver, event)

    return from_worker


def _report_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("status_callback_failed", error=repr(task.exception()))


def _invoke_on_loop(
    invoke: Callable[[str, dict[str, Any]], Any] | None, loop: asyncio.AbstractEventLoop
) -> Callable[[str, dict[str, Any]], Any] | None:
    """A synchronous ``invoke`` for the worker; an async one is awaited on the host's loop."""
    if invoke is None:
        return None

    def call(name: str, arguments: dict[str, Any]) -> Any:
        result = invoke(name, arguments)
        if inspect.isawaitable(result):
            return run_on_host_loop(_awaited(result), loop)
        return result

    return call


async def _awaited(awaitable: Awaitable[_T]) -> _T:
    return await awaitable


class AsyncSession:
    """One conversation for an asyncio host: ``Session``'s methods as coroutines.

    Build with ``await AsyncSession.open(...)`` (the same keywords as ``Session.open``; the
    system prompt is built off the loop before it returns). ``invoke`` and ``on_status`` may be
    plain or ``async`` functions. Attributes that do no work (``session_id``, ``config``,
    ``system_prompt`` once built, ``warnings`` ...) are read straight from the wrapped
    ``session``.
    """

    def __init__(self, session: Session, loop: asyncio.AbstractEventLoop) -> None:
        self.session = session
        self._loop = loop

    @classmethod
    async def open(cls, **kwargs: Any) -> AsyncSession:
        loop = asyncio.get_running_loop()
        kwargs["on_status"] = _status_on_loop(kwargs.get("on_status"), loop)
        kwargs["invoke"] = _invoke_on_loop(kwargs.get("invoke"), loop)

        from hermes_core.session import Session

        def build() -> Session:
            session = Session.open(**kwargs)
            session.system_prompt  # noqa: B018 - built here, off the loop
            return session

        return cls(await _off_loop(build), loop)

    # --- work, off the loop -------------------------------------------------------------

    async def _run(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        session = self.session

        def step() -> _T:
            result = fn(*args, **kwargs)
            if not session.closed:
                session.system_prompt  # noqa: B018 - a compression's rebuild stays off the loop
            return result

        return await _off_loop(step)

    async def prompt(self) -> str:
        """The system prompt (built or rebuilt off the loop when needed)."""
        return await _off_loop(lambda: self.session.system_prompt)

    async def before_request(
        self, messages: Sequence[Any], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        return await self._run(self.session.before_request, messages, tools)

    async def after_response(self, usage: Any, messages: Sequence[Any]) -> list[dict[str, Any]]:
        return await self._run(self.session.after_response, usage, messages)

    async def on_provider_error(
        self, error: BaseException, messages: Sequence[Any]
    ) -> list[dict[str, Any]] | None:
        return await self._run(self.session.on_provider_error, error, messages)

    async def compress(
        self, messages: Sequence[Any], focus_topic: str | None = None, force: bool = True, *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ManualCompression:
        return await self._run(self.session.compress, messages, focus_topic, force, tools=tools)

    async def request(self, messages: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
        """The SDK keyword arguments (``Session.request``), for ``await client...create(**kw)``."""
        return await self._run(self.session.request, messages, **kwargs)

    async def assemble_tools(self, tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return await self._run(self.session.assemble_tools, tools)

    async def handle_tool_call(
        self, name: str, arguments: Mapping[str, Any] | str | None = None, *,
        tool_call_id: str = "", invoke: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Any:
        return await self._run(
            self.session.handle_tool_call, name, arguments, tool_call_id=tool_call_id,
            invoke=_invoke_on_loop(invoke, self._loop),
        )

    async def process_tool_result(self, content: Any, **kwargs: Any) -> Any:
        return await self._run(self.session.process_tool_result, content, **kwargs)

    async def fit_tool_results(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await self._run(self.session.fit_tool_results, results)

    async def create(
        self, client: Any, messages: Sequence[Any], *, tools: Sequence[Mapping[str, Any]] | None = None,
        max_steps: int = 50, max_tokens: int | None = None, api: str | None = None, **create_kwargs: Any,
    ) -> TurnResult:
        """``Session.create`` with an async SDK client (``AsyncOpenAI``, ``AsyncAnthropic``)."""
        from hermes_core.turn import run_turn_async

        return await run_turn_async(self, client, messages, tools=tools, max_steps=max_steps,
                                    max_tokens=max_tokens, api=api, **create_kwargs)

    async def close(self, messages: Sequence[Any] | None = None) -> None:
        await _off_loop(self.session.close, list(messages) if messages is not None else None)
        _pool.join_idle()  # the workers that ran this session's steps and found no more work

    # --- state, read directly -----------------------------------------------------------

    @property
    def system_prompt(self) -> str:
        """The prompt; built by ``open`` and after every step, so reading it does no I/O."""
        return self.session.system_prompt

    @property
    def warnings(self) -> list[HostWarning]:
        return self.session.warnings

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.session, name)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"Async{self.session!r}"
