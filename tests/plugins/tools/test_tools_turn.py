"""Within a turn, the tool_search answered through the Session reuses the split (and search
fingerprint) the assembly computed: the catalog is compared once per turn, not twice."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, Session, freeze_tools
from hermes_plugins.tools import bm25, catalog
from hermes_plugins.tools.state import state_of

from hypothesis_budget import examples


def tools(n: int) -> list[dict[str, Any]]:
    out = [{"type": "function", "function": {"name": "terminal", "description": "run a shell command",
                                             "parameters": {"type": "object", "properties": {}}}}]
    for i in range(n):
        out.append({"type": "function", "source": "mcp-github", "function": {
            "name": f"mcp_github_tool_{i}", "description": f"github operation number {i} on issues",
            "parameters": {"type": "object", "properties": {"repo": {"type": "string"}}}}})
    return out


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                        context_length=200_000, persist=False)


def test_tool_search_in_the_turn_does_not_split_the_catalog_again(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    defs = tools(300)
    for _ in range(3):  # let the catalog settle
        session.assemble_tools(defs)
    splits: list[Any] = []
    real = catalog._classify
    monkeypatch.setattr(catalog, "_classify", lambda *a: splits.append(a) or real(*a))
    session.assemble_tools(defs)
    answer = json.loads(session.handle_tool_call("tool_search", {"queries": ["github issue 7"]}))
    assert len(splits) == 1  # the assembly's; tool_search reused it
    assert "mcp_github_tool_7" in json.dumps(answer)


def test_each_turns_assembly_replaces_the_split_the_bridge_uses(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    defs = tools(50)
    session.assemble_tools(defs)
    splits: list[Any] = []
    real = catalog._classify
    monkeypatch.setattr(catalog, "_classify", lambda *a: splits.append(a) or real(*a))
    other = tools(60)
    session.assemble_tools(other)
    answer = session.handle_tool_call("tool_search", {"queries": ["github operation number 55"]})
    assert "mcp_github_tool_55" in answer
    session.assemble_tools(defs)  # a new turn with the old catalog: the split is the new turn's
    assert "mcp_github_tool_55" not in session.handle_tool_call(
        "tool_search", {"queries": ["github operation number 55"]})
    assert len(splits) == 2


def test_the_reused_split_answers_like_a_fresh_one(session: Session) -> None:
    defs = tools(200)
    session.assemble_tools(defs)
    reused = session.handle_tool_call("tool_search", {"queries": ["github issues 12"]})
    fresh = Session.open(cwd=str(session.cwd), home=str(session.home), model="gpt-5",
                         provider="openai", context_length=200_000, persist=False,
                         host=PluginHost.create())  # a host of its own: nothing remembered
    assert fresh.host is not session.host
    fresh.tool_catalog  # noqa: B018 - nothing assembled yet on this one
    fresh._tool_catalog = defs  # a catalog known without this turn's split
    assert fresh.handle_tool_call("tool_search", {"queries": ["github issues 12"]}) == reused


# --- the public path over a plain catalog edited in place ----------------------------------

_WORDS = ["wombat", "zebra", "yak", "otter", "heron"]
_TURN_EDIT = st.tuples(
    st.sampled_from([
        "description", "name", "source", "drop_source", "param", "drop_param", "required",
        "replace", "append", "delete", "none",
    ]),
    st.integers(0, 9),
    st.sampled_from(_WORDS),
)


def _fresh_answer(defs: list[dict[str, Any]], query: str) -> tuple[list[str], dict[str, Any], int]:
    """What the tool_search answer must hold, computed without any memo: a fresh split, a fresh
    index (raw keys nobody saw before) and the summaries read from the live definitions."""
    split = catalog._build(*catalog._split(defs, catalog.defer_list(catalog.search_settings(None))))
    index = bm25.SearchIndex([(object(), bm25.tool_key(d)) for d in split.deferred])
    hits = index.search(query, 5)
    tools: dict[str, Any] = {}
    for hit in hits:
        entry = catalog.entry_of(split.deferred[hit.position])
        tools.setdefault(hit.name, {
            "source": entry.label, "source_name": entry.source or entry.label,
            "description": entry.description, "required": list(entry.required),
        })
    return [h.name for h in hits], tools, len(split.deferred)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(_TURN_EDIT, max_size=12), st.sampled_from(_WORDS + ["github issues"]))
def test_every_turn_over_an_edited_plain_catalog_answers_like_a_fresh_build(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[str, int, str]], query: str
) -> None:
    # The host keeps one list and edits it (and the dicts in it) in place between turns; each
    # turn must see exactly the live definitions, whatever the caches remember of the last one.
    _edit_turns(tmp_path_factory, edits, query)


def _edit_turns(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[str, int, str]], query: str
) -> None:
    home = tmp_path_factory.mktemp("turns")
    session = Session.open(cwd=str(home), home=str(home), model="gpt-5", provider="openai",
                           context_length=200_000, persist=False, host=PluginHost.create())
    defs = tools(9)
    for _ in range(4):  # settled: the unchanged-catalog shortcut (the == proof) is armed
        session.assemble_tools(defs)
    assert state_of(session.host).seen[0].copy is not None
    for kind, i, word in edits:
        target = defs[1 + i % (len(defs) - 1)] if len(defs) > 1 else defs[0]
        fn = target["function"]
        props = fn.setdefault("parameters", {}).setdefault("properties", {})
        if kind == "description":
            fn["description"] = f"{fn.get('description', '')} {word}"
        elif kind == "name":
            fn["name"] = f"mcp_{word}_tool_{i}"
        elif kind == "source":
            target["source"] = f"mcp-{word}"
        elif kind == "drop_source":
            target.pop("source", None)
        elif kind == "param":
            props[word] = {"type": "string"}
        elif kind == "drop_param" and props:
            props.pop(word if word in props else next(iter(props)))
        elif kind == "required":
            fn["parameters"]["required"] = [word]
        elif kind == "replace":
            defs[1 + i % (len(defs) - 1)] = copy.deepcopy(target) | {"source": f"mcp-{word}"}
        elif kind == "append":
            defs.append({"type": "function", "source": f"mcp-{word}", "function": {
                "name": f"{word}_extra_{len(defs)}", "description": f"{word} extra tool",
                "parameters": {"type": "object", "properties": {word: {}}}}})
        elif kind == "delete" and len(defs) > 2:
            del defs[1 + i % (len(defs) - 1)]
        assembled = session.assemble_tools(defs)
        answer = json.loads(session.handle_tool_call("tool_search", {"queries": [query], "limit": 5}))
        names, summaries, count = _fresh_answer(defs, query)
        if count == 0:
            assert "error" in answer or answer.get("total_available", 0) == 0
            continue
        assert answer["total_available"] == count
        assert answer["results"][0]["matches"] == names
        for name, summary in summaries.items():
            got = answer["tools"][name]
            assert got["source"] == summary["source"] and got["source_name"] == summary["source_name"]
            assert got["required"] == summary["required"]
            assert summary["description"].startswith(got["description"].rstrip("…"))
        visible = [d["function"]["name"] for d in assembled if d["function"]["name"] not in catalog.BRIDGE_TOOL_NAMES]
        fresh = catalog._build(*catalog._split(defs, catalog.defer_list(catalog.search_settings(None))))
        assert visible == [catalog.tool_name(d) for d in fresh.visible]


def test_the_turn_logs_its_events_only_when_debug_is_on(session: Session, capture_events: Any) -> None:
    defs = tools(20)
    session.assemble_tools(defs)
    session.handle_tool_call("tool_search", {"queries": ["github issues 3"]})
    names = [e["event"] for e in capture_events]
    assert "tools_assembled" in names and "tool_search_answered" in names
    assembled = next(e for e in capture_events if e["event"] == "tool_search_answered")
    assert assembled["queries"] == 1 and assembled["matches"] >= 1
    import logging

    capture_events.clear()
    root = logging.getLogger("hermes_core")
    level = root.level
    root.setLevel(logging.INFO)
    try:
        session.assemble_tools(defs)
        session.handle_tool_call("tool_search", {"queries": ["github issues 3"]})
    finally:
        root.setLevel(level)
    assert not [e for e in capture_events if e["event"] in {"tools_assembled", "tool_search_answered"}]


# --- what tool search remembers belongs to the plugin host ---------------------------------


def test_each_host_keeps_its_own_tool_search_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core import ToolsContext
    from hermes_plugins.tools.state import ToolSearchState

    defs = tools(40)
    first, second = PluginHost.create(), PluginHost.create()
    lookups: list[object] = []
    real = PluginHost.state

    def counting(self: PluginHost, factory: Any, **kwargs: Any) -> Any:
        if factory is ToolSearchState:
            lookups.append(self)
        return real(self, factory, **kwargs)

    monkeypatch.setattr(PluginHost, "state", counting)
    for _ in range(3):  # settle the catalog on the first host
        first.tools_assemble(defs, ToolsContext(host=first))
    assert lookups == [first] * 3  # once per hook call, never per tool
    settled = first.state(ToolSearchState)
    assert settled.seen and settled.seen[0].copy is not None and settled.listing_last
    fresh = second.state(ToolSearchState)
    assert fresh is not settled and not fresh.seen and not fresh.listing_last
    assert second.tools_assemble(defs, ToolsContext(host=second)) == first.tools_assemble(
        defs, ToolsContext(host=first))
    assert settled.seen[0].copy is not None and fresh.seen[0].copy is None  # one turn: not settled


def test_without_a_host_tool_search_remembers_nothing() -> None:
    from hermes_core.frozen import freeze_tools
    from hermes_plugins.tools.catalog import classify
    from hermes_plugins.tools.settings import ToolSearchSection
    from hermes_plugins.tools.state import ToolSearchState, state_of

    frozen = freeze_tools(tools(20))
    assert state_of(None) is not state_of(None)
    assert classify(frozen, ToolSearchSection()) is not classify(frozen, ToolSearchSection())
    state = ToolSearchState()
    assert classify(frozen, ToolSearchSection(), state) is classify(frozen, ToolSearchSection(), state)
    assert bm25.index_for(frozen) is not bm25.index_for(frozen)
    assert bm25.index_for(frozen, state=state) is bm25.index_for(frozen, state=state)


def test_a_frozen_catalogs_assembly_is_reused_with_fresh_bridge_definitions(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    frozen = freeze_tools(tools(40))
    first = session.assemble_tools(frozen)
    splits: list[Any] = []
    real = catalog._classify
    monkeypatch.setattr(catalog, "_classify", lambda *a: splits.append(a) or real(*a))
    again = session.assemble_tools(frozen)
    assert splits == []  # same frozen catalog, settings and window: nothing split again
    assert again == first
    bridge = [d for d in again if d["function"]["name"] in catalog.BRIDGE_TOOL_NAMES]
    assert bridge and all(not any(d is e for e in first) for d in bridge)  # the host may edit them
    bridge[0]["function"]["description"] = "edited by the host"
    assert session.assemble_tools(frozen) == first
    # The turn's tool_search still finds the split the (reused) assembly stands for.
    answer = json.loads(session.handle_tool_call("tool_search", {"queries": ["github operation number 7"]}))
    assert splits == [] and "mcp_github_tool_7" in answer["tools"]


def test_a_frozen_catalogs_assembly_follows_the_window_and_a_new_catalog(session: Session) -> None:
    big = tools(300)
    frozen = freeze_tools(big)
    wide = session.assemble_tools(frozen)
    small = Session.open(cwd=str(session.home), home=str(session.home), model="gpt-5",
                         provider="openai", context_length=8_000, persist=False)
    narrow = small.assemble_tools(frozen)  # same host, same catalog, another window
    assert narrow != wide
    assert narrow == small.assemble_tools(freeze_tools(big))  # a new object: assembled afresh
    assert session.assemble_tools(frozen) == wide


def test_frozen_search_answers_keep_their_required_parameters(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugins.tools import bridge

    defs = tools(30)
    for d in defs[1:]:
        d["function"]["parameters"]["required"] = ["repo"]
    frozen = freeze_tools(defs)
    made: list[int] = []
    real = bridge._hit_summary
    monkeypatch.setattr(bridge, "_hit_summary", lambda *a: made.append(a[2]) or real(*a))
    for _ in range(3):  # the second and third answers come from the summaries kept with the index
        session.assemble_tools(frozen)
        answer = json.loads(session.handle_tool_call("tool_search", {"queries": ["github operation number 3"]}))
        assert answer["tools"]["mcp_github_tool_3"]["required"] == ["repo"]
    assert len(made) == len(answer["tools"])  # built on the first answer only
    plain = copy.deepcopy(defs)
    session.assemble_tools(plain)
    plain[4]["function"]["parameters"]["required"] = ["repo", "title"]  # plain: read live
    answer = json.loads(session.handle_tool_call("tool_search", {"queries": ["github operation number 3"]}))
    assert answer["tools"]["mcp_github_tool_3"]["required"] == ["repo", "title"]


def test_a_sessions_turn_split_goes_with_the_session(tmp_path: Path) -> None:
    import gc

    defs = tools(20)
    session = Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                           context_length=200_000, persist=False)
    state = state_of(session.host)
    session.assemble_tools(defs)
    key = id(session)
    assert state.turns[key][0] is defs and key in state.watched
    session.assemble_tools(defs)  # the same session: one finalizer, the entry replaced
    assert len([k for k in state.watched if k == key]) == 1
    del session
    gc.collect()
    assert key not in state.turns and key not in state.watched  # an id reused later finds nothing


def test_classify_takes_a_turns_split_only_for_the_same_catalog_and_defer_list() -> None:
    from hermes_plugins.tools.settings import ToolSearchSection
    from hermes_plugins.tools.state import ToolSearchState

    defs, defaults = tools(30), ToolSearchSection()
    split = catalog.classify(defs, defaults, ToolSearchState())
    turn = (defs, catalog.defer_list(defaults), split)
    assert catalog.classify(defs, defaults, turn=turn) is split  # passed in: no state needed
    assert catalog.classify(defs, defaults) is not split  # nothing passed: split afresh
    copied = list(defs)
    assert catalog.classify(copied, defaults, turn=turn) is not split  # another list
    deferring = ToolSearchSection(defer=("terminal",))
    assert "terminal" in catalog.classify(defs, deferring, turn=turn).deferred_names


def test_an_assembly_carries_the_split_it_made_for_the_turn() -> None:
    from hermes_plugins.tools.assembly import assemble_tool_defs
    from hermes_plugins.tools.state import ToolSearchState

    state = ToolSearchState()
    defer = catalog.defer_list(catalog.search_settings(None))
    for defs in (tools(30), freeze_tools(tools(30))):
        first = assemble_tool_defs(defs, context_length=200_000, config=None, state=state)
        again = assemble_tool_defs(defs, context_length=200_000, config=None, state=state)
        for result in (first, again):  # a frozen catalog's second assembly is reused whole
            assert result.turn is not None and result.turn[0] is defs and result.turn[1] == defer
            assert result.turn[2].deferred == result.deferred and len(result.deferred) == 30
        catalog.classify(tools(5), catalog.search_settings(None), state)  # another split between
        assert assemble_tool_defs(defs, context_length=200_000, config=None, state=state).turn[0] is defs  # type: ignore[index]


def test_a_sessions_turn_split_serves_only_the_catalog_it_assembled(session: Session) -> None:
    defs = tools(20)
    state = state_of(session.host)
    assert catalog.turn_split(session, defs, state) is None  # nothing assembled yet
    session.assemble_tools(defs)
    turn = catalog.turn_split(session, defs, state)
    assert turn is not None and turn[0] is defs and turn is state.turns[id(session)]
    assert catalog.turn_split(session, list(defs), state) is None  # an equal list is not it
    assert catalog.turn_split(None, defs, state) is None
    other = Session.open(cwd=str(session.cwd), home=str(session.home), model="gpt-5",
                         provider="openai", context_length=200_000, persist=False)
    assert other.host is session.host and catalog.turn_split(other, defs, state) is None


# --- a settled plain catalog's split, cut from the live list by position --------------------


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.booleans(), max_size=80))
def test_a_part_cut_by_runs_is_the_live_objects_at_its_positions(flags: list[bool]) -> None:
    defs = [{"i": i} for i in range(len(flags))]
    positions = tuple(i for i, flag in enumerate(flags) if flag)
    runs = catalog._runs(positions)
    taken = catalog._take(defs, positions, runs)
    assert len(taken) == len(positions)
    assert all(a is defs[i] for a, i in zip(taken, positions, strict=True))
    if runs is not None:  # runs cover exactly the positions, in order
        assert [i for run in runs for i in range(len(defs))[run]] == list(positions)


def test_a_settled_catalog_with_a_definition_replaced_by_an_equal_one_hands_out_the_new_one(
    session: Session,
) -> None:
    # The proof says the indexed fields are unchanged; the split must still hold the objects
    # the host passes now (a tool_call this turn reads its schema from them), not last turn's.
    defs = tools(40)
    for _ in range(3):
        session.assemble_tools(defs)
    defs[5] = copy.deepcopy(defs[5])
    defs[0] = copy.deepcopy(defs[0])  # the visible one: assemble_tools hands it back
    assembled = session.assemble_tools(defs)
    assert any(d is defs[0] for d in assembled)
    split = catalog.classify(defs, catalog.search_settings(session.config), state_of(session.host))
    assert all(any(d is live for live in defs) for d in (*split.visible, *split.deferred))
    assert any(d is defs[5] for d in split.deferred)
