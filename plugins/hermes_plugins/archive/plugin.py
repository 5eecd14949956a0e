"""Built-in plugin ``archive``: what each compaction took out of the context, kept by reference.

It implements ``hermes_session_compacted``: the messages that left (or were rewritten) are
stored in the session's ``SessionArchive`` (the session store's ``archive_*`` methods, else
memory) and each replacement is marked with the references it stands for. The recall tools
that read it are the ``recall`` plugin of this package; ``hermes-ctx history`` is its CLI.
Blocking it (``plugins.disabled: [archive]``) leaves compaction as it is, unmarked.
"""

from __future__ import annotations

import sys
from typing import Any

from hermes_core.plugin import ConfigSection, hookimpl
from hermes_plugins._common.archive_settings import ARCHIVE
from hermes_plugins.archive.session_archive import RECALL_TOOLS, SessionArchive

#: The key of the session's archive in ``Session.plugin_state``.
STATE_KEY = "archive"


def archive_of(session: Any) -> SessionArchive | None:
    """``session``'s archive (made on first use), or ``None`` when this plugin is not loaded on
    the session's host (blocked, or replaced by another archive)."""
    found: SessionArchive | None = session.plugin_state.get(STATE_KEY)
    if found is not None:
        return found
    if not session.host.pm.is_registered(sys.modules[__name__]):
        return None
    settings = session.config.section(ARCHIVE)
    archive = SessionArchive(
        session_id=session.session_id, store=session.store if session.persist else None,
        enabled=settings.enabled, tools=session.host.provides_tools(RECALL_TOOLS),
        keep_secrets=settings.keep_secrets, redactor=session.redactor,
    )
    # Two threads racing here keep one archive (nothing of the other was used).
    kept: SessionArchive = session.plugin_state.setdefault(STATE_KEY, archive)
    return kept


@hookimpl
def hermes_config_sections() -> ConfigSection[Any]:
    return ARCHIVE


@hookimpl(trylast=True)
def hermes_session_compacted(
    session: Any, before: list[dict[str, Any]], after: list[dict[str, Any]], phase: str
) -> list[dict[str, Any]] | None:
    archive = archive_of(session)
    if archive is None:
        return None
    # The session's own pass over a forced compression's input read the columns already.
    return archive.record(before, after, phase=phase, scan=session.engine.input_scan(before))


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.archive.recall_cli import history_group  # click's commands: only for the CLI

    if "history" not in cli.commands:
        cli.add_command(history_group)
