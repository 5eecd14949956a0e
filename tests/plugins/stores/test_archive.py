"""The Session's archive: the diff of one compaction, references, replacements, resume."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive import diff as archive_diff
from hermes_plugins.archive import search as archive_search
from hermes_plugins.archive.batch import ArchivedBatch
from hermes_plugins.archive.diff import kept_positions, replacement_map
from hermes_plugins.archive.memory_store import MemoryArchiveStore
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.archive.search import identifier_parts, message_text
from hermes_plugins.archive.session_archive import SessionArchive

from hypothesis_budget import examples
from locations import SUPPORT
from recall_support import TestEngines, history


def open_session(home: Path, engine: str = "drophalf", session_id: str = "s1", **config: Any) -> Session:
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    data = {"context": {"engine": engine}, **config}
    return Session.open(
        cwd=home, home=home, model="m", context_length=64_000, session_id=session_id,
        host=host, config=load_config(data=data),
    )


def test_identity_diff_finds_what_left_and_what_was_rewritten() -> None:
    a, b, c, d = ({"role": "user", "content": x} for x in "abcd")
    b2 = {"role": "user", "content": "b (short)"}
    kept = kept_positions([a, b, c, d], [a, b2, d])
    assert kept == [0, -1, -1, 2]
    assert replacement_map([a, b, c, d], [a, b2, d], kept) == {1: 1, 2: 1}


def test_copying_engine_is_diffed_by_content_not_identity() -> None:
    before = [{"role": "user", "content": f"m{i}"} for i in range(10)]
    after = [dict(m) for m in before[:3]] + [{"role": "user", "content": "note"}] + [dict(m) for m in before[7:]]
    kept = kept_positions(before, after)
    assert [i for i, p in enumerate(kept) if p < 0] == [3, 4, 5, 6]
    assert set(replacement_map(before, after, kept).values()) == {3}


def test_demoted_tool_results_map_to_their_own_replacement_by_call_id() -> None:
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "x"}, {"id": "y"}]}
    rx = {"role": "tool", "tool_call_id": "x", "content": "long x"}
    ry = {"role": "tool", "tool_call_id": "y", "content": "long y"}
    extra = {"role": "assistant", "content": "chatter"}
    sx = {"role": "tool", "tool_call_id": "x", "content": "[x]"}
    sy = {"role": "tool", "tool_call_id": "y", "content": "[y]"}
    before, after = [call, rx, ry, extra], [call, sx, sy]
    mapping = replacement_map(before, after, kept_positions(before, after))
    assert mapping[1] == 1 and mapping[2] == 2


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 3))
def test_every_message_that_left_is_archived_once_with_a_unique_ref(drop: list[bool], inserts: int) -> None:
    before = [{"role": "user" if i % 3 == 0 else "assistant", "content": f"message {i}"} for i in range(len(drop))]
    after = [m for m, d in zip(before, drop) if not d]
    for k in range(inserts):
        after.insert(min(k * 2, len(after)), {"role": "user", "content": f"replacement {k}"})
    store = MemoryArchiveStore()
    archive = SessionArchive(session_id="s", store=store)
    archive.persistent = True
    out = archive.record(before, after)
    store.archive_flush()  # the batch is stored at the first read
    rows = list(store._rows.get("s", {}).values())
    assert sorted(r["text"] for r in rows) == sorted(m["content"] for m, d in zip(before, drop) if d)
    assert len({r["ref"] for r in rows}) == len(rows)
    # the engine's list and dicts are untouched; kept messages stay the same objects
    assert all("_ref" not in m for m in after)
    originals = {id(m) for m in before}
    assert len(out) == len(after)
    assert all(o is a for o, a in zip(out, after) if id(a) in originals)


def test_compaction_archives_originals_with_role_tool_call_id_and_turn(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = history(12)
    result = session.compress(messages)
    assert len(result.messages) < len(messages)
    archive = archive_of(session)
    assert len(archive) == len(messages) - len(result.messages)
    tool = archive.get("m2.3")
    assert tool["role"] == "tool" and tool["tool"] == "terminal" and tool["call_id"] == "call_2"
    assert tool["text"] == messages[7]["content"] and tool["turn"] == 2
    assert archive.message("m2.2") == messages[6]  # the assistant call comes back whole
    assert messages == history(12)  # the caller's list was never touched


def test_replacements_carry_refs_and_summaries_the_tools_sentence(tmp_path: Path) -> None:
    session = open_session(tmp_path, engine="compressor")
    messages = history(40, tool_chars=3_000)
    out = session.compress(messages).messages
    marked = [m for m in out if m.get("_ref")]
    assert marked, "no replacement carries a reference"
    for m in marked:
        refs = m.get("_refs") or (m["_ref"],)
        for ref in refs:
            assert archive_of(session).get(ref)["text"]
        if len(refs) == 1 and m["role"] != "system":
            assert f"[ref {refs[0]}]" in m["content"]
    summary = [m for m in out if len(m.get("_refs") or ()) > 1]
    assert summary and "context_search" in summary[0]["content"]


def test_no_tools_sentence_when_the_recall_tools_are_blocked(tmp_path: Path) -> None:
    host = PluginHost.create(blocked=("recall",))
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=64_000, host=host,
                           session_id="s1")
    out = session.compress(history(40, tool_chars=3_000)).messages
    assert any(m.get("_refs") for m in out)
    assert not any("context_search" in message_text(m) for m in out)


def test_a_second_compaction_does_not_archive_replacements_again(tmp_path: Path) -> None:
    session = open_session(tmp_path, engine="compressor")
    first = session.compress(history(40, tool_chars=3_000)).messages
    count = len(archive_of(session))
    more = first + history(30, tool_chars=3_000)[1:]
    second = session.compress(more).messages
    rows = archive_of(session).store.archive_sessions()[0]["count"] if archive_of(session).persistent else len(archive_of(session))
    assert rows == len(archive_of(session)) > count
    texts = [archive_of(session).get(r)["text"] for m in second for r in (m.get("_refs") or ())]
    assert not any(t.startswith("[terminal]") for t in texts)  # no one-liner archived as original
    refs = [r for m in second for r in (m.get("_refs") or ((m["_ref"],) if m.get("_ref") else ()))]
    assert len(refs) == len(set(refs))


def test_unchanged_output_archives_nothing(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = history(1)[:4]
    assert session.compress(messages).messages is messages
    assert len(archive_of(session)) == 0


def test_archive_disabled_keeps_nothing(tmp_path: Path) -> None:
    session = open_session(tmp_path, archive={"enabled": False})
    out = session.compress(history(12)).messages
    assert len(archive_of(session)) == 0 and not any(m.get("_ref") for m in out)
    assert "context_search" not in [t["function"]["name"] for t in session.assemble_tools([])]


def test_a_session_without_a_store_archives_in_memory(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", persist=False)
    session._loop.run_engine  # noqa: B018 - the loop exists
    archive = archive_of(session)
    assert not archive.persistent
    out = archive.record(history(3), history(3)[:1] + history(3)[9:])
    assert len(archive) == 8 and out[0]["content"] == "You are a coding agent."


_CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {tests!r})
    from recall_support import TestEngines, history
    from hermes_core import Session
    from hermes_core.config import load_config
    from hermes_core.host import PluginHost
    from hermes_plugins.archive.plugin import archive_of
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    session = Session.open(cwd={home!r}, home={home!r}, model="m", session_id=sys.argv[1], host=host,
                           config=load_config(data={{"context": {{"engine": "drophalf"}}}}))
    if sys.argv[2] == "compact":
        messages = history(int(sys.argv[3]))
        session.compress(messages)
        session.close()
        print(len(archive_of(session)))
    else:
        print(json.dumps(session.handle_tool_call("context_expand", {{"ref": sys.argv[3]}})))
    """
)


