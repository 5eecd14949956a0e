"""A replayed session's tool results through the tool-result pipeline, as they arrive.

A host that routes its tool results through hermes (``Session.process_tool_result`` and
``Session.fit_tool_results``) never has a too-large result in its context: the output limits
hold it, or it is spilled to a file and replaced by a ``<persisted-output>`` preview. The
report's replay does the same, so the context it compacts is the one such a host would have
had and the report can say how many results were spilled before each compaction.

The spill files are written under a temporary folder that ``close()`` removes: the replay never
writes into the user's ``$HERMES_HOME`` (the previews name paths that no longer exist once the
report is written; the report says so).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import match_results

OPEN_TAG = "<persisted-output>"


def is_spilled(content: Any) -> bool:
    """Whether a result (text, or any text part of a list) is a spill preview block."""
    if isinstance(content, str):
        return content.lstrip().startswith(OPEN_TAG)
    if isinstance(content, list):
        return any(isinstance(p, Mapping) and is_spilled(p.get("text")) for p in content)
    return False


class ReplaySpills:
    """Runs each fresh tool result of a replay through the pipeline; counts what it changed.

    ``spilled`` / ``limited`` are running totals (a result counts once: spilled when it came out
    as a preview block and was not one before, limited when it came out changed otherwise);
    ``warnings`` holds the pipeline's warnings (``code: message``)."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], *, config: Any, host: Any,
                 context_length: int, model: str = "") -> None:
        from hermes_core import Session

        self._messages = messages
        self._answers = match_results(messages)[0]
        self._folder = tempfile.TemporaryDirectory(prefix="hermes-report-spill-")
        try:
            self.session = Session.open(config=config, host=host, persist=False, context_length=context_length,
                                        model=model, home=self._folder.name)
        except BaseException:
            self._folder.cleanup()
            raise
        self.spilled = 0
        self.limited = 0
        self.warnings: list[str] = []

    def _call(self, index: int) -> tuple[str, str, dict[str, Any]]:
        """(tool name, call id, arguments) of the call tool message ``index`` answers."""
        message = self._messages[index]
        name = str(message.get("name") or "")
        call_id = str(message.get("tool_call_id") or "")
        arguments: dict[str, Any] = {}
        if index in self._answers:
            at, position = self._answers[index]
            calls = self._messages[at].get("tool_calls") or ()
            call = calls[position] if position < len(calls) else None
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                name = str(fn.get("name") or name)
                raw = fn.get("arguments")
                try:
                    parsed = json.loads(raw) if isinstance(raw, str) else raw
                except ValueError:
                    parsed = None
                arguments = dict(parsed) if isinstance(parsed, Mapping) else {}
        return name, call_id, arguments

    def process(self, start: int, fresh: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``fresh`` (the messages ``start``, ``start + 1`` ... of the transcript, own copies)
        with every tool result limited or spilled as the pipeline does it: each result, then
        each turn's results together (the turn budget). Other messages are returned as given."""
        out = list(fresh)
        turns: dict[Any, list[int]] = {}
        for k, message in enumerate(fresh):
            if message.get("role") != "tool":
                continue
            name, call_id, arguments = self._call(start + k)
            content = message.get("content")
            new = self.session.process_tool_result(content, tool_name=name, tool_call_id=call_id,
                                                   arguments=arguments)
            if new is not content:
                out[k] = {**message, "content": new}
            # Results answering one assistant message are one turn (an orphan is its own).
            turn = self._answers[start + k][0] if start + k in self._answers else ("orphan", start + k)
            turns.setdefault(turn, []).append(k)
        for ks in turns.values():
            fitted = self.session.fit_tool_results([out[k] for k in ks])
            for k, message in zip(ks, fitted or ()):
                out[k] = message
        for k, message in enumerate(fresh):
            if message.get("role") != "tool" or out[k] is message:
                continue
            before, after = message.get("content"), out[k].get("content")
            if after == before:
                out[k] = message
            elif is_spilled(after) and not is_spilled(before):
                self.spilled += 1
            else:
                self.limited += 1
        self.warnings.extend(f"{w.kind}: {w.message}" for w in self.session.warnings)
        return out

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            self._folder.cleanup()
