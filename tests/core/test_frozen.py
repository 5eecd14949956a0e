"""Frozen tool definitions: immutable, read like plain ones, and recognised by identity."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from hermes_core import Session
from hermes_core.frozen import (
    FrozenDict,
    FrozenList,
    FrozenTools,
    all_frozen,
    freeze,
    freeze_tools,
    thaw,
)
from hermes_core.payload import assemble_payload
from hermes_plugins.tools import bm25
from hermes_plugins.tools.catalog import classify
from hermes_plugins.tools.settings import ToolSearchSection
from hermes_plugins.tools.state import ToolSearchState


def tool(name: str, desc: str, params: tuple[str, ...] = (), source: str = "mcp-zoo") -> dict[str, Any]:
    return {
        "type": "function",
        "source": source,
        "function": {
            "name": name,
            "description": desc,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string", "enum": ["a", "b"]} for p in params},
                "required": list(params[:1]),
            },
        },
    }


PLAIN = [
    {"type": "function", "function": {"name": "terminal", "description": "Run a command.",
                                       "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
    tool("zoo_feed_animal", "Feed an animal in the zoo.", ("animal", "food")),
    tool("zoo_list_animals", "List the animals in an enclosure.", ("enclosure",)),
    tool("weather_forecast", "Forecast the weather for a city.", ("city",), source="mcp-weather"),
]


def test_every_mutation_is_refused_at_every_level() -> None:
    frozen = freeze_tools(PLAIN)[1]
    fn = frozen["function"]
    props = fn["parameters"]["properties"]
    required = fn["parameters"]["required"]
    attempts = [
        lambda: frozen.__setitem__("x", 1),
        lambda: fn.__delitem__("name"),
        lambda: fn.update(name="other"),
        lambda: fn.pop("name"),
        lambda: fn.popitem(),
        lambda: fn.setdefault("x", 1),
        lambda: fn.clear(),
        lambda: fn.__ior__({"x": 1}),
        lambda: fn.__init__({"name": "other"}),
        lambda: props.__setitem__("new", {}),
        lambda: props["animal"]["enum"].append("c"),
        lambda: required.extend(["food"]),
        lambda: required.__setitem__(0, "food"),
        lambda: required.sort(),
        lambda: required.__iadd__(["x"]),
        lambda: required.__init__(["x"]),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError, match="freeze_tools"):
            attempt()
    assert thaw(frozen) == PLAIN[1]


def test_frozen_definitions_read_compare_and_serialise_like_plain_ones() -> None:
    frozen = freeze_tools(PLAIN)
    assert list(frozen) == PLAIN
    assert json.dumps(frozen, sort_keys=True) == json.dumps(PLAIN, sort_keys=True)
    assert orjson.dumps(list(frozen), option=orjson.OPT_SORT_KEYS) == orjson.dumps(PLAIN, option=orjson.OPT_SORT_KEYS)
    first = frozen[1]
    assert isinstance(first, dict) and isinstance(first, Mapping)
    assert isinstance(first["function"]["parameters"]["required"], list)
    assert all_frozen(frozen) and not all_frozen(PLAIN) and not all_frozen(())
    assert not all_frozen([*frozen, PLAIN[0]]) and not all_frozen([PLAIN[0], *frozen])
    assert freeze(first) is first


def test_copies_are_plain_and_editable_and_pickles_stay_frozen() -> None:
    frozen = freeze_tools(PLAIN)[1]
    for thawed in (copy.deepcopy(frozen), thaw(frozen)):
        assert type(thawed) is dict and type(thawed["function"]) is dict
        assert type(thawed["function"]["parameters"]["required"]) is list
        thawed["function"]["name"] = "edited"
        assert frozen["function"]["name"] == "zoo_feed_animal"
    shallow = copy.copy(frozen)
    assert type(shallow) is dict and shallow == frozen
    back = pickle.loads(pickle.dumps(frozen))
    assert back == frozen and type(back["function"]["parameters"]) is FrozenDict
    assert type(back["function"]["parameters"]["required"]) is FrozenList


def test_frozen_tools_freezes_what_it_is_given() -> None:
    plain = [copy.deepcopy(PLAIN[1])]
    tools = FrozenTools(plain)
    assert type(tools[0]) is FrozenDict and type(tools[0]["function"]) is FrozenDict
    plain[0]["function"]["name"] = "changed later"
    assert tools[0]["function"]["name"] == "zoo_feed_animal"
    assert type(tools + tools) is tuple and type(tools[:1]) is tuple  # derived tuples are plain


def test_hash_follows_content_not_order() -> None:
    a = freeze({"x": 1, "y": [1, 2], "z": {"k": "v"}})
    b = freeze({"z": {"k": "v"}, "y": [1, 2], "x": 1})
    assert a == b and hash(a) == hash(b)
    assert {a: "found"}[b] == "found"


def test_a_frozen_catalog_hashes_its_definitions_once(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = freeze_tools(PLAIN)
    calls: list[Any] = []
    real = FrozenDict.__hash__
    monkeypatch.setattr(FrozenDict, "__hash__", lambda self: calls.append(self) or real(self))
    first = hash(tools)
    read = len(calls)
    assert read >= len(tools)  # every definition (and what it holds) hashed once
    assert hash(tools) == first and len(calls) == read  # cached: no definition read again
    assert hash(tools) == hash(tuple(tools)) and {tools: 1}[FrozenTools.of_frozen(tools)] == 1
    back = pickle.loads(pickle.dumps(tools))
    assert back == tools and type(back) is FrozenTools
    assert "_hash" not in back.__dict__  # a hash is per process: never pickled


def test_a_frozen_catalog_searches_like_the_plain_one() -> None:
    state = ToolSearchState()
    plain_deferred = classify(PLAIN, ToolSearchSection(), state).deferred
    frozen_deferred = classify(freeze_tools(PLAIN), ToolSearchSection(), state).deferred
    for query in ("feed animal", "weather city", "zoo_list_animals", "enclosure", "nothing"):
        assert bm25.index_for(frozen_deferred, state=state).search(query, 5) == bm25.index_for(plain_deferred, state=state).search(query, 5)


def test_a_frozen_catalog_is_recognised_by_identity_and_a_new_one_is_seen() -> None:
    state = ToolSearchState()
    catalog = freeze_tools(PLAIN)
    deferred = classify(catalog, ToolSearchSection(), state).deferred
    assert type(deferred) is FrozenTools
    assert bm25.fingerprint(deferred, state) is deferred  # nothing read from the definitions
    as_list = list(deferred)
    assert bm25.fingerprint(as_list, state)[1:] == deferred  # a list of them: compared item by item
    index = bm25.index_for(deferred, state=state)
    assert classify(catalog, ToolSearchSection(), state).deferred is deferred  # the split is reused
    assert bm25.index_for(classify(catalog, ToolSearchSection(), state).deferred, state=state) is index
    edited = thaw(list(catalog))
    edited[3]["function"]["description"] = "Tide tables for a harbour."
    new = freeze_tools(edited)
    hits = bm25.index_for(classify(new, ToolSearchSection(), state).deferred, state=state).search("tide harbour", 5)
    assert [h.name for h in hits] == ["weather_forecast"]
    assert bm25.index_for(deferred, state=state).search("tide harbour", 5) == []


def test_the_split_of_a_frozen_catalog_is_reused_while_the_defer_list_is_the_same() -> None:
    state = ToolSearchState()
    catalog = freeze_tools(PLAIN)
    first = classify(catalog, ToolSearchSection(), state)
    assert classify(list(catalog), ToolSearchSection(), state) is first
    deferring_terminal = classify(catalog, ToolSearchSection(defer=("terminal",)), state)
    assert deferring_terminal is not first
    assert "terminal" in [d["function"]["name"] for d in deferring_terminal.deferred]
    grown = freeze_tools([*PLAIN, tool("zoo_clean_cage", "Clean a cage.")])
    assert len(classify(grown, ToolSearchSection(), state).deferred) == len(first.deferred) + 1


def test_a_session_assembles_a_frozen_catalog_like_a_plain_one(tmp_path: Path) -> None:
    many = [*PLAIN, *(tool(f"zoo_tool_{i}", f"Zoo thing number {i}.") for i in range(40))]
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=200_000, persist=False)
    plain = session.assemble_tools(many)
    frozen = session.assemble_tools(list(freeze_tools(many)))
    assert json.dumps(frozen, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert session.assemble_tools(frozen) == frozen  # idempotent, as with plain dicts
    messages = [{"role": "user", "content": "feed the lions"}]
    assert session.before_request(messages, tools=frozen) == messages
    payloads = [
        json.dumps(assemble_payload("system", messages, tools, provider="anthropic", model="m"), sort_keys=True)
        for tools in (plain, frozen)
    ]
    assert payloads[0] == payloads[1]