def _child(home: Path, *args: str) -> subprocess.Popen[str]:
    code = _CHILD.format(tests=str(SUPPORT), home=str(home))
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env)


def test_two_processes_compact_different_sessions_in_one_store_and_lose_nothing(tmp_path: Path) -> None:
    procs = [_child(tmp_path, f"proc{i}", "compact", "200") for i in range(2)]
    counts = [int(p.communicate(timeout=120)[0].strip()) for p in procs]
    assert all(p.returncode == 0 for p in procs) and counts[0] == counts[1] > 300
    # a new process with the same session id finds the archive
    reader = _child(tmp_path, "proc1", "expand", "m7.3")
    answer = json.loads(json.loads(reader.communicate(timeout=60)[0]))
    assert answer["ref"] == "m7.3" and answer["text"] == history(7)[-2]["content"]
    session = open_session(tmp_path, session_id="proc0")
    assert len(archive_of(session)) == counts[0]
    assert {r["session_id"]: r["count"] for r in archive_of(session).store.archive_sessions()} == {
        "proc0": counts[0], "proc1": counts[1]}


def test_resume_continues_references_without_reusing_one(tmp_path: Path) -> None:
    first = open_session(tmp_path, session_id="same")
    first.compress(history(20))
    first.close()
    refs_before = archive_of(first).store.archive_refs("same")
    again = open_session(tmp_path, session_id="same")
    again.compress(history(20))
    refs_after = archive_of(again).store.archive_refs("same")
    assert refs_before < refs_after
    assert len(archive_of(again)) == len(refs_after)


