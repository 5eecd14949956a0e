"""Whether a provider's error says the request outgrew the context window, and by how much.

``Session.on_provider_error`` compresses and retries only on an overflow: HTTP 413, the
providers' "context length exceeded" wordings (OpenAI, Anthropic, vLLM, Ollama, llama.cpp,
Bedrock) or the 429 that asks for the long-context tier; the window an error states is learned.
"""

from __future__ import annotations

import re

__all__ = ["classify_overflow", "reported_limit"]

_OVERFLOW_PHRASES = (
    "context length",
    "context_length_exceeded",
    "maximum context",
    "context window",
    "prompt is too long",
    "prompt too long",
    "input is too long",
    "too many tokens",
    "reduce the length",
    "token limit",
    "exceeds the context",
    "exceeds the maximum",
    "request too large",
)
_PAYLOAD_PHRASES = ("request entity too large", "payload too large", "error code: 413")
_OUTPUT_CAP = re.compile(r"max_tokens|max_completion_tokens|max_output_tokens", re.I)
_LIMIT = re.compile(
    r"(?:maximum context length|context window|context length|limit)\D{0,40}?(\d[\d,]{3,})\s*tokens",
    re.I,
)


def _status_of(error: BaseException) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(error, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def classify_overflow(error: BaseException | str) -> str | None:
    """``payload_too_large``, ``context_overflow`` or ``long_context_tier``; ``None`` otherwise.

    Recognises HTTP 413, the providers' "context length exceeded" / "prompt is too long" /
    "maximum context length" wordings (OpenAI, Anthropic, vLLM, Ollama, llama.cpp, Bedrock), and
    the 429 that asks for the long-context tier. An output-cap error ("max_tokens is too large")
    is not an overflow: lowering the output cap fixes it, not compressing.
    """
    status = None if isinstance(error, str) else _status_of(error)
    text = str(error).lower()
    if status == 413 or any(p in text for p in _PAYLOAD_PHRASES):
        return "payload_too_large"
    if status == 429:
        return "long_context_tier" if "extra usage" in text and "long context" in text else None
    if _OUTPUT_CAP.search(text) and not ("prompt" in text or "input" in text or "messages" in text):
        return None
    if any(p in text for p in _OVERFLOW_PHRASES):
        return "context_overflow"
    return None


def reported_limit(error: BaseException | str) -> int | None:
    """The window size an overflow error states ("maximum context length is 262,144 tokens")."""
    match = _LIMIT.search(str(error))
    if not match:
        return None
    value = int(match.group(1).replace(",", ""))
    return value if value >= 1_000 else None
