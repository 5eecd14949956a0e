"""One engine at one window over one transcript: compress as a host would, then score the probes.

The engine runs through ``Session.open(..., persist=False)`` and a forced ``Session.compress`` -
the path a host's ``/compress`` takes. A probe is **kept** when its key is in the compacted
context (message texts, tool-call arguments, and the string values of JSON tool results, with
whitespace collapsed), **recoverable** when the session's ``context_search`` finds it and
``context_expand`` of a hit contains it (the lossless archive; 0 while no plugin answers those
tools), else **lost**.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core import bounded
from hermes_core.messages import content_text
from hermes_plugins._common.injected import is_request
from hermes_core.logging import get_logger
from hermes_core.pairing import pairing_problems
from hermes_core.tokens import estimate_messages_tokens
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
    left = Counter(_signature(m) for m in after)
    out: set[int] = set()
    for index in range(len(before) - 1, -1, -1):  # newest first: the kept tail matches itself
        sig = _signature(before[index])
        if left[sig] > 0:
            left[sig] -= 1
        else:
            out.add(index)
    return out


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


def context_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Everything the model reads in ``messages``, whitespace collapsed (JSON results decoded)."""
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
                        _strings(bounded.loads(arguments), parts)
                    except ValueError:  # invalid, or too deep (bounded.TooDeepError)
                        pass
                else:
                    _strings(arguments, parts)
    return one_line("\n".join(parts))


@attrs.define
class Recall:
    """Probes found again through the session's archive tools (when a plugin answers them)."""

    session: Any
    available: bool = True

    def __attrs_post_init__(self) -> None:
        try:
            self.session.handle_tool_call("context_search", {"query": "hermes-eval", "limit": 1})
        except KeyError:
            self.available = False

    def finds(self, key: str) -> bool:
        if not self.available:
            return False
        try:
            raw = self.session.handle_tool_call("context_search", {"query": key, "limit": SEARCH_LIMIT})
        except KeyError:
            self.available = False
            return False
        try:
            hits = (json.loads(raw) if isinstance(raw, str) else raw or {}).get("hits") or []
        except (ValueError, AttributeError):
            return False
        for hit in hits:
            ref = hit.get("ref") if isinstance(hit, Mapping) else None
            if not ref:
                continue
            try:
                expanded = self.session.handle_tool_call("context_expand", {"ref": ref})
                data = json.loads(expanded) if isinstance(expanded, str) else expanded or {}
            except (KeyError, ValueError):
                continue
            if isinstance(data, Mapping) and key in one_line(str(data.get("text") or "")):
                return True
        return False


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
        condensed = condensed_indices(messages, after)
        probes = derive_probes(messages, condensed)
        haystack = context_text(after)
        recall = Recall(session)
        verdicts: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
        lost: list[Probe] = []
        for probe in probes:
            if probe.key in haystack:
                verdict = "kept"
            elif recall.finds(probe.key):
                verdict = "recoverable"
            else:
                verdict = "lost"
                lost.append(probe)
            verdicts[probe.category][verdict] += 1
    finally:
        session.close()
    last_request = next((m for m in reversed(messages) if is_request(m)), None)
    before_tokens = estimate_messages_tokens(messages)
    after_tokens = estimate_messages_tokens(after)
    problems = pairing_problems(after, allow_pending=True)
    lost.sort(key=_rank)
    return {
        "engine": engine,
        "context_length": context_length,
        "status": getattr(result.feedback, "status", None) or ("compressed" if after_tokens < before_tokens else "unchanged"),
        "tokens_before": before_tokens,
        "tokens_after": after_tokens,
        "savings": round(1 - after_tokens / before_tokens, 4) if before_tokens else 0.0,
        "elapsed_ms": round(elapsed_ms, 1),
        "valid": not problems,
        "problems": problems[:5],
        "last_request_verbatim": last_request is None
        or one_line(content_text(last_request.get("content"))) in haystack,
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
