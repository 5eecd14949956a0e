"""The LLM summarisers: ``openai`` (any chat-completions endpoint) and ``anthropic`` (Messages API).

Selected by ``compression.summary.provider``. Each sends the engine's prompt as one user message
through the provider's official SDK, an optional extra imported on first use, and turns every
failure into a typed ``SummarizerError`` so the engine, not the SDK, decides about retries: the
SDKs' own retries are switched off.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from hermes_core.plugin import (
    Config,
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerTimeoutError,
    SummaryRequest,
    content_text,
    get_logger,
    hookimpl,
)
from hermes_plugins.summarizer_http import (
    DeadlineExceeded,
    call_with_deadline,
    display_url,
    import_sdk,
    require_text,
    resolve_api_key,
    translate_failure,
)

log = get_logger(__name__)

ANTHROPIC_MIN_MAX_TOKENS = 1_024


class _SdkSummarizer:
    """Shared plumbing: settings from the config, a lazily built client, failure translation."""

    name: str
    sdk_module: str
    #: the SDK's client classes, by attribute name
    client_class: str
    async_client_class: str
    default_key_env: str

    def __init__(self, config: Config, *, model: str | None = None) -> None:
        summary = config.compression.summary
        self.model = model or summary.model
        self.base_url = summary.base_url
        self.api_key_env = summary.api_key_env
        self.timeout = float(summary.timeout)
        self._client: Any = None
        self._sdk: ModuleType | None = None
        self._lock = threading.Lock()

    @property
    def key_env(self) -> str:
        return self.api_key_env or self.default_key_env

    def summarize(self, request: SummaryRequest) -> str:
        aio = sys.modules.get("hermes_core.aio")  # never imported: no AsyncSession, no loop
        loop = aio.host_loop() if aio is not None else None
        if loop is not None:  # inside an AsyncSession: the async client, on the host's loop
            from hermes_plugins.summarizers_async import summarize_on_loop

            return summarize_on_loop(self, request, loop)
        model, where = self.model_for(request)
        sdk, client = self._ensure_client(where)
        started = time.perf_counter()
        try:
            # compression.summary.timeout bounds the whole call, not each socket read.
            response = call_with_deadline(
                lambda: self._call(client, model, request), self.timeout,
                abandon=lambda: self._abandon(client),
            )
        except DeadlineExceeded:
            raise self.timed_out(model, where) from None
        except Exception as exc:  # SDK errors, and the bare JSON errors the SDKs let through
            raise self.failure(exc, sdk, model, where) from exc
        return self.text_of(response, model, where, started)

    # --- the parts both clients share (``summarizers_async`` uses them too) -----------------

    def where(self, model: str | None) -> str:
        """How errors name this summariser: provider, model and (credential-free) endpoint."""
        endpoint = display_url(self.base_url) if self.base_url else "the default endpoint"
        return f"{self.name} summariser ({model or 'no model'} at {endpoint})"

    def model_for(self, request: SummaryRequest) -> tuple[str, str]:
        """The model to ask and the ``where`` of its errors; a missing model is an error."""
        model = request.model or self.model
        where = self.where(model)
        if not model:
            raise SummarizerModelNotFoundError(
                f"{where}: no summary model configured; set compression.summary.model"
            )
        return model, where

    def api_key(self) -> str:
        return resolve_api_key(
            provider=self.name, configured_env=self.api_key_env,
            default_env=self.default_key_env, base_url=self.base_url,
        )

    def new_client(self, sdk: ModuleType, key: str, *, asynchronous: bool = False) -> Any:
        """A client with the SDK's own retries off (the engine decides about retries)."""
        factory = getattr(sdk, self.async_client_class if asynchronous else self.client_class)
        return factory(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def timed_out(self, model: str, where: str, **context: Any) -> SummarizerTimeoutError:
        log.debug("summary_call_failed", provider=self.name, model=model, kind="timeout",
                  status=None, deadline=self.timeout, **context)
        return SummarizerTimeoutError(
            f"{where}: no complete answer within {self.timeout:g} s "
            "(compression.summary.timeout bounds the whole call)"
        )

    def failure(self, exc: Exception, sdk: Any, model: str, where: str, **context: Any) -> SummarizerError:
        error = translate_failure(exc, sdk, where=where, timeout=self.timeout, key_env=self.key_env)
        log.debug("summary_call_failed", provider=self.name, model=model,
                  kind=error.kind, status=error.status, **context)
        return error

    def text_of(self, response: Any, model: str, where: str, started: float, **context: Any) -> str:
        """The summary text of ``response`` (an empty one is an error)."""
        text = require_text(self._text_of(response), where=where)
        log.debug("summary_generated", provider=self.name, model=model, chars=len(text),
                  seconds=round(time.perf_counter() - started, 3), **context)
        return text

    def _ensure_client(self, where: str) -> tuple[ModuleType, Any]:
        with self._lock:
            if self._client is None:
                sdk = import_sdk(self.sdk_module, extra=self.sdk_module, provider=self.name)
                key = self.api_key()
                try:
                    self._client = self.new_client(sdk, key)
                except Exception as exc:  # e.g. a malformed base_url
                    raise SummarizerError(f"{where}: cannot set up the client: {exc}") from exc
                self._sdk = sdk
            assert self._sdk is not None
            return self._sdk, self._client

    def _abandon(self, client: Any) -> None:
        """Drop a client whose call ran past the deadline: closing it ends the worker's read."""
        with self._lock:
            if self._client is client:
                self._client = None
        client.close()

    def _call(self, client: Any, model: str, request: SummaryRequest) -> Any:
        raise NotImplementedError

    def _text_of(self, response: Any) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} model={self.model!r} base_url={self.base_url!r}>"


