"""``ArchivedBatch``: the entries of one compaction, built where they are first read (the
store's writer thread), with every secret masked by the session's ``Redactor``."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import Redactor, get_logger, redact_data
from hermes_plugins.archive.diff import _extra_of, _tool_names
from hermes_plugins.archive.search import message_text

log = get_logger("hermes_plugins.archive")

#: The per-entry columns of ``ArchivedBatch.columns()``, in this order.
BATCH_COLUMNS = ("ref", "seq", "role", "tool", "call_id", "turn", "position", "replaced_by", "turn_start", "text", "extra")


class ArchivedBatch(Sequence[dict[str, Any]]):
    """The entries of one compaction, built when first read: column by column for a store that
    writes rows (``columns()``: the SQLite store binds them as they are), or as the read-only
    sequence of ``archive_put`` record dicts (``ref``, ``seq``, ``role``, ``tool``, ``call_id``,
    ``turn``, ``position``, ``replaced_by``, ``text``, ``extra``, ``created_at``, ``turn_start``).

    The request path (``SessionArchive.record``) hands over what it already holds - what its one
    pass read of each message of the list it gave the engine (role, content, a result's call id,
    the messages that are not plain: ``HistoryScan``), the removed positions, their references -
    and the per-message work (the text, the extra keys, the tool name of a result) runs where
    the batch is first read: the SQLite store's writer thread, the in-memory store's first read.

    Nothing is lost to a host that reuses its dicts or its list: each message's role and
    ``content`` are snapshotted at the compaction (a string is immutable; rewriting
    ``message["content"]`` later does not reach the archive), and the messages that are not
    plain are held by position. Nested structures (a content list, ``tool_calls``) are shared
    with the host, as a shallow copy would share them.
    """

    __slots__ = ("_odd", "_contents", "_roles", "_call_ids", "_positions", "_refs", "_turns", "_targets",
                 "_starts", "_first_seq", "created_at", "_columns", "_built", "_lock", "_redactor")

    def __init__(
        self, *, odd: Mapping[int, dict[str, Any]], contents: Mapping[int, Any], roles: list[Any],
        call_ids: Mapping[int, Any], positions: list[int], refs: list[str], turns: list[int],
        targets: list[int], starts: list[int], first_seq: int, created_at: float,
        redactor: Redactor | None = None,
    ) -> None:
        # Of every message of the context, by position (``HistoryScan``): its content, its
        # role, a tool result's call id, and the message itself when it is not plain.
        self._odd = odd
        self._contents = contents
        self._roles = roles
        self._call_ids = call_ids
        self._positions = positions
        self._refs = refs
        self._turns = turns
        self._targets = targets
        self._starts = starts
        self._first_seq = first_seq
        #: When the compaction archived these entries (one time for the batch).
        self.created_at = created_at
        self._columns: dict[str, Sequence[Any]] | None = None
        self._built: list[dict[str, Any]] | None = None
        self._lock = threading.Lock()
        #: Redacts every text and extra when the batch is built (``None``: kept verbatim).
        self._redactor = redactor

    @property
    def refs(self) -> list[str]:
        """The references, in order (no record is built to read them)."""
        return self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def columns(self) -> dict[str, Sequence[Any]]:
        """The entries column by column (``BATCH_COLUMNS``: one sequence each, in entry order;
        ``text`` the original text, ``extra`` a mapping or None): built once, then cached. An
        ``extra`` may be the host's message itself (when it holds what the extra would): a
        store serialises it or copies it, and never keeps or changes it."""
        built = self._columns
        if built is not None:
            return built
        with self._lock:
            if self._columns is None:
                self._columns = self._build()
                # What the columns hold is all that is needed now: let the host's messages go.
                self._odd, self._contents, self._roles, self._call_ids = {}, {}, [], {}
            return self._columns

    def records(self) -> list[dict[str, Any]]:
        """The record dicts (built once, then cached)."""
        built = self._built
        if built is not None:
            return built
        columns = self.columns()
        with self._lock:
            if self._built is None:
                n = len(self._refs)
                keys = (*BATCH_COLUMNS, "created_at")
                built = [
                    dict(zip(keys, row)) for row in
                    zip(*(columns[k] for k in BATCH_COLUMNS), itertools.repeat(self.created_at, n))
                ]
                for record in built:
                    if record["extra"] is not None:  # may be the host's message: a record owns its own
                        record["extra"] = dict(record["extra"])
                self._built = built
            return self._built

    def _build(self) -> dict[str, Sequence[Any]]:
        # Most archived messages are plain: a role, a string content and, for a tool result, its
        # call id. Their text is the content and they have no extra, so their columns come from
        # what the request path read, in C (``map``); only the others (tool calls, content
        # parts, other keys: ``HistoryScan.odd``) go through ``message_text`` and ``_extra_of``
        # one by one.
        held = self._odd
        positions = self._positions
        n = len(positions)
        texts = list(map(self._contents.__getitem__, positions))
        roles = list(map(self._roles.__getitem__, positions))
        call_ids: list[Any] = [c if type(c) is str else "" for c in map(self._call_ids.get, positions)]
        extras: list[Any] = [None] * n
        tools: list[Any] = [""] * n
        odd = list(itertools.compress(range(n), map(held.__contains__, positions)))
        names: dict[str, str] = {}
        lines_at: dict[int, str] = {}
        if any(call_ids) or odd:
            # One visit of every assistant message's calls: the names of the results and the
            # text of the removed assistant messages (``message_text``'s lines).
            names, lines_at = _tool_names(held, self._roles, map(positions.__getitem__, odd))
        if names:
            tools = list(map(names.get, call_ids, itertools.repeat("")))
        for i in odd:
            message = held[positions[i]]
            content = texts[i]
            if message.get("content") is not content:
                message = {**message, "content": content}
            role = roles[i] or ""
            call_id = message.get("tool_call_id") or ""
            tool = message.get("name") or ""
            if role == "tool" and not tool and call_id:
                tool = names.get(call_id, "")
            roles[i], call_ids[i], tools[i] = str(role), str(call_id), str(tool)
            lines = lines_at.get(positions[i])
            if lines is not None and type(content) is str:
                texts[i] = content + "\n" + lines if content else lines
            else:
                texts[i] = message_text(message)
            if ("tool_calls" in message or type(content) is not str) and "content" in message:
                # Its extra holds every key of it (``_extra_of``): the message itself stands
                # in, serialised by the store or copied into a record, never a dict more here.
                extras[i] = message
            else:
                extras[i] = _extra_of(message)
        if self._redactor is not None:
            texts, extras = self._redacted(texts, extras)
        starts = set(self._starts)
        return {
            "ref": self._refs, "seq": range(self._first_seq, self._first_seq + n), "role": roles, "tool": tools,
            "call_id": call_ids, "turn": self._turns, "position": positions, "replaced_by": self._targets,
            "turn_start": list(map(starts.__contains__, positions)), "text": texts, "extra": extras,
        }

    def _redacted(self, texts: list[Any], extras: list[Any]) -> tuple[list[Any], list[Any]]:
        """``texts`` and ``extras`` with every secret replaced by its placeholder (an extra is
        copied where something changed: the host's message is never touched)."""
        redactor = self._redactor
        assert redactor is not None
        before = sum(redactor.counts().values())
        texts = [redactor.redact(t) if type(t) is str else t for t in texts]
        extras = [redact_data(e, redactor) if e is not None else None for e in extras]
        masked = sum(redactor.counts().values()) - before
        if masked:
            log.info("archive_secrets_masked", masked=masked, entries=len(texts))
        return texts, extras

    def __getitem__(self, index: Any) -> Any:
        return self.records()[index]

    def __iter__(self) -> Any:
        return iter(self.records())
