"""The version-tag proof of a settled plain-dict catalog (``hermes_plugins.tools._dictver``).

A settled catalog of plain dicts is proven unchanged by reading each dict's version tag (PEP
509) instead of comparing every value against a structural copy. These tests hold it to the
same standard as the ``==`` proof it stands in for: every edit the copy would see is seen by
the tags, the same turn, through the public entry points; and without the extension the ``==``
proof runs alone.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hermes_plugins.tools import bm25
from hermes_plugins.tools.state import state_of
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session

dictver = bm25._dictver
needs_ext = pytest.mark.skipif(dictver is None, reason="the _dictver extension is not built here")


def tools(n: int) -> list[dict[str, Any]]:
    return [{"type": "function", "source": "mcp-github", "function": {
        "name": f"mcp_github_tool_{i}", "description": f"github operation number {i} on issues",
        "parameters": {"type": "object", "properties": {"repo": {"type": "string"}},
                       "required": ["repo"]}}} for i in range(n)]


@contextmanager
def without_extension() -> Iterator[None]:
    """The interpreter without ``_dictver`` (another version, no compiler): only ``==``."""
    saved = bm25._dictver
    bm25._dictver = None
    try:
        yield
    finally:
        bm25._dictver = saved


def test_the_extension_is_built_on_cpython_3_11() -> None:
    # setup.py builds it on CPython 3.11 (optional=True: a machine without a compiler goes on
    # without it). This machine and CI have one, so a missing module here is a broken build.
    if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11):
        assert dictver is not None, (
            "hermes_plugins.tools._dictver is not built: (re)run pip install -e . (setup.py builds it)")
    else:
        assert dictver is None


# --- the C functions on their own ----------------------------------------------------------

Edit = Callable[[list[dict[str, Any]]], None]

#: Every edit the structural copy's == sees, each by a different mutation path of dict/list.
SEEN: dict[str, Edit] = {
    "nested description": lambda d: d[1]["function"].__setitem__("description", "changed"),
    "properties key added": lambda d: d[2]["function"]["parameters"]["properties"].__setitem__(
        "owner", {"type": "string"}),
    "properties key popped": lambda d: d[2]["function"]["parameters"]["properties"].pop("repo", None),
    "required list replaced": lambda d: d[0]["function"]["parameters"].__setitem__("required", []),
    "function dict replaced by an equal one": lambda d: d[3].__setitem__(
        "function", copy.deepcopy(d[3]["function"])),
    "parameters replaced by an equal one": lambda d: d[3]["function"].__setitem__(
        "parameters", copy.deepcopy(d[3]["function"]["parameters"])),
    "clear and refill": lambda d: (lambda f, saved: (f.clear(), f.update(saved)))(
        d[1]["function"], dict(d[1]["function"])),
    "popitem and put back": lambda d: (lambda t: t.__setitem__(*t.popitem()))(d[4]),
    "setdefault of a new key": lambda d: d[0].setdefault("strict", True),
    "update with an equal copy": lambda d: d[0]["function"].update(
        {"description": "github operation number 0 on issues"}),
    "top-level key deleted": lambda d: d[2].pop("source", None),
    "definition replaced by an equal one": lambda d: d.__setitem__(1, copy.deepcopy(d[1])),
    "definition appended": lambda d: d.append(copy.deepcopy(d[0])),
    "definition removed": lambda d: d.pop(),
    "definitions swapped": lambda d: d.__setitem__(slice(0, 2), [d[1], d[0]]),
    "dict |= with an equal value": lambda d: d[2]["function"]["parameters"].__ior__(
        {"type": "".join(["obj", "ect"])}),
}


@needs_ext
@pytest.mark.parametrize("edit", sorted(SEEN))
def test_every_mutation_path_fails_the_tag_check(edit: str) -> None:
    defs = tools(6)
    record = dictver.record(defs)
    assert record is not None and dictver.same(defs, record)
    SEEN[edit](defs)
    assert not dictver.same(defs, record)


@needs_ext
def test_what_changes_nothing_keeps_the_record() -> None:
    defs = tools(4)
    record = dictver.record(defs)
    assert record is not None
    fn = defs[0]["function"]
    fn["description"] = fn["description"]  # the same object stored again: no mutation
    _ = [d.get("source") for d in defs], json.dumps(defs)  # reads
    assert dictver.same(defs, record)
    assert dictver.same(list(defs), record) and dictver.same(tuple(defs), record)  # items count


@needs_ext
def test_an_instance_dict_bumps_its_tag_through_the_specialised_attribute_store() -> None:
    # A host may hand out vars(obj); CPython 3.11 specialises `obj.x = v` (STORE_ATTR_WITH_HINT)
    # into a direct write into that dict, which must still bump the tag.
    class Holder:
        pass

    holder = Holder()
    for i in range(12):
        setattr(holder, f"a{i}", i)
    d = vars(holder)
    seen = set()
    for i in range(40):  # warm the specialisation up
        holder.a5 = i
        seen.add(dictver.tag(d))
    assert len(seen) == 40


@needs_ext
def test_shapes_the_tags_do_not_cover_give_no_record() -> None:
    class Odd(dict):  # type: ignore[type-arg]
        pass

    base = tools(2)
    assert dictver.record(base) is not None
    assert dictver.record(iter(base)) is None  # only an exact list or tuple
    assert dictver.record([Odd(base[0])]) is None  # a dict subclass at the top
    assert dictver.record([{"function": Odd(base[0]["function"])}]) is None
    assert dictver.record([{"function": {"parameters": [1]}}]) is None  # a mutable leaf on the path
    flat = {"name": "flat", "parameters": {"properties": {"p": {}}}}
    record = dictver.record([flat])
    assert record is not None and len(record[1]) == 3  # a flat definition is its own function
    flat["parameters"]["properties"]["q"] = {}
    assert not dictver.same([flat], record)


_OPS = st.lists(st.tuples(st.sampled_from(sorted(SEEN) + ["noop"] * 4), st.integers(0, 5)), max_size=6)


@needs_ext
@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_the_tags_hold_only_while_the_structural_copy_is_equal(ops: list[tuple[str, int]]) -> None:
    defs = tools(6)
    record = dictver.record(defs)
    frozen_copy = bm25._structural_copy(defs)
    assert record is not None
    edited = False
    for name, _ in ops:
        if name == "noop":
            defs[0]["type"] = defs[0]["type"]
            continue
        if name == "definition removed" and len(defs) <= 5:
            continue  # the edits index up to d[4]: keep five definitions
        SEEN[name](defs)
        edited = True
    # Sound: the tags never claim "unchanged" for a catalog the copy sees as different (an
    # edit that left everything equal, like a pop of a key already gone, may keep them);
    # untouched, they always hold.
    if dictver.same(defs, record):
        assert defs == frozen_copy
    elif not edited:
        pytest.fail("the tags failed on a catalog nobody edited")
    if defs != frozen_copy:
        assert not dictver.same(defs, record)


# --- through the public entry points ---------------------------------------------------------


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                        context_length=200_000, persist=False)


def settle(session: Session, defs: list[dict[str, Any]], turns: int = 4) -> bm25._Seen:
    for _ in range(turns):
        session.assemble_tools(defs)
    return state_of(session.host).seen[0]


def search(session: Session, defs: list[dict[str, Any]], query: str) -> dict[str, Any]:
    session.assemble_tools(defs)
    return json.loads(session.handle_tool_call("tool_search", {"queries": [query], "limit": 5}))  # type: ignore[no-any-return]


@needs_ext
def test_a_settled_plain_catalog_is_proven_by_its_tags_alone(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    defs = tools(30)
    entry = settle(session, defs)
    assert entry.tags is not None
    # White-box: spoil the structural copy and count the field-by-field reads. The tags never
    # look at the copy, so the turn is proven without reading anything.
    assert entry.copy is not None
    entry.copy = entry.copy.__class__([{}, *entry.copy[1:]])
    reads: list[int] = []
    real_read = bm25._read
    monkeypatch.setattr(bm25, "_read", lambda d: reads.append(len(d)) or real_read(d))
    state = state_of(session.host)
    assert bm25.settled_fingerprint(defs, state) is entry.print_ and not reads
    with without_extension():  # the == proof alone sees the spoiled copy: read again
        assert bm25.settled_fingerprint(defs, state) == entry.print_ and reads


@pytest.mark.parametrize("tags", [True, False], ids=["tags", "without-extension"])
@pytest.mark.parametrize("edit", [
    "nested description", "properties key added", "required list replaced",
    "function dict replaced by an equal one", "clear and refill", "definition appended",
])
def test_an_edit_to_a_settled_catalog_is_answered_the_same_turn(
    session: Session, edit: str, tags: bool
) -> None:
    if tags and dictver is None:
        pytest.skip("the _dictver extension is not built here")
    with (without_extension() if not tags else _nothing()):
        defs = tools(12)
        entry = settle(session, defs)
        assert (entry.tags is not None) == tags
        before = search(session, defs, "changed owner github operation number 1")
        SEEN[edit](defs)
        after = search(session, defs, "changed owner github operation number 1")
        fresh = Session.open(cwd=str(session.cwd), home=str(session.home), model="gpt-5",
                             provider="openai", context_length=200_000, persist=False,
                             host=type(session.host).create())
        assert after == search(fresh, copy.deepcopy(defs), "changed owner github operation number 1")
        if edit in {"nested description", "properties key added", "definition appended"}:
            assert after != before  # the query names what the edit added


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def test_a_required_list_edited_in_place_is_read_live(session: Session) -> None:
    # Neither proof covers the inside of `required` (nothing in it is indexed): the answer
    # reads it from the live definition, so an in-place edit shows the same turn.
    defs = tools(12)
    settle(session, defs)
    defs[7]["function"]["parameters"]["required"].append("owner")
    answer = search(session, defs, "github operation number 7")
    assert answer["tools"]["mcp_github_tool_7"]["required"] == ["repo", "owner"]


@needs_ext
def test_a_host_building_fresh_dicts_every_turn_records_at_most_once(session: Session) -> None:
    defs = tools(20)
    entry = settle(session, defs)
    records = entry.records
    for _ in range(6):
        defs = copy.deepcopy(defs)  # equal content, new objects: proven by == each turn
        assert "mcp_github_tool_3" in json.dumps(search(session, defs, "github operation number 3"))
    assert state_of(session.host).seen[0] is entry and entry.records == records
    settle(session, defs, turns=3)  # the host keeps these objects from now on
    assert entry.records == records + 1 and dictver.same(defs, entry.tags)


@needs_ext
def test_a_host_bumping_a_dict_every_turn_stops_recording(session: Session) -> None:
    defs = tools(20)
    entry = settle(session, defs)
    for i in range(3 * bm25._RECORDS_MAX):
        defs[0]["function"]["description"] = "".join(["github operation number 0 on ", "issues"])
        assert search(session, defs, f"github operation number {i % 20}")["total_available"] == 20
    assert entry.records == bm25._RECORDS_MAX


@needs_ext
def test_a_mutation_during_the_record_leaves_a_tag_that_fails() -> None:
    # Each dict's tag is read before anything is read out of it: a key whose __eq__ runs
    # Python code during the record's lookup (here it edits the very dict being looked into)
    # leaves the older tag recorded, so the record can never vouch for the edited state.
    top: dict[Any, Any] = {}

    class Meddler:
        armed = fired = False

        def __hash__(self) -> int:
            return hash("parameters")  # probed by the lookup of "parameters"

        def __eq__(self, other: object) -> bool:
            if Meddler.armed and not Meddler.fired:
                Meddler.fired = True
                top["description"] = "edited while being recorded"
            return False

    top[Meddler()] = 1  # first in the probe sequence of "parameters"
    top.update({"name": "flat_tool", "description": "before",
                "parameters": {"type": "object", "properties": {"p": {}}}})
    Meddler.armed = True
    record = dictver.record([top])
    assert Meddler.fired and record is not None
    assert not dictver.same([top], record)


@needs_ext
def test_a_hand_made_record_of_other_objects_proves_nothing() -> None:
    defs = tools(2)
    assert not dictver.same(defs, (tuple(defs), ([1, 2],), bytes(8)))
    with pytest.raises(TypeError):
        dictver.same(defs, (tuple(defs), (defs[0],), b"short"))
