"""``hermes-ctx skills``: list skills as the index shows them; ``--check`` the 60-character rule.

The index cuts every description to 60 characters, so whatever follows is never used to pick a
skill. ``--check`` lists each description that is longer, with exactly what the model will see,
and exits 1 when there is any: a pre-commit hook for skill authors.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import CliState, PromptContext, emit_json, emit_table, guarded
from hermes_plugins.skills.index import load_sources, select
from hermes_plugins.skills.inputs import request_for
from hermes_plugins.skills.metadata import (
    DESCRIPTION_LIMIT,
    ROW_CATEGORY,
    ROW_DESCRIPTION,
    ROW_NAME,
    ROW_PATH,
    index_description,
)

#: A cold scan that lasts longer than this shows a progress bar on stderr.
PROGRESS_AFTER_SECONDS = 1.0


class LazyProgress:
    """A progress callback that shows a bar only once the scan has taken a while."""

    def __init__(self, after: float) -> None:
        self.after = after
        self.start = time.monotonic()
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None and done < self.done:
            self.close()  # the next source started
        if self.bar is None:
            if time.monotonic() - self.start < self.after:
                return
            self.bar = click.progressbar(length=total, label="Scanning skills", file=sys.stderr)
            self.bar.__enter__()
            self.done = 0
        self.bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
            self.done = 0


@click.command("skills")
@click.option("--json", "as_json", is_flag=True, help=(
    "JSON: [{name, category, description, index_description, description_chars, over_limit, "
    "shown, hidden_reason, source, path}]."
))
@click.option("--check", is_flag=True, help=(
    f"Only descriptions over {DESCRIPTION_LIMIT} characters, with what the model sees; "
    "exit 1 when there is any."
))
@click.option("--tool", "tools", multiple=True, metavar="NAME",
              help="Apply tool conditions as for a session with this tool (repeatable).")
@click.option("--toolset", "toolsets", multiple=True, metavar="NAME",
              help="Apply toolset conditions as for a session with this toolset (repeatable).")
@click.option("--platform", default="", help="Gateway platform, for skills.platform_disabled.")
@click.pass_obj
@guarded
def skills_command(
    state: CliState,
    as_json: bool,
    check: bool,
    tools: tuple[str, ...],
    toolsets: tuple[str, ...],
    platform: str,
) -> None:
    """List skills as the index shows them to the model; --check the 60-character rule."""
    ctx = PromptContext(
        cwd=Path.cwd(), home=state.home_path, config=state.config, platform=platform,
        tools=tools, toolsets=toolsets, env=dict(os.environ), host=state.host,
    )
    request = request_for(ctx)
    if not tools and not toolsets:
        request = request._replace(tools=None, toolsets=None)
    progress = LazyProgress(PROGRESS_AFTER_SECONDS)
    try:
        loaded, problems = load_sources(
            request.sources, request.home, progress=progress, max_bytes=request.max_file_bytes
        )
    finally:
        progress.close()
    for warning in state.warnings:
        click.echo(f"warning: {warning.message}", err=True)
    for _kind, message, _path in problems + [p for item in loaded for p in item.scan.problems]:
        click.echo(f"warning: {message}", err=True)
    verdicts = select(loaded, request, explain=True).verdicts
    rows = [_describe(source.path, source.label, row, reason) for source, row, reason in verdicts]
    rows.sort(key=lambda r: (r["category"], r["name"], r["path"]))
    if check:
        _check(rows, as_json)
        return
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("No skills found in: " + ", ".join(s.path for s in request.sources), err=True)
        return
    emit_table(
        # The JSON keys, upper-cased: INDEX_DESCRIPTION is the description as the model sees it.
        ["CATEGORY", "NAME", "SHOWN", "INDEX_DESCRIPTION"],
        [
            [
                r["category"], r["name"],
                "yes" if r["shown"] else f"no: {r['hidden_reason']}",
                r["index_description"] + ("  [over 60]" if r["over_limit"] else ""),
            ]
            for r in rows
        ],
    )


def _describe(root: str, label: str, row: list[Any], reason: str | None) -> dict[str, Any]:
    description = row[ROW_DESCRIPTION]
    return {
        "name": row[ROW_NAME],
        "category": row[ROW_CATEGORY],
        "description": description,
        "index_description": index_description(description),
        "description_chars": len(description),
        "over_limit": len(description) > DESCRIPTION_LIMIT,
        "shown": reason is None,
        "hidden_reason": reason,
        "source": label,
        "path": os.path.join(root, row[ROW_PATH]),
    }


def _check(rows: list[dict[str, Any]], as_json: bool) -> None:
    offenders = [r for r in rows if r["over_limit"]]
    if as_json:
        emit_json(offenders)
    elif offenders:
        for r in offenders:
            click.echo(f"{r['path']}")
            click.echo(
                f"  {r['name']}: description is {r['description_chars']} characters "
                f"(limit {DESCRIPTION_LIMIT}); the model sees:"
            )
            click.echo(f"    {r['index_description']}")
        click.echo(
            f"{len(offenders)} of {len(rows)} descriptions are over {DESCRIPTION_LIMIT} characters.",
            err=True,
        )
    else:
        click.echo(f"All {len(rows)} descriptions fit in {DESCRIPTION_LIMIT} characters.", err=True)
    if offenders:
        sys.exit(1)
