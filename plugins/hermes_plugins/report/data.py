"""The data behind the HTML report: one JSON-able dict per report, shared by ``--json`` and ``--html``.

Sections (each optional; the renderer shows what is there):

* ``timeline`` - tokens per message by kind (system, user, assistant, ``tool:<name>``), in
  buckets of consecutive messages when a session has more than ``MAX_POINTS`` messages (a
  10k-message session stays usable), plus the context size of a replayed session request by
  request, the window, the threshold and every compaction where it fired;
* ``compactions`` - what each compaction did (the engine's report, the summary text, the
  condensed span before and after, the archive references that recover what left);
* ``compress`` / ``eval`` / ``cache`` - the ``--json`` reports of those commands, unchanged.

Nothing here is shortened silently: a text cut for display says how many characters were cut,
and a span longer than ``SPAN_ROWS`` says how many rows are not shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import content_text, estimate_message_tokens, estimate_messages_tokens, match_results, redact

#: Most points (messages or buckets of them) a timeline holds; longer sessions are aggregated.
MAX_POINTS = 600
#: Rows of a condensed span shown before and after a compaction (the rest is counted).
SPAN_ROWS = 60
#: Compactions shown in full (summary text, spans): the first and last this many each; the
#: figures of every compaction are always there.
DETAIL_EACH_END = 6
#: Characters of a message shown in a span row (the rest is counted in the row).
ROW_CHARS = 240
#: Archive references named in one span row (the rest is counted).
ROW_REFS = 8
#: Characters of a summary shown (the rest is counted).
SUMMARY_CHARS = 20_000

FIXED_KINDS = ("system", "user", "assistant")


def clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters; a cut says how much it cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters not shown]"


def message_kinds(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kind of each message: ``system``, ``user``, ``assistant`` or ``tool:<name>`` (the
    name of the call it answers; ``tool:?`` for a result no call matches)."""
    answers = match_results(messages)[0]
    kinds: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            name = "?"
            if index in answers:
                at, position = answers[index]
                calls = messages[at].get("tool_calls") or ()
                if position < len(calls):
                    fn = calls[position].get("function") if isinstance(calls[position], Mapping) else None
                    if isinstance(fn, Mapping) and fn.get("name"):
                        name = str(fn["name"])
            kinds.append(f"tool:{name}")
        elif role in FIXED_KINDS:
            kinds.append(str(role))
        else:
            kinds.append(str(role or "?"))
    return kinds


