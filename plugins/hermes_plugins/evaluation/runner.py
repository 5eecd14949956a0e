"""One engine at one window over one transcript: compress as a host would, then score the probes.

The engine runs through ``Session.open(..., persist=False)`` and a forced ``Session.compress`` -
the path a host's ``/compress`` takes. A probe is **kept** when its key is in the compacted
context (message texts, tool-call arguments, and the string values of JSON tool results, with
whitespace collapsed and secrets redacted: the keys are redacted too, so a masked secret is
kept), **recoverable** when the recall tools are offered and an archived original holds it once
redacted (what ``context_expand`` gives the model; 0 while nothing is archived or no plugin
offers the tools; see ``Recall``), else **lost**.

Cost (issue 29): the context is redacted once and indexed once (``index.ContextIndex``); the
archive is read once and each archived text redacted at most once, however many probes read
it. The run also counts the result's tokens (``fit.count_fit``: a run that does not fit has
failed) and the error items the summary states without evidence
(``invented.invented_failures``).
"""

from __future__ import annotations

import bisect
import json
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.plugin import (
    MASK,
    bounded,
    content_text,
    estimate_messages_tokens,
    get_logger,
    match_results,
    pairing_problems,
    plain_masks,
    redact,
)
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.archive.search import message_text
from hermes_plugins.evaluation.evidence import is_person_request
from hermes_plugins.evaluation.fit import count_fit
from hermes_plugins.evaluation.index import ContextIndex
from hermes_plugins.evaluation.invented import invented_failures
from hermes_plugins.evaluation.probes import CATEGORIES, Probe, derive_probes, one_line

log = get_logger(__name__)

LOSSES_SHOWN = 5
#: Probes listed one by one per run (``probe_detail``), lost first, then recoverable, then
#: kept; the rest is counted (``probe_detail_not_shown``); every probe is in ``probes``.
PROBE_ROWS = 300
#: Characters of a probe's source message quoted in its row (the rest is counted).
SOURCE_CHARS = 200
VERDICT_ORDER = {"lost": 0, "recoverable": 1, "kept": 2}
SEARCH_LIMIT = 5


def _call_signature(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, Mapping) else None
    if isinstance(fn, Mapping) and len(fn) <= 2 and isinstance(fn.get("arguments", ""), str):
        return (fn.get("name"), fn.get("arguments"))  # the usual call: no JSON dump needed
    return json.dumps(fn if fn is not None else call, sort_keys=True, default=str)


def _signature(message: Mapping[str, Any]) -> tuple[Any, ...]:
    calls = message.get("tool_calls") or ()
    call_sig = tuple(_call_signature(call) for call in calls)
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
    # An explicit stack: a model's arguments may nest deeper than the interpreter recurses.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            into.append(item)
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def context_text(messages: Sequence[Mapping[str, Any]], *, redacted: bool = False) -> str:
    """Everything the model reads in ``messages``, whitespace collapsed (JSON results decoded);
    with ``redacted``, each piece redacted (once) as the probes' keys are."""
    parts: list[str] = []
    for message in messages:
        text = content_text(message.get("content"))
        parts.append(text)
        if message.get("role") == "tool" and text.lstrip().startswith(("{", "[")):
            try:
                head = text.lstrip()
                if bounded.json_depth(head) <= bounded.MAX_DEPTH:  # raw_decode recurses per level
                    _strings(json.JSONDecoder().raw_decode(head)[0], parts)
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
                        _strings(bounded.loads(arguments), parts)
                    except ValueError:  # invalid, or too deep (bounded.TooDeepError)
                        pass
                else:
                    _strings(arguments, parts)
    if redacted:
        parts = [redact(part) for part in parts]
    return one_line("\n".join(parts))