class OpenAISummarizer(_SdkSummarizer):
    """Chat completions: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp server and the like."""

    name = "openai"
    sdk_module = "openai"
    client_class, async_client_class = "OpenAI", "AsyncOpenAI"
    default_key_env = "OPENAI_API_KEY"

    def _call(self, client: Any, model: str, request: SummaryRequest) -> Any:
        # No max_tokens: the budget is guidance inside the prompt, and reasoning models reject
        # or misread a completion cap.
        return client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": request.prompt}]
        )

    def _text_of(self, response: Any) -> str:
        choices = _field(response, "choices") or []
        if not choices:
            return ""
        return reply_text(_field(_field(choices[0], "message"), "content"))


class AnthropicSummarizer(_SdkSummarizer):
    """The Anthropic Messages API (or a server that speaks it)."""

    name = "anthropic"
    sdk_module = "anthropic"
    client_class, async_client_class = "Anthropic", "AsyncAnthropic"
    default_key_env = "ANTHROPIC_API_KEY"

    def _call(self, client: Any, model: str, request: SummaryRequest) -> Any:
        return client.messages.create(
            model=model,
            max_tokens=max_tokens_for(request),
            messages=[{"role": "user", "content": request.prompt}],
        )

    def _text_of(self, response: Any) -> str:
        # Only text blocks: thinking blocks are reasoning, never part of the summary.
        return reply_text(_field(response, "content") or [])


def max_tokens_for(request: SummaryRequest) -> int:
    """The Messages API requires a cap: twice the target leaves room for a verbose model."""
    return max(ANTHROPIC_MIN_MAX_TOKENS, 2 * int(request.budget_tokens))


def reply_text(content: Any) -> str:
    """A model reply's text: its text blocks as one run (a reply split into blocks, e.g. around
    citations, is one text), never its reasoning blocks."""
    return content_text(content, sep="")


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


@hookimpl(trylast=True)
def hermes_summarizers() -> dict[str, Any]:
    return {"openai": OpenAISummarizer, "anthropic": AnthropicSummarizer}


__all__ = ["AnthropicSummarizer", "OpenAISummarizer", "hermes_summarizers", "max_tokens_for"]
