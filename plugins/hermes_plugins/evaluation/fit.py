"""Does the compacted result fit? Its tokens counted, not estimated, against the engine's limit.

The engine judges its own fit on characters/4; the eval counts again, independently:

* OpenAI models (``gpt-``, ``o1``/``o3``/``o4``, ``chatgpt``, ``codex``): tiktoken's cl100k_base
  (``hermes_core.tokens``, bundled offline). It is GPT-4's and GPT-3.5's own encoding; the o200k
  models (GPT-4o, 4.1, 5, the o-series) count 5-12% fewer tokens on English and code in public
  measurements, so the count errs on the safe side and no margin is added.
* Other models (Claude, Gemini, unknown): the same count plus ``ESTIMATE_MARGIN`` (25%): their
  tokenizers are not published; public comparisons put them within about +25% of cl100k on
  code and JSON (less on prose), so the margin keeps "fits" from being claimed on a guess.

Each message costs its text, its tool calls' names and arguments, ``IMAGE_TOKEN_ESTIMATE``
per image and ``PER_MESSAGE`` tokens of chat framing (OpenAI's documented 3 per message, plus
the role). The limit is the engine's compaction threshold when it has one (``threshold_tokens``),
else the window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.messages import content_text
from hermes_core.tokens import IMAGE_TOKEN_ESTIMATE, exact_tokenizer

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
    """``{"tokens", "method", "margin", "limit", "fits"}`` of ``messages`` for ``model``."""
    texts: list[str] = []
    fixed = 0
    for message in messages:
        texts.extend(_pieces(message))
        fixed += PER_MESSAGE + _images(message.get("content")) * IMAGE_TOKEN_ESTIMATE
    counted = sum(exact_tokenizer().count_many(texts)) + fixed
    openai = is_openai_model(model)
    margin = 0.0 if openai else ESTIMATE_MARGIN
    tokens = counted if openai else int(counted * (1 + margin) + 0.999)
    return {
        "tokens": tokens,
        "method": "tiktoken cl100k_base" if openai else f"cl100k_base + {round(margin * 100)}% margin",
        "margin": margin,
        "limit": int(limit),
        "fits": tokens <= limit,
    }