@attrs.define
class Recall:
    """Probes the model can get back through the recall tools (``context_search`` and
    ``context_expand``).

    When the session's archive backs the tools (they are among the session's assembled tools),
    the archived originals are read once and a probe is recoverable when one of them holds the
    key once redacted, as ``context_expand`` gives it: first the original of the message the
    probe came from, then the others (one scan of all the raw texts for the key's longest
    unmasked piece; only an original that holds every piece is redacted and checked). Each
    original is redacted at most once, however many probes read it: the tools redacted every
    hit of every search again (most of the old eval's time), and a search per probe cost more
    than the whole compression.

    When another plugin answers the tools, they are called: a search per probe, and the text
    of each reference expanded once.
    """

    session: Any
    available: bool = True
    _rows: list[str] = attrs.field(factory=list)
    _flat: list[str] = attrs.field(factory=list)
    _joined: str = ""
    _starts: list[int] = attrs.field(factory=list)
    _by_text: dict[str, list[int]] = attrs.field(factory=dict)
    _redacted: dict[int, str] = attrs.field(factory=dict)
    _decoded: dict[int, str] = attrs.field(factory=dict)
    #: text -> its redacted form, shared with the probes (a request is redacted once)
    known: dict[str, str] = attrs.field(factory=dict)
    _expanded: dict[str, str] = attrs.field(factory=dict)
    _tools_only: bool = False

    def __attrs_post_init__(self) -> None:
        try:
            offered = {
                (tool.get("function") or {}).get("name")
                for tool in self.session.assemble_tools([]) if isinstance(tool, Mapping)
            }
            archive = archive_of(self.session)
            if archive is not None and "context_search" in offered and "context_expand" in offered:
                store, session_id = archive.store, archive.session_id
                archive.flush()
                for ref in sorted(store.archive_refs(session_id)):
                    row = store.archive_get(session_id, ref) or {}
                    text = str(row.get("text") or "")
                    self._by_text.setdefault(text, []).append(len(self._rows))
                    self._rows.append(text)
                # One line per original (whitespace collapsed, as the keys are), all in one
                # string: a key's candidates are found by one scan at C speed.
                self._flat = [one_line(text) for text in self._rows]
                at = 0
                for flat in self._flat:
                    self._starts.append(at)
                    at += len(flat) + 1
                self._joined = "\n".join(self._flat)
        except Exception:  # noqa: BLE001 - no archive to read: the tools may still answer
            self._rows = []
        if self._rows:
            return
        self._tools_only = True
        try:
            self.session.handle_tool_call("context_search", {"query": "hermes-eval", "limit": 1})
        except KeyError:  # nobody answers: nothing is recoverable
            self.available = False

    def _text(self, row: int) -> str:
        text = self._redacted.get(row)
        if text is None:
            raw = self._rows[row]
            known = self.known.get(raw)
            # The archive stores text masked with its session's keyed placeholders; keys hold
            # the plain mask (``redact``): compared with the placeholders written plain.
            text = self._redacted[row] = one_line(known if known is not None else plain_masks(redact(raw)))
        return text

    def _holds(self, row: int, pieces: list[str], key: str, *, decode: bool = False) -> bool:
        # A raw original that lacks a piece of the key between masks cannot hold the key once
        # redacted: only the others are redacted (once) and checked.
        flat = self._flat[row]
        if all(piece in flat for piece in pieces) and key in self._text(row):
            return True
        if not decode:
            return False
        # JSON read as the model reads it (its string values decoded), as the compacted context
        # is: an error line quoted in a JSON output, a command in a call's arguments.
        decoded = self._decoded.get(row)
        if decoded is None:
            decoded = self._decoded[row] = _decoded_text(self._rows[row])
        return bool(decoded) and key in decoded

    def finds(self, key: str, *sources: str) -> bool:
        """Whether ``key`` can be recovered; ``sources``: the texts of the messages it came from
        (their originals are looked at first)."""
        if not self.available:
            return False
        if self._tools_only:
            return self._through_tools(key)
        pieces = _unmasked_pieces(key)
        own = [row for source in sources for row in self._by_text.get(source, ())]
        if any(self._holds(row, pieces, key, decode=True) for row in own):
            return True
        if not pieces:
            return False
        needle = max(pieces, key=len)
        joined, starts = self._joined, self._starts
        at = joined.find(needle)
        while at != -1:
            row = bisect.bisect_right(starts, at) - 1
            if row not in own and self._holds(row, pieces, key):
                return True
            if row + 1 >= len(starts):
                break
            at = joined.find(needle, starts[row + 1])
        return False

    def _through_tools(self, key: str) -> bool:
        try:
            raw = self.session.handle_tool_call("context_search", {"query": key, "limit": SEARCH_LIMIT})
            hits = (json.loads(raw) if isinstance(raw, str) else raw or {}).get("hits") or []
        except KeyError:
            self.available = False
            return False
        except (ValueError, AttributeError):
            return False
        for hit in hits:
            ref = hit.get("ref") if isinstance(hit, Mapping) else None
            if not ref:
                continue
            text = self._expanded.get(ref)
            if text is None:
                try:
                    expanded = self.session.handle_tool_call("context_expand", {"ref": ref})
                    data = json.loads(expanded) if isinstance(expanded, str) else expanded or {}
                except (KeyError, ValueError):
                    continue
                body = str(data.get("text") or "") if isinstance(data, Mapping) else ""
                text = self._expanded[ref] = one_line(plain_masks(redact(body)))
            if key in text:
                return True
        return False


