"""``hermes-ctx tools``: what the model would see, and what a search would find.

``tools.json`` is a list of OpenAI-format tool definitions, each optionally with ``source``.

* ``hermes-ctx tools assemble --catalog tools.json [--context-length N] [--json]`` ->
  ``{activated, tools: [names the model sees], deferred_count, deferred_tokens, listing_form}``
* ``hermes-ctx tools search QUERY --catalog tools.json [--limit N] [--json]`` ->
  ``{query, results: [{name, score, source, description}]}``, best first (an exact name match
  is first and carries ``"exact": true``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import CliState, bounded, emit_json, emit_table, fail, guarded
from hermes_plugins.tools import bm25
from hermes_plugins.tools.assembly import assemble_tool_defs
from hermes_plugins.tools.catalog import (
    classify,
    default_limit,
    entry_of,
    search_settings,
    tool_name,
)
from hermes_plugins.tools.listing import short_desc


def load_catalog(path: str) -> list[dict[str, Any]]:
    """Read ``tools.json``; a clear error (exit 2) when it is missing or not a list of objects."""
    try:
        data = bounded.loads(Path(path).read_text(encoding="utf-8"))
    except bounded.TooDeepError:
        fail(f"{path}: JSON nested more than {bounded.MAX_DEPTH} levels deep")
    except FileNotFoundError:
        fail(f"{path}: catalog file not found")
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start] if exc.start < len(exc.object) else 0
        fail(f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}); a catalog is a JSON list of tools")
    except OSError as exc:
        fail(f"{path}: cannot read the catalog: {exc.strerror or exc}")
    except json.JSONDecodeError as exc:
        fail(f"{path}, line {exc.lineno}: invalid JSON: {exc.msg}")
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        fail(f"{path}: expected a JSON list of tool definitions, got {type(data).__name__}")
    bad = [i for i, item in enumerate(data) if tool_name(item) is None]
    if bad:
        click.echo(
            f"warning: {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} without a tool name "
            f"(index {', '.join(map(str, bad[:5]))}{', ...' if len(bad) > 5 else ''}) "
            "are passed through unchanged and never searched",
            err=True,
        )
    return data


@click.group(name="tools")
def tools_group() -> None:
    """Deferred tool disclosure: assemble a catalog, search it."""


@tools_group.command()
@click.option("--catalog", "catalog_path", required=True, type=click.Path(dir_okay=False), help="tools.json: a list of tool definitions.")
@click.option("--context-length", type=click.IntRange(min=1), default=None, help="The model's window in tokens (unknown if omitted).")
@click.option("--json", "as_json", is_flag=True, help="JSON: {activated, tools, deferred_count, deferred_tokens, listing_form}.")
@click.pass_obj
@guarded
def assemble(state: CliState, catalog_path: str, context_length: int | None, as_json: bool) -> None:
    """Show the tool definitions the model would see for this catalog."""
    definitions = load_catalog(catalog_path)
    result = assemble_tool_defs(definitions, context_length=context_length, config=state.config)
    names = [tool_name(d) or "?" for d in result.tool_defs]
    if as_json:
        emit_json({
            "activated": result.activated,
            "tools": names,
            "deferred_count": result.deferred_count,
            "deferred_tokens": result.deferred_tokens,
            "listing_form": result.listing_form,
        })
        return
    click.echo(f"activated:       {'yes' if result.activated else 'no'}")
    click.echo(f"deferred tools:  {result.deferred_count} (~{result.deferred_tokens:,} tokens of schemas)")
    click.echo(f"listing:         {result.listing_form or '-'} (budget {result.listing_budget:,} tokens)")
    click.echo(f"the model sees:  {len(names)} tools")
    for name in names:
        click.echo(f"  {name}")


@tools_group.command()
@click.argument("query")
@click.option("--catalog", "catalog_path", required=True, type=click.Path(dir_okay=False), help="tools.json: a list of tool definitions.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Results (default tools.search.search_default_limit).")
@click.option("--json", "as_json", is_flag=True, help="JSON: {query, results: [{name, score, source, description}]}.")
@click.pass_obj
@guarded
def search(state: CliState, query: str, catalog_path: str, limit: int | None, as_json: bool) -> None:
    """Search the deferred tools of a catalog like tool_search does."""
    definitions = load_catalog(catalog_path)
    settings = search_settings(state.config)
    deferred = classify(definitions, settings).deferred
    wanted = default_limit(settings) if limit is None else min(limit, settings.max_search_limit)
    hits = bm25.index_for(deferred).search(query, wanted)
    rows = []
    for hit in hits:
        entry = entry_of(deferred[hit.position])
        row: dict[str, Any] = {
            "name": hit.name,
            "score": round(hit.score, 4),
            "source": entry.label,
            "description": entry.description,
        }
        if hit.exact:
            row["exact"] = True
        rows.append(row)
    if as_json:
        emit_json({"query": query, "results": rows})
        return
    if not rows:
        click.echo(f"no deferred tool matches {query!r} ({len(deferred)} deferred)")
        return
    emit_table(
        ["NAME", "SCORE", "SOURCE", "DESCRIPTION"],
        [
            [r["name"] + (" (exact)" if r.get("exact") else ""), f"{r['score']:.3f}", r["source"], short_desc(r["description"])]
            for r in rows
        ],
    )
