"""LLM summaries on the host's event loop, through ``AsyncOpenAI`` / ``AsyncAnthropic``.

An ``AsyncSession`` runs compression in a worker thread; when the engine asks a summariser for
a summary there, the request is sent from the host's loop with the provider's async client
(one per loop, built on first use) and the worker waits for the text. The prompt, the model,
the failure translation and the text cleaning are the synchronous summariser's own, so both
paths give the same summary and the same typed errors.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

from hermes_core.plugin import SummarizerError, SummaryRequest, run_on_host_loop
from hermes_plugins.summarizer_http import import_sdk

#: Seconds a worker waits beyond the summariser's own timeout before giving up on the loop.
GRACE_SECONDS = 5.0


class _LoopClients:
    """The async clients of one event loop, by endpoint settings, and the suspended generator
    that closes them when the loop shuts down (held here: asyncio keeps only a weak reference)."""

    __slots__ = ("clients", "closer")

    def __init__(self) -> None:
        self.clients: dict[tuple[Any, ...], Any] = {}
        self.closer: Any = None


# Owned by the event loops, not by a plugin host: an async client is bound to the loop it was
# built on, so sessions of any host on that loop share it, and it lives exactly as long as the
# loop (weak keys; closed at the loop's shutdown). No test or host ever resets it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClients] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()


async def _close_at_shutdown(loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
    # An async generator left suspended on the loop: asyncio.run (and every runner that calls
    # loop.shutdown_asyncgens) closes it when the loop ends, and the clients close with it, so
    # their connections do not outlive the loop.
    try:
        yield
    finally:
        with _clients_lock:
            entry = _clients.pop(loop, None)
        clients = list(entry.clients.values()) if entry is not None else []
        for client in clients:
            try:
                await client.close()
            except Exception:  # noqa: BLE001, S110 - closing at shutdown is best effort
                pass


async def _arm_closer(loop: asyncio.AbstractEventLoop, entry: _LoopClients) -> None:
    closer = entry.closer = _close_at_shutdown(loop)
    await closer.__anext__()


def summarize_on_loop(summarizer: Any, request: SummaryRequest, loop: asyncio.AbstractEventLoop) -> str:
    """From a worker thread: the summary, produced on ``loop`` by the async client.

    The client is built here, in the worker: building one loads the CA bundle (tens of
    milliseconds) and must not stall the loop.
    """
    where = summarizer.where(request.model or summarizer.model)
    sdk = client = None
    if request.model or summarizer.model:  # else asummarize names the missing model
        sdk, client = _async_client(summarizer, loop, where)
    return run_on_host_loop(
        asummarize(summarizer, request, sdk=sdk, client=client), loop,
        timeout=float(summarizer.timeout) + GRACE_SECONDS,
    )


def _async_client(summarizer: Any, loop: asyncio.AbstractEventLoop, where: str) -> tuple[Any, Any]:
    """One async client per loop and endpoint settings, shared by the sessions on that loop."""
    sdk = import_sdk(summarizer.sdk_module, extra=summarizer.sdk_module, provider=summarizer.name)
    key = summarizer.api_key()
    settings = (summarizer.name, summarizer.base_url, key, float(summarizer.timeout))
    with _clients_lock:
        entry = _clients.get(loop)
        if entry is None:
            entry = _clients[loop] = _LoopClients()
            asyncio.run_coroutine_threadsafe(_arm_closer(loop, entry), loop)
        per_loop = entry.clients
        client = per_loop.get(settings)
        if client is None:
            try:
                client = summarizer.new_client(sdk, key, asynchronous=True)
            except Exception as exc:  # e.g. a malformed base_url
                raise SummarizerError(f"{where}: cannot set up the async client: {exc}") from exc
            per_loop[settings] = client
    return sdk, client


async def asummarize(summarizer: Any, request: SummaryRequest, *, sdk: Any = None,
                     client: Any = None) -> str:
    """The summary through the provider's async SDK client (``summarizer`` is one of
    ``hermes_plugins.summarizers``' ``OpenAISummarizer`` / ``AnthropicSummarizer``, whose
    model check, failure translation and text cleaning both paths share)."""
    model, where = summarizer.model_for(request)
    if client is None:
        sdk, client = _async_client(summarizer, asyncio.get_running_loop(), where)
    started = time.perf_counter()
    try:
        # compression.summary.timeout bounds the whole call, as on the synchronous path.
        response = await asyncio.wait_for(
            summarizer._call(client, model, request), float(summarizer.timeout)
        )
    except TimeoutError:
        raise summarizer.timed_out(model, where, client="async") from None
    except Exception as exc:  # SDK errors, and the bare JSON errors the SDKs let through
        raise summarizer.failure(exc, sdk, model, where, client="async") from exc
    return summarizer.text_of(response, model, where, started, client="async")  # type: ignore[no-any-return]