_CALL_LINE = re.compile(r"(?m)^\[tool call [^\]\n]*\] (.*)$")


def _decoded_text(text: str) -> str:
    """The string values of the JSON in an archived text (a JSON result, or the arguments of
    the ``[tool call NAME] {...}`` lines of an assistant's), redacted, whitespace collapsed;
    ``""`` when it holds none."""
    parts: list[str] = []
    if text.lstrip().startswith(("{", "[")):
        try:
            _strings(json.JSONDecoder().raw_decode(text.lstrip())[0], parts)
        except ValueError:
            pass
    elif "[tool call " in text:
        for found in _CALL_LINE.finditer(text):
            try:
                _strings(bounded.loads(found.group(1)), parts)
            except ValueError:
                continue
    return one_line(redact("\n".join(parts))) if parts else ""


def _unmasked_pieces(key: str) -> list[str]:
    """The parts of ``key`` between masks, without a mask the key's clipping cut short
    (``... AKIA[RED``): what the raw original holds as written."""
    for size in range(len(MASK) - 1, 0, -1):
        if key.endswith(MASK[:size]):
            key = key[:-size]
            break
    return [piece.strip() for piece in key.split(MASK) if piece.strip()]


def _origins(index: int, answers: Mapping[int, tuple[int, int]]) -> tuple[int, ...]:
    """The message a probe came from, and for a tool result the assistant message whose call
    it answers (a failed command's text is the call's)."""
    return (index, answers[index][0]) if index in answers else (index,)


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
    from hermes_core import Session

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
        answers = match_results(messages)[0]
        redacted_texts: dict[str, str] = {}
        probes = derive_probes(messages, condensed, redacted=redacted_texts)
        haystack = context_text(after, redacted=True)
        index = ContextIndex(haystack)
        recall = Recall(session, known=redacted_texts)
        verdicts, lost, judged = _judge(probes, messages, answers, index, recall)
        detail = probe_rows(messages, judged, archived_refs(session))
    finally:
        session.close()
    last_request = next((m for m in reversed(messages) if is_person_request(m)), None)
    before_tokens = estimate_messages_tokens(messages)
    after_tokens = estimate_messages_tokens(after)
    fit = count_fit(after, model, limit)
    invented = invented_failures(messages, made)
    problems = pairing_problems(after, allow_pending=True)
    lost.sort(key=_rank)
    failures = _failures(fit, limit, problems, invented)
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
        "probe_detail": detail[:PROBE_ROWS],
        "probe_detail_not_shown": max(0, len(detail) - PROBE_ROWS),
        # For --judge; the command drops them before printing.
        "_after": after,
        "_probes": probes,
    }


