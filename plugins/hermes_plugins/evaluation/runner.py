"""One engine at one window over one transcript: compress as a host would, then score the probes.

The engine runs through ``Session.open(..., persist=False)`` and a forced ``Session.compress`` -
the path a host's ``/compress`` takes. A probe is **kept** when its key is in the compacted
context (message texts, tool-call arguments, and the string values of JSON tool results, with
whitespace collapsed and secrets redacted: the keys are redacted too, so a masked secret is
kept), **recoverable** when a search of the session's archive finds it and the redacted text of
a hit contains it (what ``context_search`` then ``context_expand`` give the model; 0 while
nothing is archived), else **lost**.

Cost (issue 29): the context is redacted once and indexed once (``index.ContextIndex``); each
archived text is redacted once however many probes search it. The run also counts the
result's tokens (``fit.count_fit``: a run that does not fit has failed) and the error items the
summary states without evidence (``invented.invented_failures``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.logging import get_logger
from hermes_core.messages import content_text
from hermes_core.pairing import pairing_problems
from hermes_core.redaction import MASK, redact
from hermes_core.tokens import estimate_messages_tokens
from hermes_plugins.evaluation.evidence import is_person_request
from hermes_plugins.evaluation.fit import count_fit
from hermes_plugins.evaluation.index import ContextIndex
from hermes_plugins.evaluation.invented import invented_failures
from hermes_plugins.evaluation.probes import CATEGORIES, Probe, derive_probes, one_line

log = get_logger(__name__)

LOSSES_SHOWN = 5
SEARCH_LIMIT = 5


def _signature(message: Mapping[str, Any]) -> tuple[Any, ...]:
    calls = message.get("tool_calls") or ()
    call_sig = tuple(
        json.dumps(call.get("function"), sort_keys=True, default=str) if isinstance(call, Mapping) else str(call)
        for call in calls
    )
    return (message.get("role"), content_text(message.get("content")), call_sig, message.get("tool_call_id"))


def condensed_indices(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> set[int]:
    """Indices of input messages that do not come out unchanged (summarised, demoted, dropped)."""
    return compare(before, after)[0]


def new_messages(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Output messages that are not an input message unchanged (summaries, demoted forms)."""
    return compare(before, after)[1]


