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

from hermes_core.aio import run_on_host_loop
from hermes_core.logging import get_logger
from hermes_core.summarizer import (
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerTimeoutError,
    SummaryRequest,
)
from hermes_plugins.summarizer_http import (
    display_url,
    import_sdk,
    require_text,
    resolve_api_key,
    translate_failure,
)

log = get_logger(__name__)

#: The async client class of each SDK, by summariser name.
ASYNC_CLIENTS = {"openai": "AsyncOpenAI", "anthropic": "AsyncAnthropic"}
#: Seconds a worker waits beyond the summariser's own timeout before giving up on the loop.
GRACE_SECONDS = 5.0

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()
_closers: dict[int, Any] = {}


async def _close_at_shutdown(loop: asyncio.AbstractEventLoop) -> AsyncIterator[None]:
    # An async generator left suspended on the loop: asyncio.run (and every runner that calls
    # loop.shutdown_asyncgens) closes it when the loop ends, and the clients close with it, so
    # their connections do not outlive the loop.
    try:
        yield
    finally:
        with _clients_lock:
            clients = list((_clients.pop(loop, None) or {}).values())
            _closers.pop(id(loop), None)
        for client in clients:
            try:
                await client.close()
            except Exception:  # noqa: BLE001, S110 - closing at shutdown is best effort
                pass


async def _arm_closer(loop: asyncio.AbstractEventLoop) -> None:
    closer = _close_at_shutdown(loop)
    _closers[id(loop)] = closer
    await closer.__anext__()


def summarize_on_loop(summarizer: Any, request: SummaryRequest, loop: asyncio.AbstractEventLoop) -> str:
    """From a worker thread: the summary, produced on ``loop`` by the async client.

    The client is built here, in the worker: building one loads the CA bundle (tens of
    milliseconds) and must not stall the loop.
    """
    where = _where(summarizer, request.model or summarizer.model)
    sdk = client = None
    if request.model or summarizer.model:  # else asummarize names the missing model
        sdk, client = _async_client(summarizer, loop, where)
    return run_on_host_loop(
        asummarize(summarizer, request, sdk=sdk, client=client), loop,
        timeout=float(summarizer.timeout) + GRACE_SECONDS,
    )


def _where(summarizer: Any, model: str | None) -> str:
    endpoint = display_url(summarizer.base_url) if summarizer.base_url else "the default endpoint"
    return f"{summarizer.name} summariser ({model or 'no model'} at {endpoint})"


def _async_client(summarizer: Any, loop: asyncio.AbstractEventLoop, where: str) -> tuple[Any, Any]:
    """One async client per loop and endpoint settings, shared by the sessions on that loop."""
    sdk = import_sdk(summarizer.sdk_module, extra=summarizer.sdk_module, provider=summarizer.name)
    key = resolve_api_key(
        provider=summarizer.name, configured_env=summarizer.api_key_env,
        default_env=summarizer.default_key_env, base_url=summarizer.base_url,
    )
    settings = (summarizer.name, summarizer.base_url, key, float(summarizer.timeout))
    with _clients_lock:
        if loop not in _clients:
            asyncio.run_coroutine_threadsafe(_arm_closer(loop), loop)
        per_loop = _clients.setdefault(loop, {})
        client = per_loop.get(settings)
        if client is None:
            try:
                client = getattr(sdk, ASYNC_CLIENTS[summarizer.name])(
                    api_key=key, base_url=summarizer.base_url, timeout=summarizer.timeout,
                    max_retries=0,
                )
            except Exception as exc:  # e.g. a malformed base_url
                raise SummarizerError(f"{where}: cannot set up the async client: {exc}") from exc
            per_loop[settings] = client
    return sdk, client


async def asummarize(summarizer: Any, request: SummaryRequest, *, sdk: Any = None,
                     client: Any = None) -> str:
    """The summary through the provider's async SDK client (``summarizer`` is one of
    ``hermes_plugins.summarizers``' ``OpenAISummarizer`` / ``AnthropicSummarizer``)."""
    model = request.model or summarizer.model
    where = _where(summarizer, model)
    if not model:
        raise SummarizerModelNotFoundError(
            f"{where}: no summary model configured; set compression.summary.model"
        )
    if client is None:
        sdk, client = _async_client(summarizer, asyncio.get_running_loop(), where)
    started = time.perf_counter()
    try:
        # compression.summary.timeout bounds the whole call, as on the synchronous path.
        response = await asyncio.wait_for(
            summarizer._call(client, model, request), float(summarizer.timeout)
        )
    except TimeoutError:
        log.debug("summary_call_failed", provider=summarizer.name, model=model, kind="timeout",
                  status=None, deadline=summarizer.timeout, client="async")
        raise SummarizerTimeoutError(
            f"{where}: no complete answer within {summarizer.timeout:g} s "
            "(compression.summary.timeout bounds the whole call)"
        ) from None
    except Exception as exc:  # SDK errors, and the bare JSON errors the SDKs let through
        error = translate_failure(
            exc, sdk, where=where, timeout=summarizer.timeout, key_env=summarizer.key_env
        )
        log.debug("summary_call_failed", provider=summarizer.name, model=model,
                  kind=error.kind, status=error.status, client="async")
        raise error from exc
    text = require_text(summarizer._text_of(response), where=where)
    log.debug("summary_generated", provider=summarizer.name, model=model, chars=len(text),
              seconds=round(time.perf_counter() - started, 3), client="async")
    return text