def _judge(probes: list[Probe], messages: list[dict[str, Any]], answers: Any, index: ContextIndex,
           recall: Recall) -> tuple[dict[str, Counter[str]], list[Probe], list[tuple[Probe, str, list[str]]]]:
    """Each probe kept (in the context), recoverable (through recall) or lost: ``(counts per
    category, the lost probes, (probe, verdict, its origin texts) for every probe)``."""
    verdicts: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    lost: list[Probe] = []
    judged: list[tuple[Probe, str, list[str]]] = []
    for probe in probes:
        texts = [message_text(messages[i]) for i in _origins(probe.index, answers)]
        if probe.key in index:
            verdict = "kept"
        elif recall.finds(probe.key, *texts):
            verdict = "recoverable"
        else:
            verdict = "lost"
            lost.append(probe)
        verdicts[probe.category][verdict] += 1
        judged.append((probe, verdict, texts))
    return verdicts, lost, judged


def _failures(fit: dict[str, Any], limit: int, problems: list[Any], invented: list[Any]) -> list[str]:
    """Why a run failed, one line each (empty: it did not)."""
    failures = []
    if not fit["fits"]:
        failures.append(f"does not fit: {fit['tokens']:,} tokens counted ({fit['method']}) > {limit:,}")
    if problems:
        failures.append(f"invalid output: {len(problems)} pairing problem(s)")
    if invented:
        failures.append(f"{len(invented)} invented failure(s)")
    return failures


def archived_refs(session: Any) -> dict[str, list[str]]:
    """Archived original text -> its references (sorted), from ``session``'s archive."""
    out: dict[str, list[str]] = {}
    archive = archive_of(session)
    if archive is None:
        return out
    try:
        archive.flush()
        store, session_id = archive.store, archive.session_id
        for ref in sorted(store.archive_refs(session_id)):
            row = store.archive_get(session_id, ref) or {}
            out.setdefault(str(row.get("text") or ""), []).append(ref)
    except Exception:  # noqa: BLE001 - no archive to read: no reference to name (verdicts stand)
        return {}
    return out


def probe_rows(messages: Sequence[Mapping[str, Any]], judged: Sequence[tuple[Probe, str, list[str]]],
               refs_of: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """One row per probe, lost first: ``{kind, probe, verdict, message, role, source,
    archive_ref}``. ``source`` quotes the message the probe came from (its first
    ``SOURCE_CHARS`` characters, the rest counted); ``archive_ref`` is the reference of that
    message's archived original (or of the call it answers), ``None`` when none was archived."""
    rows: list[dict[str, Any]] = []
    for probe, verdict, texts in judged:
        # redacted before its lines are joined: a ``name: value`` line is a pair only on its own line
        source = one_line(redact(texts[0])) if texts else ""
        if len(source) > SOURCE_CHARS:
            source = f"{source[:SOURCE_CHARS]}… [{len(source) - SOURCE_CHARS:,} more characters]"
        ref = next((refs_of[t][0] for t in texts if refs_of.get(t)), None)
        rows.append({"kind": probe.category, "probe": probe.key, "verdict": verdict, "message": probe.index,
                     "role": str(messages[probe.index].get("role") or "?"), "source": source, "archive_ref": ref})
    rows.sort(key=lambda r: (VERDICT_ORDER[r["verdict"]], CATEGORIES.index(r["kind"]), r["message"]))
    return rows


def share(counts: Mapping[str, int], verdict: str) -> float | None:
    """``verdict``'s share of a category's probes, or ``None`` without probes."""
    total = counts.get("total") or 0
    return None if not total else counts.get(verdict, 0) / total