def compare(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> tuple[set[int], list[Mapping[str, Any]]]:
    """(``condensed_indices``, ``new_messages``), each message's signature taken once."""
    before_sigs = [_signature(m) for m in before]
    after_sigs = [_signature(m) for m in after]
    left = Counter(after_sigs)
    condensed: set[int] = set()
    for index in range(len(before) - 1, -1, -1):  # newest first: the kept tail matches itself
        sig = before_sigs[index]
        if left[sig] > 0:
            left[sig] -= 1
        else:
            condensed.add(index)
    left = Counter(before_sigs)
    made: list[Mapping[str, Any]] = []
    for message, sig in zip(after, after_sigs):
        if left[sig] > 0:
            left[sig] -= 1
        else:
            made.append(message)
    return condensed, made


def _strings(value: Any, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, into)
    elif isinstance(value, list):
        for item in value:
            _strings(item, into)


def context_text(messages: Sequence[Mapping[str, Any]], *, redacted: bool = False) -> str:
    """Everything the model reads in ``messages``, whitespace collapsed (JSON results decoded);
    with ``redacted``, each piece redacted (once) as the probes' keys are."""
    parts: list[str] = []
    for message in messages:
        text = content_text(message.get("content"))
        parts.append(text)
        if message.get("role") == "tool" and text.lstrip().startswith(("{", "[")):
            try:
                _strings(json.JSONDecoder().raw_decode(text.lstrip())[0], parts)
            except ValueError:
                pass
        for call in message.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                arguments = fn.get("arguments")
                parts.append(str(fn.get("name") or ""))
                if isinstance(arguments, str):
                    parts.append(arguments)
                    try:
                        _strings(json.loads(arguments), parts)
                    except ValueError:
                        pass
                else:
                    _strings(arguments, parts)
    if redacted:
        parts = [redact(part) for part in parts]
    return one_line("\n".join(parts))


@attrs.define
class Recall:
    """Probes found again through the session's archive (what the recall tools give the model).

    A probe is looked for first in the archived original of the very message it came from (the
    archive keeps originals: ``context_expand`` of that reference gives it, redacted), then
    through the archive's search, as ``context_search`` runs it. Each archived text is redacted
    once, however many probes read it: the tools redacted every hit of every search again
    (most of the old eval's time), and a search per probe cost more than the whole compression.
    """

    session: Any
    available: bool = True
    _texts: dict[str, str] = attrs.field(factory=dict)
    _refs_of: dict[str, list[str]] | None = None
    _rows: dict[str, Mapping[str, Any]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        # Recoverable means the model can get it back: a plugin must answer the recall tools
        # (one call tells), and the archive must hold something.
        try:
            self.session.handle_tool_call("context_search", {"query": "hermes-eval", "limit": 1})
            archive = self.session.archive
            self.available = bool(archive.enabled and archive.has_entries())
        except KeyError:
            self.available = False
        except Exception:  # noqa: BLE001 - no archive: nothing is recoverable, the scores stand
            self.available = False

    def _text(self, hit: Mapping[str, Any]) -> str:
        ref = str(hit.get("ref") or "")
        text = self._texts.get(ref)
        if text is None:
            text = self._texts[ref] = one_line(redact(str(hit.get("text") or "")))
        return text

    def _originals(self, source: str) -> list[Mapping[str, Any]]:
        """The archived entries whose original text is ``source``."""
        if self._refs_of is None:
            self._refs_of = {}
            archive = self.session.archive
            try:
                refs = sorted(archive.store.archive_refs(archive.session_id))
                for ref in refs:
                    row = archive.get(ref)
                    self._rows[ref] = row
                    self._refs_of.setdefault(str(row.get("text") or ""), []).append(ref)
            except Exception:  # noqa: BLE001 - a store without a listing: the search alone decides
                self._refs_of = {}
        return [self._rows[ref] for ref in self._refs_of.get(source, ())]

    def finds(self, key: str, source: str = "") -> bool:
        if not self.available:
            return False
        if source and any(key in self._text(row) for row in self._originals(source)):
            return True
        # The archive holds originals: a masked part of the key is not searched for.
        query = " ".join(key.replace(MASK, " ").split())
        try:
            hits = self.session.archive.search(query, limit=SEARCH_LIMIT)
        except Exception:  # noqa: BLE001 - an unsearchable key (no letters) is simply not found
            return False
        return any(key in self._text(hit) for hit in hits if isinstance(hit, Mapping))


def _rank(probe: Probe) -> tuple[int, int]:
    return CATEGORIES.index(probe.category), -probe.index


def evaluate(
    messages: list[dict[str, Any]],
    *,
    engine: str,
    context_length: int,
    config: Any,
    host: Any,
    model: str = "",
    home: Any = None,
) -> dict[str, Any]:
    """Compress ``messages`` with ``engine`` at ``context_length`` and score the probes."""
    from hermes_core.session import Session

    config = attrs.evolve(config, context=attrs.evolve(config.context, engine=engine))
    session = Session.open(config=config, host=host, persist=False, context_length=context_length,
                           model=model, home=home)
    try:
        started = time.perf_counter()
        result = session.compress(list(messages), force=True)
        elapsed_ms = (time.perf_counter() - started) * 1000
        after = list(result.messages)
        limit = int(getattr(session.engine, "threshold_tokens", 0) or 0) or context_length
        condensed, made = compare(messages, after)
        probes = derive_probes(messages, condensed)
        haystack = context_text(after, redacted=True)
        index = ContextIndex(haystack)
        recall = Recall(session)
        verdicts: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
        lost: list[Probe] = []
        for probe in probes:
            if probe.key in index:
                verdict = "kept"
            elif recall.finds(probe.key, content_text(messages[probe.index].get("content"))):
                verdict = "recoverable"
            else:
                verdict = "lost"
                lost.append(probe)
            verdicts[probe.category][verdict] += 1
    finally:
        session.close()
    last_request = next((m for m in reversed(messages) if is_person_request(m)), None)
    before_tokens = estimate_messages_tokens(messages)
    after_tokens = estimate_messages_tokens(after)
    fit = count_fit(after, model, limit)
    invented = invented_failures(messages, made)
    problems = pairing_problems(after, allow_pending=True)
    lost.sort(key=_rank)
    failures = []
    if not fit["fits"]:
        failures.append(f"does not fit: {fit['tokens']:,} tokens counted ({fit['method']}) > {limit:,}")
    if problems:
        failures.append(f"invalid output: {len(problems)} pairing problem(s)")
    if invented:
        failures.append(f"{len(invented)} invented failure(s)")
    return {
        "engine": engine,
        "context_length": context_length,
        "status": getattr(result.feedback, "status", None) or ("compressed" if after_tokens < before_tokens else "unchanged"),
        "tokens_before": before_tokens,
        "tokens_after": after_tokens,
        "tokens_counted": fit["tokens"],
        "count_method": fit["method"],
        "fit_limit": limit,
        "fits": fit["fits"],
        "savings": round(1 - after_tokens / before_tokens, 4) if before_tokens else 0.0,
        "elapsed_ms": round(elapsed_ms, 1),
        "valid": not problems,
        "problems": problems[:5],
        "invented_failures": len(invented),
        "invented": invented[:LOSSES_SHOWN],
        "failed": failures,
        "last_request_verbatim": last_request is None
        or one_line(redact(content_text(last_request.get("content")))) in index,
        "condensed_messages": len(condensed),
        "recall_available": recall.available,
        "probes": {
            category: {
                "total": sum(verdicts[category].values()),
                "kept": verdicts[category]["kept"],
                "recoverable": verdicts[category]["recoverable"],
                "lost": verdicts[category]["lost"],
            }
            for category in CATEGORIES
        },
        "losses": [
            {"category": p.category, "probe": p.key, "message": p.index} for p in lost[:LOSSES_SHOWN]
        ],
        # For --judge; the command drops them before printing.
        "_after": after,
        "_probes": probes,
    }


def share(counts: Mapping[str, int], verdict: str) -> float | None:
    """``verdict``'s share of a category's probes, or ``None`` without probes."""
    total = counts.get("total") or 0
    return None if not total else counts.get(verdict, 0) / total
