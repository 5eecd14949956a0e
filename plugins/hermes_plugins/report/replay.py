"""Replay a transcript as a host would have lived it: request by request, compacting where the
engine's threshold is crossed, so the report can show each compaction where it fired.

The engine runs through ``Session.open(..., persist=False)`` (the path ``eval`` takes); each
compaction is the session's ``compress`` with what the context held at that request. The
context size is the core's estimate (``estimate_messages_tokens``), the figure the engine's
preflight compares with its threshold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from hermes_core.plugin import estimate_message_tokens, estimate_messages_tokens
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.replay_requests import request_ends
from hermes_plugins.report.data import compaction_detail

#: After a compaction that freed nothing, the next try waits until the context has grown by
#: this share of the window (a host's engine backs off too; trying at every request would
#: make a long session's report quadratic).
RETRY_GROWTH = 0.05


def replay_session(
    messages: Sequence[Mapping[str, Any]],
    *,
    engine: str,
    context_length: int,
    config: Any,
    host: Any,
    model: str = "",
    home: Any = None,
) -> dict[str, Any]:
    """``{"engine", "window", "threshold", "context": [{"message", "tokens"}], "compactions",
    "tool_results"}``.

    ``context`` holds the context size after each request (and after each compaction, at the
    same message); ``compactions`` one ``compaction_detail`` each, in order, with ``spilled`` and
    ``limited``: the tool results the pipeline spilled to files or held to the output limits
    since the previous compaction (``report.spills``); ``tool_results`` the totals."""
    into: dict[str, Any] = {}
    for _request in lived_requests(messages, engine=engine, context_length=context_length, config=config,
                                   host=host, model=model, home=home, into=into):
        pass
    return into


def lived_requests(
    messages: Sequence[Mapping[str, Any]],
    *,
    engine: str,
    context_length: int,
    config: Any,
    host: Any,
    into: dict[str, Any],
    model: str = "",
    home: Any = None,
) -> Iterator[list[dict[str, Any]]]:
    """The messages of each request the replayed session sends (compacted where it fired), in
    order; when exhausted, ``into`` holds what ``replay_session`` returns. A message object
    stays the same object from request to request until a compaction replaces it (the cache
    simulator compares by identity)."""
    from hermes_core import Session
    from hermes_plugins.report.spills import ReplaySpills

    config = attrs.evolve(config, context=attrs.evolve(config.context, engine=engine))
    session = Session.open(config=config, host=host, persist=False, context_length=context_length,
                           model=model, home=home)
    try:
        # Tool results reach the context the way the pipeline lets them (spill files in a
        # temporary folder, never the user's home).
        spills = ReplaySpills(messages, config=config, host=host, context_length=context_length, model=model)
    except BaseException:
        session.close()
        raise
    since = (0, 0)  # spilled, limited at the previous compaction
    points: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    listed: set[str] = set()  # archive references named by an earlier compaction
    threshold = context_length
    archived: dict[str, list[str]] = {}  # original text -> references, read once per reference
    try:
        threshold = int(getattr(session.engine, "threshold_tokens", 0) or 0) or context_length
        ends = request_ends(messages)
        ends += [] if ends and ends[-1] == len(messages) else [len(messages)]
        context: list[dict[str, Any]] = []
        total = 0
        start = 0
        retry_at = 0
        for end in ends:
            if end <= start:
                continue
            fresh = spills.process(start, [dict(m) for m in messages[start:end]])
            context.extend(fresh)
            total += sum(estimate_message_tokens(m) for m in fresh)
            start = end
            points.append({"message": end - 1, "tokens": total})
            if total >= max(threshold, retry_at):
                after, detail = _compacted(session, context, end - 1, archived)
                if detail["after"]["tokens"] >= detail["before"]["tokens"]:
                    # Nothing came out smaller: no compaction happened here.
                    retry_at = total + max(1, int(context_length * RETRY_GROWTH))
                else:
                    # A summary carries the references of the summaries before it: name only the new ones.
                    detail["archive_refs"] = [r for r in detail["archive_refs"] if r not in listed]
                    detail["spilled"] = spills.spilled - since[0]
                    detail["limited"] = spills.limited - since[1]
                    since = (spills.spilled, spills.limited)
                    listed.update(detail["archive_refs"])
                    compactions.append(detail)
                    context = after
                    total = estimate_messages_tokens(context)
                    points.append({"message": end - 1, "tokens": total})
            yield list(context)
    finally:
        try:
            session.close()
        finally:
            spills.close()
        into.update({"engine": engine, "window": context_length, "threshold": threshold,
                     "context": points, "compactions": compactions,
                     "tool_results": {"spilled": spills.spilled, "limited": spills.limited,
                                      "after_last_compaction": {"spilled": spills.spilled - since[0],
                                                                "limited": spills.limited - since[1]},
                                      "warnings": spills.warnings}})


def _compacted(session: Any, context: list[dict[str, Any]], message: int,
               archived: dict[str, list[str]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A forced compaction of ``context`` at ``message``: ``(messages after, its detail)``."""
    result = session.compress(list(context), force=True)
    after = list(result.messages)
    typed = session.engine.compression_report()
    report = dict(typed.details) if typed is not None else {"status": "compressed"}
    _read_archive(session, archived)
    return after, compaction_detail(context, after, report, message=message, archived=archived)


def _read_archive(session: Any, into: dict[str, list[str]]) -> None:
    """Add the references archived since the last call to ``into`` (text -> references)."""
    archive = archive_of(session)
    if archive is None:
        return
    try:
        archive.flush()
        store, session_id = archive.store, archive.session_id
        known = {ref for refs in into.values() for ref in refs}
        for ref in sorted(set(store.archive_refs(session_id)) - known):
            row = store.archive_get(session_id, ref) or {}
            into.setdefault(str(row.get("text") or ""), []).append(ref)
    except Exception:  # noqa: BLE001 - no archive to read: the rows name no reference
        return
