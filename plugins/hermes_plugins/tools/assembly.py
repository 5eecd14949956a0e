"""Deferred disclosure: what tool definitions the model sees this turn (spec §16).

``assemble_tool_defs`` is a pure function of the live definitions, the window and the config:

1. bridge definitions from an earlier pass are set aside, the rest is classified;
2. nothing deferrable: the definitions pass through (an earlier pass's bridge is kept, so
   assembling an assembled list gives the same list);
3. ``tools.search.enabled: off``: everything passes through, without any bridge;
4. otherwise the model sees the visible tools plus ``tool_search`` (with a listing of the
   deferred tools sized to the budget), ``tool_describe`` and ``tool_call``.

Rendering the listing is memoised by the deferred tools' fingerprint and the budget, which is
exact (equal inputs give equal bytes), so it cannot drift from the live definitions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.plugin import Config, FrozenTools
from hermes_plugins.tools import bm25
from hermes_plugins.tools.bridge import bridge_definitions
from hermes_plugins.tools.catalog import (
    TurnSplit,
    classify,
    defer_list,
    entry_of,
    estimate_schema_tokens,
    listing_budget,
    search_settings,
)
from hermes_plugins.tools.listing import render_listing
from hermes_plugins.tools.settings import ToolSearchSection
from hermes_plugins.tools.state import Classified, ToolSearchState

_MEMO_MAX = 16
#: Listings rendered last kept by the state, most recent first (one per catalog a
#: multi-session host alternates between), found by the identity of their fingerprint before
#: the memo has to hash one: hashing a 5,000-tool fingerprint costs more than the rest of an
#: assembly.
_RECENT_MAX = 4


@attrs.frozen(kw_only=True)
class AssemblyResult:
    """What the model sees and why.

    ``tier``: 0 pass-through, 1 bridge with a listing of names (``full``/``names``/``mixed``),
    2 bridge with only group counts or no listing. ``listing_form`` is ``None`` when the
    bridge is not active, ``"off"`` when the listing is switched off, ``"kept"`` when an
    earlier pass's bridge was kept as it was.
    """

    tool_defs: tuple[Mapping[str, Any], ...]
    activated: bool
    deferred_count: int = 0
    listing_budget: int = 0
    tier: int = 0
    listing_form: str | None = None
    deferred_names: tuple[str, ...] = ()
    deferred: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False, repr=False)
    #: The split made here with what it was made of (the definitions, the defer list), for
    #: the bridge calls of the same turn (``catalog.remember_turn``, ``classify(turn=)``).
    turn: TurnSplit | None = attrs.field(default=None, eq=False, repr=False)

    @functools.cached_property
    def deferred_tokens(self) -> int:
        """Rough tokens the deferred schemas would cost (computed on first use: it serialises
        every deferred schema, which is most of an assembly's cost at 1,000+ tools)."""
        return estimate_schema_tokens(self.deferred)


def assemble_tool_defs(
    definitions: Sequence[Any],
    *,
    context_length: int | None,
    config: Config | ToolSearchSection | None,
    state: ToolSearchState | None = None,
) -> AssemblyResult:
    """The definitions the model sees for this turn, from the live ``definitions``.

    ``state``: the host's memos (``state.py``); without one nothing is remembered."""
    if state is None:
        state = ToolSearchState()
    settings = search_settings(config)
    last = state.frozen_assembly
    if (
        last is not None and last[0] is definitions and last[1] is settings
        and last[2] == context_length
    ):
        # The same frozen catalog under the same settings and window: the same assembly, with
        # bridge definitions of its own (the host may edit what it gets).
        return _bridged(last[4], settings, last[3])
    split = classify(definitions, settings, state)
    turn = (definitions, defer_list(settings), split)
    budget = listing_budget(settings, context_length)
    if not split.deferred:
        if split.bridge and settings.enabled != "off":
            # Already assembled: the deferred tools are behind the bridge we were given.
            return AssemblyResult(
                tool_defs=tuple(definitions), activated=True, listing_budget=budget, tier=2,
                listing_form="kept", turn=turn,
            )
        return AssemblyResult(
            tool_defs=split.visible, activated=False, listing_budget=budget, turn=turn
        )
    names = split.deferred_names
    if settings.enabled == "off":
        bridge_free = tuple(d for d in definitions if not any(d is b for b in split.bridge))
        return AssemblyResult(
            tool_defs=bridge_free, activated=False, deferred_count=len(split.deferred),
            listing_budget=budget, deferred=split.deferred, deferred_names=names, turn=turn,
        )
    if settings.listing == "off":
        listing, form = None, "off"
    else:
        listing, form = _listing(state, split.deferred, budget, split.deferred_print)
    parts = (split, budget, listing, form)
    if definitions.__class__ is FrozenTools:
        state.frozen_assembly = (definitions, settings, context_length, turn, parts)
    return _bridged(parts, settings, turn)


def _bridged(
    parts: tuple[Classified, int, str | None, str], settings: ToolSearchSection, turn: TurnSplit
) -> AssemblyResult:
    split, budget, listing, form = parts
    bridge = bridge_definitions(
        deferred_count=len(split.deferred), listing=listing, listing_form=form
    )
    return AssemblyResult(
        tool_defs=(*split.visible, *bridge),
        activated=True,
        deferred_count=len(split.deferred),
        listing_budget=budget,
        tier=1 if form in {"full", "names", "mixed"} else 2,
        listing_form=form,
        deferred_names=split.deferred_names,
        deferred=split.deferred,
        turn=turn,
    )


def _listing(
    state: ToolSearchState,
    deferred: Sequence[Mapping[str, Any]],
    budget: int,
    known: tuple[Any, ...] | None = None,
) -> tuple[str | None, str]:
    # The listing reads name, source and description: all part of the search fingerprint.
    print_ = known if known is not None else bm25.fingerprint(deferred, state)
    recent = state.listing_last  # replaced whole, never edited: a consistent tuple on every thread
    for entry in recent:
        if entry[0] is print_ and entry[1] == budget:
            return entry[2]  # a catalog seen lately: no need to hash its fingerprint
    key = (print_, budget)
    memo = state.listing_memo
    try:
        cached = memo.get(key)
    except TypeError:  # an unhashable field: render without the memo
        return render_listing([entry_of(d) for d in deferred], budget)
    if cached is None:
        cached = render_listing([entry_of(d) for d in deferred], budget)
        with state.lock:
            memo[key] = cached
            while len(memo) > _MEMO_MAX:
                memo.popitem(last=False)
    others = [e for e in recent if e[0] is not print_ or e[1] != budget]
    state.listing_last = ((print_, budget, cached), *others[: _RECENT_MAX - 1])
    return cached