@pytest.mark.parametrize("engine", ["compressor", "window", "drophalf", "copying"])
def test_every_engine_gets_an_archive_without_code_of_its_own(tmp_path: Path, engine: str) -> None:
    session = open_session(tmp_path, engine=engine)
    messages = history(60, tool_chars=2_000)
    out = session.compress(messages).messages
    if out is messages:
        pytest.skip(f"{engine} found nothing to compress")
    kept = {id(m) for m in out}
    assert len(archive_of(session)) >= sum(1 for m in messages if id(m) not in kept) - len(out)


class _BrokenStore:
    """A store whose archive writes fail (a lost connection) until ``refuse`` is cleared."""

    def __init__(self) -> None:
        self.refuse = True
        self.written: list[Any] = []

    def get_prompt(self, session_id: str) -> None:
        return None

    def put_prompt(self, *args: Any, **kwargs: Any) -> None:
        return None

    def archive_put(self, session_id: str, records: Any) -> None:
        if self.refuse:
            raise ConnectionError("connection refused")
        self.written.append(records)

    def archive_get(self, session_id: str, ref: str) -> None:
        return None

    def archive_search(self, *args: Any) -> list[Any]:
        return []

    def archive_refs(self, session_id: str) -> set[str]:
        return set()

    def archive_stats(self, session_id: str) -> dict[str, Any]:
        return {}


def test_a_failed_archive_write_keeps_the_compaction_and_holds_the_batch_in_memory(tmp_path: Path) -> None:
    # The request's fit outranks the store (issue 32): the compaction stands, what it removed
    # is held in memory (recall finds it in this process) and written when the store is back.
    session = open_session(tmp_path)
    broken = _BrokenStore()
    session.store = broken
    messages = history(12)
    result = session.compress(messages)
    assert len(result.messages) < len(messages)
    warnings = [w for w in session.warnings if w.kind == "archive_write_deferred"]
    assert len(warnings) == 1 and "connection refused" in warnings[0].message
    assert archive_of(session).held == 1
    hits = archive_of(session).search("module_1")  # from memory, while the store refuses
    assert hits and archive_of(session).get(hits[0]["ref"])["text"] == hits[0]["text"]
    broken.refuse = False
    archive_of(session).flush()  # the store answers again: the held batch is written
    assert archive_of(session).held == 0 and broken.written


_CAMEL_WORD = re.compile(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _parts_by_regex(text: str) -> str:
    """The definition identifier_parts implements without regular expressions (the oracle)."""
    words = dict.fromkeys(_CAMEL_WORD.findall(text))
    return " ".join(" ".join(_CAMEL_PART.findall(word)) for word in words)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.sampled_from(["KeyError", "parseHTTPResponse", "getX", "aB", "URLPath", "snake_case",
                                 "src/app/MainView.py", "é", "ÉtéFoo", "\ud800", "中文", "x1Y", " ", "_",
                                 "\n", "lower", "UPPER", "zZzZ", "a", "B"]), max_size=30)
       | st.text(max_size=60))
def test_identifier_parts_equals_the_regex_definition(pieces: Any) -> None:
    text = pieces if isinstance(pieces, str) else "".join(pieces)
    assert identifier_parts(text) == _parts_by_regex(text)


def test_the_in_memory_index_tokenises_at_the_first_search_not_at_the_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = archive_search.identifier_parts
    monkeypatch.setattr(archive_search, "identifier_parts", lambda text: calls.append(text) or real(text))
    store = MemoryArchiveStore()
    store.archive_put("s", [{"ref": f"m1.{i}", "text": f"HttpError number {i}", "extra": None} for i in range(50)])
    assert calls == []  # archiving costs the session no tokenising
    hits = store.archive_search("s", "Error 7", 5)
    assert [h["ref"] for h in hits] == ["m1.7"] and len(calls) == 50
    store.archive_search("s", "number", 5)
    assert len(calls) == 50  # indexed once