def buckets(count: int, limit: int = MAX_POINTS) -> list[tuple[int, int]]:
    """``[start, end)`` ranges covering ``count`` messages: one per message up to ``limit``,
    else ``limit`` ranges of (nearly) equal size."""
    if count <= limit:
        return [(i, i + 1) for i in range(count)]
    size = -(-count // limit)
    return [(start, min(count, start + size)) for start in range(0, count, size)]


def timeline(
    messages: Sequence[Mapping[str, Any]],
    *,
    window: int | None = None,
    threshold: int | None = None,
    context: Sequence[Mapping[str, Any]] = (),
    compactions: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Tokens per message (or bucket) stacked by kind, plus the context curve and compactions.

    ``context`` is ``[{"message", "tokens"}]``: the context size after each request of a
    replayed session (two points where a compaction fired: before and after it)."""
    kinds = message_kinds(messages)
    tokens = [estimate_message_tokens(m) for m in messages]
    order = [k for k in FIXED_KINDS if k in kinds]
    order += sorted({k for k in kinds if k not in FIXED_KINDS})
    ranges = buckets(len(messages))
    series = {kind: [0] * len(ranges) for kind in order}
    for slot, (start, end) in enumerate(ranges):
        for i in range(start, end):
            series[kinds[i]][slot] += tokens[i]
    totals = {kind: sum(values) for kind, values in series.items()}
    return {
        "messages": len(messages),
        "tokens": sum(tokens),
        "bucket_size": (ranges[0][1] - ranges[0][0]) if ranges else 1,
        "buckets": [[start, end - 1] for start, end in ranges],
        "kinds": order,
        "series": series,
        "kind_totals": totals,
        "kind_counts": {kind: kinds.count(kind) for kind in order},
        "window": window,
        "threshold": threshold,
        "context": [dict(p) for p in context],
        "compactions": [
            {"message": c["message"], "before": c["before"]["tokens"], "after": c["after"]["tokens"]}
            for c in compactions
        ],
    }


def _row(index: int | None, message: Mapping[str, Any],
         archived: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    # redacted before its lines are joined and it is clipped: a ``name: value`` pair holds on its
    # own line only, and a clipped key no longer has a key's shape
    text = redact(content_text(message.get("content")))
    calls = message.get("tool_calls") or ()
    if calls:
        names = []
        for call in calls:
            fn = call.get("function") if isinstance(call, Mapping) else None
            names.append(str(fn.get("name")) if isinstance(fn, Mapping) else "?")
        text = (text + " " if text else "") + "[calls: " + ", ".join(names) + "]"
    row: dict[str, Any] = {
        "index": index,
        "role": str(message.get("role") or "?"),
        "tokens": estimate_message_tokens(message),
        "text": clip(" ".join(text.split()), ROW_CHARS),
    }
    refs = message.get("_refs") or ((message["_ref"],) if message.get("_ref") else ())
    if not refs and archived:
        from hermes_plugins.archive.search import message_text

        refs = tuple(archived.get(message_text(message)) or ())
    if refs:
        # A summary stands for every message it replaced: name the first few, count the rest.
        row["archive_refs"] = [str(r) for r in refs[:ROW_REFS]]
        if len(refs) > ROW_REFS:
            row["archive_refs_not_shown"] = len(refs) - ROW_REFS
    if message.get("_summary") or message.get("_compressed_summary"):
        row["summary"] = True
    return row


def _rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    shown = rows[:SPAN_ROWS]
    return {"rows": shown, "not_shown": len(rows) - len(shown)}


def compaction_detail(
    before: Sequence[Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    report: Mapping[str, Any],
    *,
    message: int,
    archived: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """One compaction: where it fired (``message``: the last input message's index in the
    transcript), the engine's report, the summary text, and the condensed span: the input
    messages that did not come out unchanged and the output messages that are new (summaries,
    one-liners), each with its archive references. ``archived`` (an original's text -> the
    references it is archived under) names the reference of each condensed input message."""
    from hermes_plugins.evaluation.runner import compare

    condensed, made = compare(before, after)
    made_ids = {id(m) for m in made}
    summary = dict(report.get("summary") or {})
    text = None
    index = summary.get("index")
    if isinstance(index, int) and 0 <= index < len(after):
        text = content_text(after[index].get("content"))
    else:
        found = next((m for m in after if m.get("_summary") or m.get("_compressed_summary")), None)
        if found is not None and id(found) in made_ids:
            text = content_text(found.get("content"))
    refs = sorted({r for m in after for r in (m.get("_refs") or ((m["_ref"],) if m.get("_ref") else ()))})
    return {
        "message": message,
        "status": report.get("status"),
        "before": {"messages": len(before), "tokens": estimate_messages_tokens(before)},
        "after": {"messages": len(after), "tokens": estimate_messages_tokens(after)},
        "phases": dict(report.get("phases") or {}),
        "kept_unchanged": len(before) - len(condensed),
        "condensed": len(condensed),
        "summary": summary,
        "summary_text": None if text is None else clip(text, SUMMARY_CHARS),
        "archive_refs": refs,
        "span_before": _rows([_row(i, before[i], archived) for i in sorted(condensed)]),
        "span_after": _rows([_row(i, m) for i, m in enumerate(after) if id(m) in made_ids]),
    }


def limit_detail(compactions: list[dict[str, Any]]) -> int:
    """Keep the summary text and spans of the first and last ``DETAIL_EACH_END`` compactions
    only (a long session compacts dozens of times); the others keep their figures and say
    ``detail_not_shown``. Returns how many lost their detail."""
    if len(compactions) <= 2 * DETAIL_EACH_END:
        return 0
    middle = compactions[DETAIL_EACH_END:-DETAIL_EACH_END]
    for compaction in middle:
        for key in ("summary_text", "span_before", "span_after", "archive_refs"):
            compaction.pop(key, None)
        compaction["detail_not_shown"] = True
    return len(middle)
