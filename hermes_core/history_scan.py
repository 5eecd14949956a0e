"""What a compaction's recorder reads of each message, read once in the caller's own pass.

With ``hermes_session_compacted`` implemented (the archive), ``Session.compress``'s one pass
(``intake``) fills a ``HistoryScan``, handed over as ``KnownInput.scan`` so the archive does
not read every message again. ``REF_KEY``/``REFS_KEY`` mark a message standing for archived ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

#: Metadata keys the archive sets on a replacement message.
REF_KEY = "_ref"
REFS_KEY = "_refs"


@attrs.define(kw_only=True, slots=True)
class HistoryScan:
    """What recording a compaction reads of each message of its input, by position: its role,
    its content (the snapshot the archive keeps), a tool result's call id, the messages that are
    not plain (``is_plain``), the positions of messages carrying a reference (replacements of an
    earlier compaction) and of user messages that are summaries (no turn starts there). Read by
    ``_scan``, or handed over by the caller's own pass over the list (``KnownInput.scan``).

    ``contents``, ``call_ids`` (tool results only) and ``odd`` are dicts by position, not
    lists: a dict holding only strings (or None) is not tracked by the garbage collector, whose
    young collection after a compaction would otherwise visit every item the archive's batch
    holds (docs/performance.md, "Figures moved out of the core's docstrings").
    """

    roles: list[Any] = attrs.Factory(list)
    contents: dict[int, Any] = attrs.Factory(dict)
    call_ids: dict[int, Any] = attrs.Factory(dict)
    odd: dict[int, dict[str, Any]] = attrs.Factory(dict)
    marked: list[int] = attrs.Factory(list)
    summaries: list[int] = attrs.Factory(list)


def is_plain(message: Mapping[str, Any], role: Any, content: Any, call_id: Any) -> bool:
    """Whether ``message`` holds nothing but a role, a string content and, for a tool result,
    a non-empty call id (``role``, ``content``, ``call_id``: its values, already read): its
    archive entry is made from those alone (its text the content, no extra)."""
    size = len(message)
    return (
        (size == 2 or (size == 3 and role == "tool" and type(call_id) is str and call_id != ""))
        and type(role) is str and role != "" and type(content) is str
    )
