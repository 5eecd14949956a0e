"""``hermes-ctx history``: what compactions archived, per session (the host's view: originals).

* ``history list [--json]`` -> ``[{session_id, count, bytes, first, last}]`` (times: epoch seconds)
* ``history search SESSION QUERY [--limit N] [--json]`` -> ``{session_id, query, hits: [{ref,
  role, tool, turn, snippet}]}``
* ``history show SESSION REF [--json]`` -> the original text (``--json``: the whole entry and
  the message as it was)
* ``history prune [--max-age-days D] [--max-bytes N] [--session S] [--json]`` -> ``{removed}``;
  the limits default to ``archive.max_age_days`` / ``archive.max_bytes_per_session``.

Nothing secret on screen: every text shown is redacted (``hermes_core.redaction``) - the
archive already stores placeholders, and an entry stored with ``archive.keep_secrets: true`` (or
by an older version) is masked on its way out.
"""

from __future__ import annotations

import time
from typing import Any

import click

from hermes_core.plugin import CliState, budgeted, emit_json, emit_table, fail, guarded, redact_text
from hermes_plugins._common.archive_settings import ARCHIVE
from hermes_plugins.archive.memory_store import has_archive
from hermes_plugins.archive.search import ArchiveError, parse_ref, query_words, snippet
from hermes_plugins.archive.session_archive import original_message


def _store(state: CliState) -> Any:
    # A remote store's calls are bounded and its driver errors become StoreError: an outage is
    # one line and exit 2 (``guarded``), not a traceback.
    store, _budget = budgeted(state.host.session_store(state.home_path, state.config),
                              state.config.session_store.turn_budget_seconds)
    if not has_archive(store):
        fail(f"the session store ({store!r}) keeps no archive")
    return store


def _known(store: Any, session_id: str) -> Any:
    """``store``, once ``session_id`` is known to it; exit 2 naming it otherwise."""
    if not store.archive_stats(session_id).get("count"):
        fail(f"no archived messages for session {session_id!r} in {store!r} (see hermes-ctx history list)")
    return store


def _when(stamp: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "-"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


@click.group(name="history")
def history_group() -> None:
    """The archive of compacted messages: list sessions, search, show an original, prune."""


@history_group.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="JSON: [{session_id, count, bytes, first, last}].")
@click.pass_obj
@guarded
def history_list(state: CliState, as_json: bool) -> None:
    """Sessions with archived messages, their counts and sizes."""
    rows = _store(state).archive_sessions()
    if as_json:
        emit_json([{k: r[k] for k in ("session_id", "count", "bytes", "first", "last")} for r in rows], redact=True)
        return
    emit_table(
        ("SESSION_ID", "COUNT", "BYTES", "FIRST", "LAST"),  # the JSON keys, upper-cased
        [(r["session_id"], r["count"], _size(r["bytes"]), _when(r["first"]), _when(r["last"])) for r in rows],
        redact=True,
    )


@history_group.command(name="search")
@click.argument("session_id")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
@guarded
def history_search(state: CliState, session_id: str, query: str, limit: int, as_json: bool) -> None:
    """Search SESSION's archive for QUERY (words, identifiers, paths, error texts)."""
    try:
        words = query_words(query)
    except ArchiveError as exc:
        fail(str(exc))
    hits = _known(_store(state), session_id).archive_search(session_id, query, limit)
    out = [
        {"ref": h["ref"], "role": h["role"], "tool": h.get("tool") or None, "turn": h["turn"],
         "snippet": snippet(redact_text(h["text"]), words, 160)}
        for h in hits
    ]
    if as_json:
        emit_json({"session_id": session_id, "query": query, "hits": out}, redact=True)
        return
    emit_table(
        ("REF", "ROLE", "TOOL", "TURN", "SNIPPET"),  # the keys of the JSON hits
        [(h["ref"], h["role"], h["tool"] or "-", h["turn"] if h["turn"] is not None else "-",
          " ".join(h["snippet"].split())) for h in out],
        redact=True,
    )


@history_group.command(name="show")
@click.argument("session_id")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="The whole entry as JSON.")
@click.pass_obj
@guarded
def history_show(state: CliState, session_id: str, ref: str, as_json: bool) -> None:
    """Print the original text of REF in SESSION."""
    try:
        ref = parse_ref(ref)
    except ArchiveError as exc:
        fail(str(exc))
    row = _known(_store(state), session_id).archive_get(session_id, ref)
    if row is None:
        fail(f"no archived message {ref} in session {session_id} (see hermes-ctx history search)")
    if as_json:
        emit_json({**{k: v for k, v in row.items() if k != "extra"}, "message": original_message(row)}, redact=True)
        return
    click.echo(redact_text(row["text"]))


@history_group.command(name="prune")
@click.option("--max-age-days", type=click.FloatRange(0, min_open=True), default=None,
              help="Remove entries older than this (default: archive.max_age_days).")
@click.option("--max-bytes", type=click.IntRange(1), default=None,
              help="Per-session cap, oldest first (default: archive.max_bytes_per_session).")
@click.option("--session", "session_id", default=None, help="Only this session.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
@guarded
def history_prune(
    state: CliState, max_age_days: float | None, max_bytes: int | None, session_id: str | None, as_json: bool
) -> None:
    """Apply the archive's retention limits now."""
    section = state.config.section(ARCHIVE)
    age = max_age_days if max_age_days is not None else section.max_age_days
    cap = max_bytes if max_bytes is not None else section.max_bytes_per_session
    store = _store(state) if session_id is None else _known(_store(state), session_id)
    result = store.archive_prune(max_age_days=age, max_bytes_per_session=cap, session_id=session_id)
    if as_json:
        emit_json({"removed": result["removed"], "max_age_days": age, "max_bytes_per_session": cap})
        return
    click.echo(f"removed {result['removed']} archived message(s)")