_SHAPES = [
    {"role": "user", "content": "plain question"},
    {"role": "tool", "tool_call_id": "call_7", "content": "plain result"},
    {"role": "tool", "tool_call_id": "", "content": "result with an empty call id"},
    {"role": "tool", "tool_call_id": "call_8", "name": "terminal", "content": "result with a name"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                          "function": {"name": "read", "arguments": "{}"}}]},
    {"role": "user", "content": [{"type": "text", "text": "parts"}, {"type": "image_url", "image_url": {"url": "x"}}]},
    {"role": "assistant", "content": "thinking kept", "_reasoning": "because"},
    {"role": "user", "content": None},
]


@pytest.mark.parametrize("persist", [True, False], ids=["sqlite", "memory"])
def test_the_host_gets_every_archived_message_back_exactly(tmp_path: Path, persist: bool) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="shapes", persist=persist)
    before = [{"role": "system", "content": "sys"}, *(dict(m) for m in _SHAPES)]
    archive_of(session).record(before, [before[0], {"role": "user", "content": "summary"}])
    rows = sorted((archive_of(session).get(ref) for ref in archive_of(session).store.archive_refs("shapes")),
                  key=lambda row: row["position"])
    assert [archive_of(session).message(row["ref"]) for row in rows] == _SHAPES
    session.close()


# --- the request path hands over references; the records are built at the first read ---------


def _oracle(before: list[dict[str, Any]], kept: list[int], mapping: dict[int, int], used: set[str],
            offset: int) -> tuple[list[str], dict[int, list[str]]]:
    """The naming rule one message at a time: ``m<turn>.<n>``, n the place in the user turn,
    bumped past a reference taken already; replacements from earlier compactions pass theirs on."""
    used = set(used)
    refs: list[str] = []
    refs_for: dict[int, list[str]] = {}
    turn, n = offset, 0
    for j, message in enumerate(before):
        if archive_diff._is_turn_start(message):
            turn, n = turn + 1, 0
        n += 1
        if kept[j] >= 0:
            continue
        target = mapping.get(j, -1)
        if message.get("_ref"):
            if target >= 0:
                refs_for.setdefault(target, []).extend(message.get("_refs") or (message["_ref"],))
            continue
        bump, ref = n, f"m{turn}.{n}"
        while ref in used:
            bump += 1
            ref = f"m{turn}.{bump}"
        used.add(ref)
        refs.append(ref)
        if target >= 0:
            refs_for.setdefault(target, []).append(ref)
    return refs, refs_for


_ROLES = st.sampled_from(["user", "assistant", "tool", "user-injected"])


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.lists(_ROLES, min_size=1, max_size=30), st.lists(st.booleans(), max_size=30),
                          st.integers(0, 3)), min_size=1, max_size=4),
       st.booleans())
def test_references_and_replacements_match_the_one_message_at_a_time_rule(
    compactions: list[tuple[list[str], list[bool], int]], resume: bool
) -> None:
    store = MemoryArchiveStore()
    archive = SessionArchive(session_id="s", store=store)
    archive.persistent = True
    context: list[dict[str, Any]] = []
    counter = 0
    for roles, drops, inserts in compactions:
        for role in roles:
            counter += 1
            message: dict[str, Any] = {"role": role.split("-")[0], "content": f"text {counter}"}
            if role == "user-injected":
                message["_summary"] = "hermes-core"
            context.append(message)
        before = list(context)
        after = [m for i, m in enumerate(before) if not (drops[i] if i < len(drops) else False)]
        for k in range(inserts):
            counter += 1
            after.insert(min(k * 3, len(after)), {"role": "assistant", "content": f"summary {counter}"})
        if resume:
            archive = SessionArchive(session_id="s", store=store)
            archive.persistent = True
        archive._load()
        kept = kept_positions(before, after)
        mapping = replacement_map(before, after, kept)
        want_refs, want_for = _oracle(before, kept, mapping, set(archive._taken()), archive._turn_offset or 0)
        out = archive.record(before, after)
        if all(p >= 0 for p in kept) and len(after) == len(before):
            continue
        store.archive_flush()
        rows = sorted(store._rows.get("s", {}).values(), key=lambda r: r["seq"])
        assert [r["ref"] for r in rows][len(rows) - len(want_refs):] == want_refs
        got_for = {i: list(m.get("_refs") or (m["_ref"],)) for i, m in enumerate(out) if m is not after[i]}
        assert got_for == {i: list(dict.fromkeys(refs)) for i, refs in want_for.items()}
        by_ref = {r["ref"]: r for r in rows}
        for j, ref in zip([j for j, p in enumerate(kept) if p < 0 and not before[j].get("_ref")], want_refs):
            assert by_ref[ref]["text"] == before[j]["content"] and by_ref[ref]["position"] == j
        context = out


