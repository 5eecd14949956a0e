"""What the LLM summarisers share: lazy SDK import, API keys, failure classes, output cleaning.

The failure classes follow the compressor's policy (§6.5, §9.6 of the compression spec): access
and quota problems and unreachable servers abort the compression (nothing is dropped), timeouts
and rate limits start the cooldown ladder, an unknown model falls back once to the main model,
anything else is a generic failure. The mapping works on HTTP status and error text rather than
on SDK exception classes so it holds across SDK versions and OpenAI-compatible servers.
"""

from __future__ import annotations

import contextvars
import importlib
import json
import os
import threading
import urllib.parse
from collections.abc import Callable
from types import ModuleType
from typing import Any

from hermes_core.plugin import (
    SummarizerAuthError,
    SummarizerEmptyError,
    SummarizerError,
    SummarizerMissingDependencyError,
    SummarizerModelNotFoundError,
    SummarizerNetworkError,
    SummarizerTimeoutError,
)
from hermes_plugins._common.reasoning import strip_reasoning

# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but both SDKs refuse to build a client
# without one.
PLACEHOLDER_KEY = "hermes-no-key"

AUTH_STATUSES = frozenset({401, 402, 403})
TIMEOUT_STATUSES = frozenset({408, 429, 502, 504})

# Out of credit is an access problem, not a rate limit: waiting will not fix it (several
# providers answer it with 429 or 400).
_QUOTA_MARKERS = (
    "insufficient_quota", "exceeded your current quota", "credit balance", "insufficient credit",
    "spend limit", "payment required", "quota exceeded",
)
_MODEL_MARKERS = (
    "model_not_found", "model not found", "does not exist", "no available channel",
    "unknown model",
)
_TIMEOUT_MARKERS = ("timed out", "timeout")

DETAIL_MAX_CHARS = 300

_ERROR_CLASSES: dict[str, type[SummarizerError]] = {
    "auth": SummarizerAuthError,
    "network": SummarizerNetworkError,
    "timeout": SummarizerTimeoutError,
    "model_not_found": SummarizerModelNotFoundError,
    "empty": SummarizerEmptyError,
    "other": SummarizerError,
}


def import_sdk(module: str, *, extra: str, provider: str) -> ModuleType:
    """Import a provider SDK on first use; a missing one names the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SummarizerMissingDependencyError(
            f"the {provider!r} summariser needs the {module!r} package, which is not installed; "
            f"install it with: pip install 'hermes-core[{extra}]'"
        ) from exc


def resolve_api_key(*, provider: str, configured_env: str | None, default_env: str,
                    base_url: str | None) -> str:
    """The key from the configured variable; a placeholder for a keyless local server.

    A missing key is an auth failure when the provider's own endpoint is used (no
    ``base_url``) or when ``api_key_env`` was set explicitly (the user expects a key there).
    """
    env_name = configured_env or default_env
    value = os.environ.get(env_name, "").strip()
    if value:
        return value
    if base_url and not configured_env:
        return PLACEHOLDER_KEY
    raise SummarizerAuthError(
        f"the {provider!r} summariser has no API key: set the environment variable {env_name}"
        " (or point compression.summary.api_key_env at the variable that holds it)"
    )


def display_url(url: str) -> str:
    """``url`` without credentials or query, safe for error messages and logs."""
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url.split("?", 1)[0].rsplit("@", 1)[-1]
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}{parts.path}"


def failure_kind(status: int | None, text: str) -> str:
    """The summariser failure kind for an HTTP status and the error's text."""
    lowered = text.lower()
    if status in AUTH_STATUSES or any(marker in lowered for marker in _QUOTA_MARKERS):
        return "auth"
    if status in TIMEOUT_STATUSES:
        return "timeout"
    if status == 404 or any(marker in lowered for marker in _MODEL_MARKERS):
        return "model_not_found"
    if any(marker in lowered for marker in _TIMEOUT_MARKERS):
        return "timeout"
    return "other"


def error_text(exc: BaseException) -> str:
    """The provider's own error message (and code), else the exception's string."""
    body = getattr(exc, "body", None)
    parts: list[str] = []
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            parts = [str(inner[key]) for key in ("message", "type", "code") if inner.get(key)]
        elif inner:
            parts = [str(inner)]
    elif isinstance(body, str) and body.strip():
        parts = [body.strip()]
    text = " | ".join(parts) if parts else str(exc)
    return text if len(text) <= DETAIL_MAX_CHARS else text[: DETAIL_MAX_CHARS - 3] + "..."


def translate_failure(exc: BaseException, sdk: ModuleType, *, where: str, timeout: float,
                      key_env: str) -> SummarizerError:
    """Map an exception raised by an SDK call onto the typed summariser errors."""
    if isinstance(exc, sdk.APITimeoutError):
        return SummarizerTimeoutError(f"{where}: no answer within {timeout:g} s")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return SummarizerNetworkError(f"{where}: cannot reach the server{detail}")
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        detail = error_text(exc)
        kind = failure_kind(status, detail)
        hint = f"; check the key in ${key_env} and the account's credit" if kind == "auth" else ""
        return _ERROR_CLASSES[kind](f"{where}: HTTP {status}: {detail}{hint}", status=status)
    if isinstance(exc, json.JSONDecodeError):
        # The SDKs let a 200 with an empty or non-JSON body escape as a bare decode error.
        if not exc.doc.strip():
            return SummarizerEmptyError(f"{where}: the server answered with an empty body")
        return SummarizerError(f"{where}: the answer is not JSON: {exc}")
    return SummarizerError(f"{where}: {type(exc).__name__}: {error_text(exc)}")


class DeadlineExceeded(Exception):
    """``call_with_deadline`` gave up waiting; the call may still be running (abandoned)."""


def call_with_deadline(call: Callable[[], Any], timeout: float, *, abandon: Callable[[], None]) -> Any:
    """``call()``'s result, or ``DeadlineExceeded`` once ``timeout`` seconds have passed.

    The SDKs' ``timeout`` bounds each socket operation, not the call: a server that sends a
    byte a second never trips it. So the call runs on a worker thread (in a copy of the
    caller's context, so logs and warnings keep their bindings) and the caller waits at most
    ``timeout`` - connect, DNS, headers and every byte of the body included. On expiry
    ``abandon()`` runs on a daemon thread (the summarisers close their HTTP client there, which
    ends the worker's next read) and the caller gets ``DeadlineExceeded`` at once.
    """
    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            box["value"] = context.run(call)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller as is
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="hermes-summary-call", daemon=True).start()
    if not done.wait(timeout):
        threading.Thread(target=_quietly, args=(abandon,), name="hermes-summary-abandon",
                         daemon=True).start()
        raise DeadlineExceeded(f"no complete answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _quietly(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001, S110 - tearing down an abandoned client is best effort
        pass


def require_text(text: str, *, where: str) -> str:
    """The cleaned summary; blank (or reasoning only) is a failure, never an empty summary."""
    cleaned = strip_reasoning(text)
    if not cleaned:
        raise SummarizerEmptyError(f"{where}: the model returned no summary text")
    return cleaned
