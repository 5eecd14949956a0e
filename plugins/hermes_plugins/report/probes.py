"""Each probe of one eval run, with its verdict, the message it came from and the archive
reference that recovers it (``eval``'s JSON holds only the counts and five losses).

The run is ``eval``'s (``evaluation.runner``): a forced ``Session.compress`` and the same
checks in the same order - kept when the key is in the redacted context
(``ContextIndex``), recoverable when ``Recall.finds`` finds it in the archive, else lost - so
the counts per kind equal the run's ``probes`` (the tests compare them). The reference named
is the archived original of the message the probe came from (or of the call it answers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

#: Probe rows listed per run, lost first, then recoverable, then kept (the rest is counted).
PROBE_ROWS = 300
ORDER = {"lost": 0, "recoverable": 1, "kept": 2}


def probe_details(
    messages: Sequence[dict[str, Any]],
    *,
    engine: str,
    context_length: int,
    config: Any,
    host: Any,
    model: str = "",
    home: Any = None,
) -> dict[str, Any]:
    """``{"engine", "context_length", "counts": {kind: {kept, recoverable, lost}}, "rows": [...],
    "not_shown"}``; a row is ``{kind, probe, verdict, message, archive_ref}``."""
    from hermes_core.archive import message_text
    from hermes_core.pairing import match_results
    from hermes_core.session import Session
    from hermes_plugins.evaluation.index import ContextIndex
    from hermes_plugins.evaluation.probes import CATEGORIES, derive_probes
    from hermes_plugins.evaluation.runner import Recall, compare, context_text

    messages = list(messages)
    config = attrs.evolve(config, context=attrs.evolve(config.context, engine=engine))
    session = Session.open(config=config, host=host, persist=False, context_length=context_length,
                           model=model, home=home)
    rows: list[dict[str, Any]] = []
    counts: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    try:
        after = list(session.compress(list(messages), force=True).messages)
        condensed, _made = compare(messages, after)
        answers = match_results(messages)[0]
        redacted_texts: dict[str, str] = {}
        probes = derive_probes(messages, condensed, redacted=redacted_texts)
        index = ContextIndex(context_text(after, redacted=True))
        recall = Recall(session, known=redacted_texts)
        refs_of = _refs_by_text(session)
        for probe in probes:
            origins = (probe.index, answers[probe.index][0]) if probe.index in answers else (probe.index,)
            texts = [message_text(messages[i]) for i in origins]
            if probe.key in index:
                verdict = "kept"
            elif recall.finds(probe.key, *texts):
                verdict = "recoverable"
            else:
                verdict = "lost"
            counts[probe.category][verdict] += 1
            ref = next((refs_of[t][0] for t in texts if refs_of.get(t)), None)
            rows.append({"kind": probe.category, "probe": probe.key, "verdict": verdict, "message": probe.index,
                         "archive_ref": ref})
    finally:
        session.close()
    rows.sort(key=lambda r: (ORDER[r["verdict"]], CATEGORIES.index(r["kind"]), r["message"]))
    return {
        "engine": engine,
        "context_length": context_length,
        "counts": {c: {v: counts[c][v] for v in ("kept", "recoverable", "lost")} for c in CATEGORIES},
        "rows": rows[:PROBE_ROWS],
        "not_shown": max(0, len(rows) - PROBE_ROWS),
    }


def _refs_by_text(session: Any) -> dict[str, list[str]]:
    """Archived original text -> its references (sorted), from the session's archive."""
    out: dict[str, list[str]] = {}
    try:
        archive = session.archive
        archive.flush()
        store, session_id = archive.store, archive.session_id
        for ref in sorted(store.archive_refs(session_id)):
            row = store.archive_get(session_id, ref) or {}
            out.setdefault(str(row.get("text") or ""), []).append(ref)
    except Exception:  # noqa: BLE001 - no archive to read: no reference to name (verdicts stand)
        return {}
    return out