@pytest.mark.parametrize("persist", [True, False], ids=["sqlite", "memory"])
def test_a_host_rewriting_a_removed_message_later_does_not_change_its_archived_text(
    tmp_path: Path, persist: bool
) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="reuse", persist=persist)
    before = [{"role": "system", "content": "sys"}, *(dict(m) for m in _SHAPES)]
    want = [dict(m) for m in _SHAPES]
    archive_of(session).record(before, [before[0], {"role": "user", "content": "summary"}])
    for m in before[1:]:  # a host that reuses its dicts: shortens what it no longer sends
        m["content"] = "(rewritten by the host)"
    rows = sorted((archive_of(session).get(ref) for ref in archive_of(session).store.archive_refs("reuse")),
                  key=lambda row: row["position"])
    assert [archive_of(session).message(row["ref"]) for row in rows] == want
    session.close()


def test_the_records_of_a_compaction_are_built_at_the_first_read_not_on_the_request_path() -> None:
    before = [{"role": "user", "content": f"question {i}"} if i % 2 == 0 else
              {"role": "assistant", "content": f"answer {i}"} for i in range(20)]
    after = [{"role": "assistant", "content": "summary"}, *before[-4:]]
    store = MemoryArchiveStore()
    archive = SessionArchive(session_id="s", store=store)
    archive.persistent = True
    archive.record(before, after)
    (_sid, batch, _now), = store._pending
    assert isinstance(batch, ArchivedBatch) and batch._built is None
    assert len(archive) == 16  # counted without building a record
    hits = archive.search("question 6")
    assert batch._built is not None and hits and hits[0]["text"] == "question 6"
    assert [r["ref"] for r in batch] == [f"m{i // 2 + 1}.{i % 2 + 1}" for i in range(16)]


# --- the batch's columns: what the stores write, against the one-message-at-a-time record -----

_CALL = st.fixed_dictionaries({"id": st.sampled_from(["c1", "c2", "c3", ""]), "type": st.just("function"),
                               "function": st.fixed_dictionaries({"name": st.sampled_from(["read", "terminal"]),
                                                                  "arguments": st.sampled_from(["{}", '{"a": 1}'])})})
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "", None, 3])},
    optional={
        "content": st.one_of(st.text(max_size=8), st.none(), st.just([{"type": "text", "text": "part"}])),
        "tool_call_id": st.sampled_from(["c1", "c2", "", None, 7]),
        "tool_calls": st.lists(_CALL, max_size=2),
        "name": st.sampled_from(["grep", ""]),
        "_reasoning": st.just("why"),
    },
)


