"""The free passes' plan (issue 13): their output with the one-liners of old results built
only when read, since most old results end up in the part a summary condenses.

``PrunePlan`` is what ``plan_free_passes`` (compressor/prune.py) returns; ``TurnDemotions`` and
``PlannedTurns`` hand a summariser the results still planned, raw, with where they are.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

import attrs

from hermes_plugins.compressor.oneliners import tool_line


@attrs.define(kw_only=True)
class PruneStats:
    """What phase 1 did, for the compression report."""

    deduplicated: int = 0
    demoted: int = 0
    arguments_shortened: int = 0
    media_stripped: int = 0

    @property
    def changed(self) -> int:
        return self.deduplicated + self.demoted + self.arguments_shortened + self.media_stripped


class _Walked(Protocol):
    """What a plan reads of the walk that made it (``prune._Pruner``, which imports this module)."""

    _out: list[dict[str, Any]] | None
    stats: PruneStats
    changed: dict[int, dict[str, Any]]
    planned: dict[int, tuple[str, Any] | None]
    demoted_at: set[int]

    def call_for(self, i: int, ident: str) -> tuple[str, Any]: ...


def with_content(message: dict[str, Any], content: Any) -> dict[str, Any]:
    """A copy of ``message`` holding ``content``. dict.copy + one store is about twice as fast
    as ``{**message, "content": ...}`` (same keys, same order); other mappings take that form."""
    copied = message.copy() if type(message) is dict else {**message}
    copied["content"] = content
    return copied



class PrunePlan:
    """The free passes with the one-liners of old results built on demand (issue 13).

    ``plan_free_passes`` walks as ``prune_tool_results`` does - dedupe, argument shortening,
    tail pressure, lines remembered from an earlier pass - but leaves the results whose
    one-liner would be new as they are (``planned``): nearly all of them lie in the part a
    summary condenses, where a line would be built only to be read back. ``messages`` is the
    output list with those results still raw; ``at`` and ``materialize_range`` build them
    (each once, in place), ``view`` is the list as it will be (a sequence that builds what is
    read), ``materialize_all`` gives exactly ``prune_tool_results``' output. ``line`` is one
    planned one-liner alone (nothing stored, nothing counted): what a summariser shows.
    """

    def __init__(self, source: list[dict[str, Any]], pruner: _Walked) -> None:
        self.source = source
        self._pruner = pruner
        self.messages: list[dict[str, Any]] = pruner._out if pruner._out is not None else list(source)
        self.stats = pruner.stats
        #: Index -> the call of a result still to demote (``None``: looked up when needed).
        self.planned = pruner.planned
        #: Indices of the results ``messages`` holds as one-liners.
        self.demoted_at = pruner.demoted_at

    @property
    def view(self) -> Sequence[dict[str, Any]]:
        # Made on each access, not stored: a stored view would point back at the plan, and the
        # cycle would keep the output list and the plan's tables alive until the collector ran
        # (~3,000 objects over 10k messages, ~23,000 over 100k).
        return _Materializing(self)

    def call_of(self, i: int) -> tuple[str, Any]:
        """(tool name, arguments) of the call the planned result ``i`` answers."""
        found = self.planned[i]
        if found is None:
            return self._pruner.call_for(i, self.source[i].get("tool_call_id") or "")
        return found

    def line(self, i: int) -> str | None:
        """The one-liner of planned result ``i``, or ``None`` when it would not be shorter (the
        result then stays as it is)."""
        message = self.source[i]
        content = message["content"]
        name, arguments = self.call_of(i)
        line = tool_line(name, arguments, content, message.get("_is_error"))
        return line if len(line) < len(content) else None

    def at(self, i: int) -> dict[str, Any]:
        """Message ``i`` of the output, its one-liner built if it was still planned."""
        if i in self.planned:
            self._materialize(i)
        return self.messages[i]

    def _materialize(self, i: int) -> None:
        line = self.line(i)
        del self.planned[i]
        if line is not None:
            message = self.source[i]
            self.messages[i] = with_content(message, line)
            self.demoted_at.add(i)
            self.stats.demoted += 1

    def materialize_range(self, start: int, stop: int) -> None:
        """Build the planned one-liners of ``[start, stop)``."""
        planned = self.planned
        if not planned:
            return
        if stop - start > len(planned):
            for i in [i for i in planned if start <= i < stop]:
                self._materialize(i)
            return
        for i in range(max(0, start), stop):
            if i in planned:
                self._materialize(i)

    def materialize_all(self) -> list[dict[str, Any]]:
        """``prune_tool_results``' output: every one-liner built; ``source`` itself when
        nothing changed."""
        planned = self.planned
        if planned:
            # ``_materialize`` inline: a first pass builds thousands of lines here.
            source, out, demoted_at, line_for = self.source, self.messages, self.demoted_at, tool_line
            count = 0
            for i, found in planned.items():
                message = source[i]
                content = message["content"]
                name, arguments = found if found is not None else \
                    self._pruner.call_for(i, message.get("tool_call_id") or "")
                line = line_for(name, arguments, content, message.get("_is_error"))
                if len(line) < len(content):
                    # ``with_content`` inline: a call less per line of a first pass.
                    demoted = message.copy() if type(message) is dict else {**message}
                    demoted["content"] = line
                    out[i] = demoted
                    demoted_at.add(i)
                    count += 1
            planned.clear()
            self.stats.demoted += count
        if not self._pruner.changed and not self.stats.demoted:
            return self.source
        return self.messages

    def demoted_between(self, start: int, stop: int) -> int:
        """How many results of ``[start, stop)`` the output holds as one-liners."""
        return _count_between(self.demoted_at, start, stop)

    def planned_between(self, start: int, stop: int) -> int:
        """How many results of ``[start, stop)`` are still planned (no one-liner built)."""
        return _count_between(self.planned, start, stop)


def _count_between(indices: Collection[int], start: int, stop: int) -> int:
    if stop - start < len(indices):
        return sum(1 for i in range(max(0, start), stop) if i in indices)
    return sum(1 for i in indices if start <= i < stop)


class _Materializing(Sequence[dict[str, Any]]):
    """``PrunePlan.messages`` as they will be: reading a planned result builds its one-liner."""

    __slots__ = ("_plan",)

    def __init__(self, plan: PrunePlan) -> None:
        self._plan = plan

    def __len__(self) -> int:
        return len(self._plan.messages)

    def __getitem__(self, index: Any) -> Any:
        plan = self._plan
        if type(index) is int:
            if index < 0:
                index += len(plan.messages)
            if index in plan.planned:
                plan._materialize(index)
            return plan.messages[index]
        start, stop, _step = index.indices(len(plan.messages))
        plan.materialize_range(start, stop)
        return plan.messages[index]


class TurnDemotions:
    """Which turns of a summariser's list are results the free passes planned to demote
    (position in the list -> index in the plan), and their one-liners on demand."""

    def __init__(self, plan: PrunePlan, positions: dict[int, int]) -> None:
        self.plan = plan
        self.positions = positions

    def index(self, position: int) -> int | None:
        return self.positions.get(position)


class PlannedTurns(list):  # type: ignore[type-arg]
    """A summariser's turns holding planned results raw, with their ``demotions``."""

    demotions: TurnDemotions | None = None
