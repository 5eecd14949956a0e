"""Does the compacted result fit? Its tokens counted, not estimated, against the engine's limit.

The engine judges its own fit on characters/4; the eval counts again, the way the session
counts a request after a compaction (``hermes_core.tokens.RequestCounter``, one rule for both):
the model's own encoding where it runs offline (o200k_base for gpt-4o, 4.1, 5 and the
o-series; cl100k_base for gpt-4 and gpt-3.5), else cl100k_base plus a stated margin (Claude
+20%, others +10%). The limit is the engine's compaction threshold when it has one
(``threshold_tokens``), else the window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import RequestCounter, content_text

ESTIMATE_MARGIN = 0.25
PER_MESSAGE = 4
_OPENAI = re.compile(r"(?:^|[/:])(?:gpt-|o[134](?:$|[-.])|chatgpt|codex|text-davinci|davinci|text-embedding)")
_IMAGE_TYPES = frozenset({"image_url", "input_image", "image"})


def is_openai_model(model: str) -> bool:
    """Whether ``model`` names an OpenAI model (tiktoken counts it)."""
    return bool(_OPENAI.search(model.strip().lower()))


def _images(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if isinstance(part, Mapping) and part.get("type") in _IMAGE_TYPES)


def _pieces(message: Mapping[str, Any]) -> list[str]:
    pieces = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            arguments = fn.get("arguments")
            pieces.append(str(fn.get("name") or ""))
            pieces.append(arguments if isinstance(arguments, str) else str(arguments or ""))
    return [p for p in pieces if p]


def count_fit(messages: Sequence[Mapping[str, Any]], model: str, limit: int) -> dict[str, Any]:
    """``{"tokens", "method", "margin", "limit", "fits"}`` of ``messages`` for ``model``, counted
    the way the session counts its own fit (``hermes_core.tokens.RequestCounter``)."""
    counter = RequestCounter(model)
    tokens = counter.count(messages)
    return {
        "tokens": tokens,
        "method": counter.method + (f" + {round(counter.margin * 100)}% margin" if counter.margin else ""),
        "margin": counter.margin,
        "limit": int(limit),
        "fits": tokens <= limit,
    }