def _record_of(message: dict[str, Any], context: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The entry columns of one archived message, read one message at a time (the definition)."""
    names: dict[str, str] = {}
    for m in context:
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for call in m["tool_calls"]:
                if isinstance(call.get("id"), str):
                    names[call["id"]] = call["function"]["name"]
    role = message.get("role") or ""
    call_id = message.get("tool_call_id") or ""
    tool = message.get("name") or ""
    if role == "tool" and not tool and call_id:
        tool = names.get(call_id, "")
    extra = archive_diff._extra_of(message)
    return (str(role), str(tool), str(call_id), message_text(message), None if extra is None else dict(extra))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=12), st.sets(st.integers(1, 12), min_size=1))
@example(  # an id-less call: "" is every other message's call id, it must name none of them
    messages=[{"role": "user", "content": ""},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}},
                  {"id": "", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}],
    drawn={1, 2},
)
def test_the_batch_columns_equal_each_message_read_on_its_own(messages: list[dict[str, Any]], drawn: set[int]) -> None:
    before = [{"role": "system", "content": "sys"}, *messages]
    gone = sorted(j for j in drawn if j <= len(messages)) or [1]
    after = [m for j, m in enumerate(before) if j not in gone]
    store = MemoryArchiveStore()
    archive = SessionArchive(session_id="s", store=store)
    archive.record(before, after)
    (_sid, batch, _now), = store._pending
    columns = batch.columns()
    got = list(zip(columns["role"], columns["tool"], columns["call_id"], columns["text"],
                   [None if e is None else dict(e) for e in columns["extra"]], strict=True))
    assert got == [_record_of(before[j], before) for j in gone]
    assert list(columns["position"]) == gone and list(columns["ref"]) == batch.refs
    records = batch.records()  # the record dicts hold the same, each extra a dict of its own
    assert [(r["role"], r["tool"], r["call_id"], r["text"], r["extra"]) for r in records] == got
    assert all(r["extra"] is None or all(r["extra"] is not m for m in before) for r in records)


def test_the_sqlite_store_writes_a_batch_from_its_columns_without_a_dict_per_entry(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="cols")
    before = [{"role": "system", "content": "sys"}, *(dict(m) for m in _SHAPES)]
    batches: list[Any] = []
    put = archive_of(session).store.archive_put

    def spy(session_id: str, records: Any) -> None:
        batches.append(records)
        put(session_id, records)

    archive_of(session).store.archive_put = spy
    archive_of(session).record(before, [before[0], {"role": "user", "content": "summary"}])
    archive_of(session).flush()
    (batch,) = batches
    assert isinstance(batch, ArchivedBatch) and batch._built is None
    assert [archive_of(session).message(ref) for ref in batch.refs] == _SHAPES
    assert archive_of(session).search("result with a name")[0]["tool"] == "terminal"
    session.close()


_CALL_IDS = st.sampled_from(["c1", "c2", "c3", "", None, 7, ("t",)])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), _CALL_IDS), min_size=1, max_size=40),
       st.lists(st.booleans(), max_size=40), st.lists(st.tuples(st.integers(0, 40), _CALL_IDS), max_size=6))
def test_replacement_runs_read_call_ids_by_position_as_from_the_messages(
    shapes: list[tuple[str, Any]], keep: list[bool], new: list[tuple[int, Any]]
) -> None:
    # Tool results with reused, empty, odd and unhashable call ids; the engine's output keeps
    # some, and new messages (results among them: demoted copies) stand for the rest.
    before: list[dict[str, Any]] = []
    for i, (role, cid) in enumerate(shapes):
        message: dict[str, Any] = {"role": role, "content": f"m{i}" * (i % 5 + 1)}
        if role == "tool":
            message["tool_call_id"] = cid
        before.append(message)
    after = [m for i, m in enumerate(before) if i < len(keep) and keep[i]]
    for at, cid in new:
        after.insert(min(at, len(after)), {"role": "tool", "tool_call_id": cid, "content": "one-liner"}
                     if cid is not None else {"role": "user", "content": "a summary " * 3})
    kept = kept_positions(before, after)
    plain = archive_diff.replacement_runs(before, after, kept)
    as_list = [m.get("tool_call_id") if m["role"] == "tool" else None for m in before]
    by_position = {j: m.get("tool_call_id") for j, m in enumerate(before) if m["role"] == "tool"}
    assert archive_diff.replacement_runs(before, after, kept, as_list) == plain
    assert archive_diff.replacement_runs(before, after, kept, by_position) == plain


def test_a_batch_the_store_refused_is_written_first_when_it_answers_again() -> None:
    class FlakyStore(MemoryArchiveStore):
        failures = 1

        def archive_put(self, session_id: str, records: Any) -> None:
            if self.failures:
                self.failures -= 1
                raise ConnectionError("connection refused")
            super().archive_put(session_id, records)

    before = [{"role": "system", "content": "sys"}, *history(6)]
    after = [before[0], {"role": "user", "content": "a summary"}, *before[-2:]]
    flaky, fresh = FlakyStore(), MemoryArchiveStore()
    archive = SessionArchive(session_id="s", store=flaky)
    archive.persistent = True
    reference = SessionArchive(session_id="s", store=fresh)
    reference.persistent = True
    first = archive.record(before, after)
    assert first == reference.record(before, after)  # the compaction stands, same references
    assert archive.held == 1 and not flaky.archive_refs("s")
    archive.flush()  # the store answers now: the held batch goes first
    assert archive.held == 0
    assert sorted(flaky.archive_refs("s")) == sorted(fresh.archive_refs("s"))
