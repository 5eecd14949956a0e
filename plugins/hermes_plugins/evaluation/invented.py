"""Failures a compaction stated without evidence in the transcript (issue 29's "invented").

The structured summary lists error items as ``TARGET[ -> exit N]: ERROR LINE — still failing``
(or ``— resolved``) under ``## Errors``. An item is **invented** when it names the readers'
placeholder for a result that was never recorded (no result is not a failure), or when no
result or output of the input shows a failure whose error line it quotes (the first 40
characters of the line, whitespace collapsed and redacted as the summary writes it). Items the
input already held (an earlier summary's) are the input's, not this run's. Free-form summaries
(an LLM's prose) have no such items and are not judged here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_core.plugin import MISSING_RESULT_TEXT, content_text, match_results, redact
from hermes_plugins._common.injected import is_observation
from hermes_plugins._common.toolkinds import is_read_tool
from hermes_plugins.evaluation.evidence import failure_line, pasted_tool_output

QUOTED = 40
_SECTION = re.compile(r"(?m)^## (?:Errors|Errors and blockers)\s*$")
_ITEM = re.compile(r"^(?:- |\d+\. )(.+ — (?:still failing|resolved))$")


def error_items(text: str) -> list[str]:
    """The status-marked items of the error sections of a summary ``text``."""
    items: list[str] = []
    if "## Errors" not in text:  # most messages: one fast scan
        return items
    for section in _SECTION.finditer(text):
        for line in text[section.end():].lstrip("\n").splitlines():
            if line.startswith("## "):
                break
            found = _ITEM.match(line.strip())
            if found:
                items.append(" ".join(found.group(1).split()))
    return items


def evidence_lines(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """The first error line (≤ ``QUOTED`` chars) of every failed result or output in ``messages``."""
    from hermes_plugins.evaluation.probes import _arguments

    answers, _unanswered = match_results(messages)
    found: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            reads = False
            if index in answers:
                at, position = answers[index]
                calls = messages[at].get("tool_calls") or []
                if position < len(calls):
                    reads = bool(is_read_tool(*_arguments(calls[position])))
            line = failure_line(content_text(message.get("content")), is_error=message.get("_is_error"), reads=reads)
        elif role == "user" and (is_observation(message) or pasted_tool_output(content_text(message.get("content")))):
            line = failure_line(content_text(message.get("content")), is_error=message.get("_is_error")
                                or message.get("_injected") == "error-observation")
        else:
            continue
        if line:
            found.add(" ".join(line.split())[:QUOTED])
    return found


def invented_failures(
    before: Sequence[Mapping[str, Any]], new_messages: Iterable[Mapping[str, Any]]
) -> list[str]:
    """The error items of ``new_messages`` (what the compaction wrote) that no evidence in
    ``before`` supports, redacted."""
    held: set[str] = set()
    for message in before:  # an earlier summary's items are carried, not made up now
        held.update(error_items(content_text(message.get("content"))))
    items = [item for message in new_messages
             for item in error_items(redact(content_text(message.get("content")))) if item not in held]
    if not items:
        return []
    evidence = evidence_lines(before)
    return [item for item in items
            if MISSING_RESULT_TEXT in item or not any(line in item for line in evidence)]
