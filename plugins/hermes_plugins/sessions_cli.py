"""``hermes-ctx sessions``: the sessions the configured store keeps (SQLite or Redis).

* ``sessions list [--json]`` -> ``[{session_id, model, provider, updated_at, prompt_chars,
  archived, archived_bytes}]``: every session with a stored prompt or an archive;
* ``sessions show SESSION [--prompt] [--json]``: the same for one session (``--prompt`` prints
  the stored prompt itself);
* ``sessions rm SESSION [--json]``: forget its stored prompt and its archive.
"""

from __future__ import annotations

import time
from typing import Any

import click

from hermes_core.plugin import CliState, budgeted, emit_json, emit_table, fail, guarded
from hermes_plugins.archive.memory_store import has_archive


def _store(state: CliState) -> Any:
    # Bounded, driver errors as StoreError: an outage is one line and exit 2 (``guarded``).
    store, _budget = budgeted(state.host.session_store(state.home_path, state.config),
                              state.config.session_store.turn_budget_seconds)
    if store is None or not callable(getattr(store, "session_prompts", None)):
        fail(f"the session store ({store!r}) cannot list its sessions")
    return store


def _rows(store: Any) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for p in store.session_prompts():
        rows[p["session_id"]] = {"session_id": p["session_id"], "model": p["model"], "provider": p["provider"],
                                 "updated_at": p["updated_at"], "prompt_chars": p["chars"],
                                 "archived": 0, "archived_bytes": 0}
    if has_archive(store) and callable(getattr(store, "archive_sessions", None)):
        for a in store.archive_sessions():
            row = rows.setdefault(a["session_id"], {"session_id": a["session_id"], "model": "", "provider": "",
                                                    "updated_at": None, "prompt_chars": 0})
            row["archived"], row["archived_bytes"] = a["count"], a["bytes"]
            if a.get("last") and (row["updated_at"] is None or a["last"] > row["updated_at"]):
                row["updated_at"] = a["last"]
    return dict(sorted(rows.items()))


def _when(stamp: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "-"


@click.group(name="sessions")
def sessions_group() -> None:
    """The sessions the configured store keeps: list, show, rm."""


@sessions_group.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
@guarded
def sessions_list(state: CliState, as_json: bool) -> None:
    """Every session with a stored prompt or an archive."""
    rows = list(_rows(_store(state)).values())
    if as_json:
        emit_json(rows)
        return
    emit_table(
        ("SESSION_ID", "MODEL", "PROVIDER", "UPDATED_AT", "PROMPT_CHARS", "ARCHIVED", "ARCHIVED_BYTES"),
        [(r["session_id"], r["model"] or "-", r["provider"] or "-", _when(r["updated_at"]), r["prompt_chars"],
          r["archived"], r["archived_bytes"]) for r in rows],
    )


@sessions_group.command(name="show")
@click.argument("session_id")
@click.option("--prompt", "show_prompt", is_flag=True, help="Print the stored system prompt.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
@guarded
def sessions_show(state: CliState, session_id: str, show_prompt: bool, as_json: bool) -> None:
    """One session: its stored prompt's model and size, what is archived."""
    store = _store(state)
    row = _rows(store).get(session_id)
    if row is None:
        fail(f"no session {session_id!r} in {store!r} (see hermes-ctx sessions list)")
    if show_prompt:
        click.echo(store.get_prompt(session_id) or "")
        return
    if as_json:
        emit_json(row)
        return
    for key, value in row.items():
        click.echo(f"{key}: {_when(value) if key == 'updated_at' else value}")


@sessions_group.command(name="rm")
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
@guarded
def sessions_rm(state: CliState, session_id: str, as_json: bool) -> None:
    """Forget SESSION: its stored prompt and its archive."""
    store = _store(state)
    prompt = bool(store.delete_prompt(session_id))
    archived = int(store.archive_delete(session_id)) if callable(getattr(store, "archive_delete", None)) else 0
    if not prompt and not archived:
        fail(f"no session {session_id!r} in {store!r}")
    if as_json:
        emit_json({"session_id": session_id, "prompt_removed": prompt, "archived_removed": archived})
        return
    click.echo(f"removed session {session_id}: prompt {'yes' if prompt else 'no'}, {archived} archived message(s)")
