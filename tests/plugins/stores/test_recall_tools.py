"""The model-facing recall tools: shapes, paging, redaction, bad input, when they are offered."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive.plugin import archive_of

from recall_support import TestEngines, history

SECRET = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h0"


def compacted(home: Path, *, session_id: str = "s1", turns: int = 12, **config: Any) -> Session:
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    session = Session.open(cwd=home, home=home, model="m", context_length=64_000, session_id=session_id,
                           host=host, config=load_config(data={"context": {"engine": "drophalf"}, **config}))
    session.compress(history(turns, facts={2: "FileNotFoundError: config/settings.yaml"}, secret_at=3, secret=SECRET))
    return session


def call(session: Session, name: str, **arguments: Any) -> dict[str, Any]:
    answer = session.handle_tool_call(name, json.dumps(arguments))
    assert isinstance(answer, str)
    return json.loads(answer)


def test_search_returns_ranked_hits_with_ref_role_tool_turn_and_snippet(tmp_path: Path) -> None:
    session = compacted(tmp_path)
    out = call(session, "context_search", query="FileNotFoundError settings.yaml")
    assert out["hits"][0] == {
        "ref": "m2.3", "role": "tool", "tool": "terminal", "turn": 2,
        "snippet": out["hits"][0]["snippet"],
    }
    assert "FileNotFoundError: config/settings.yaml" in out["hits"][0]["snippet"]
    assert len(out["hits"][0]["snippet"]) < 300
    assert len(call(session, "context_search", query="passed", limit=2)["hits"]) == 2


def test_expand_pages_a_huge_result_without_losing_a_character(tmp_path: Path) -> None:
    session = compacted(tmp_path, turns=12, tool_output={"max_bytes": 4_000})
    big = "".join(f"row {i}: {'é' * 7} value\n" for i in range(3_000))
    user = {"role": "user", "content": "x"}
    archive_of(session).record([user, {"role": "tool", "tool_call_id": "z", "content": big}], [user])
    ref = call(session, "context_search", query="row 2999")["hits"][0]["ref"]
    pieces, offset, pages = [], 0, 0
    while offset is not None:
        page = call(session, "context_expand", ref=ref, offset=offset)
        assert len(json.dumps(page, ensure_ascii=False).encode()) <= 4_000
        assert page["total_chars"] == len(big) and page["offset"] == offset
        pieces.append(page["text"])
        offset = page["next_offset"]
        pages += 1
    assert "".join(pieces) == big and pages > 10


def test_secrets_are_stored_masked_with_the_sessions_placeholder(tmp_path: Path) -> None:
    session = compacted(tmp_path)
    hit = call(session, "context_search", query="OPENAI_API_KEY")["hits"][0]
    placeholder = session.redactor.redact(SECRET)
    assert placeholder.startswith("sk-proj-[REDACTED:openai#")
    assert SECRET not in hit["snippet"] and "[REDACTED" in hit["snippet"]
    text = call(session, "context_expand", ref=hit["ref"])["text"]
    assert SECRET not in text and "OPENAI_API_KEY=[REDACTED:openai#" in text
    stored = archive_of(session).get(hit["ref"])["text"]
    assert SECRET not in stored and placeholder.removeprefix("sk-proj-") in stored
    assert archive_of(session).masked().get("openai", 0) >= 1
    assert any(w.kind == "secrets_masked_in_archive" for w in session.warnings)


def test_keep_secrets_stores_the_original_for_the_host(tmp_path: Path) -> None:
    session = compacted(tmp_path, archive={"keep_secrets": True})
    hit = call(session, "context_search", query="OPENAI_API_KEY")["hits"][0]
    assert SECRET not in call(session, "context_expand", ref=hit["ref"])["text"]  # the model: masked
    assert SECRET in archive_of(session).get(hit["ref"])["text"]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("context_expand", {"ref": "m99.1"}, "no archived message m99.1"),
        ("context_expand", {"ref": "banana"}, "not an archive reference"),
        ("context_expand", {}, "not an archive reference"),
        ("context_expand", {"ref": "m2.3", "offset": -4}, "must not be negative"),
        ("context_expand", {"ref": "m2.3", "offset": 10**9}, "past the end"),
        ("context_search", {"query": ""}, "empty"),
        ("context_search", {"query": '"*:'}, "empty"),
        ("context_search", {"query": 42}, "must be a string"),
        ("context_search", {"query": "x", "limit": "many"}, "limit must be an integer"),
    ],
)
def test_bad_input_is_a_clear_tool_error(tmp_path: Path, name: str, arguments: dict[str, Any], expected: str) -> None:
    session = compacted(tmp_path)
    out = call(session, name, **arguments)
    assert set(out) == {"error"} and expected in out["error"] and out["error"].startswith(name)


@pytest.mark.parametrize("query", ['"FileNotFoundError', "settings.yaml*", "config:settings"])
def test_fts_syntax_characters_search_as_text(tmp_path: Path, query: str) -> None:
    session = compacted(tmp_path)
    assert call(session, "context_search", query=query)["hits"][0]["ref"] == "m2.3"


def test_a_reference_from_another_session_is_not_found(tmp_path: Path) -> None:
    compacted(tmp_path, session_id="other", turns=30)
    mine = compacted(tmp_path, session_id="mine", turns=12)
    assert "m14.3" in archive_of(mine).store.archive_refs("other")
    out = call(mine, "context_expand", ref="m14.3")
    assert "no archived message m14.3 in this session" in out["error"]


def test_tools_are_offered_only_once_something_is_archived(tmp_path: Path) -> None:
    fresh = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="fresh")
    assert fresh.assemble_tools([]) == []
    session = compacted(tmp_path)
    names = [t["function"]["name"] for t in session.assemble_tools([])]
    assert names == ["context_search", "context_expand"]
    mcp = [{"type": "function", "source": "mcp-x", "function": {"name": f"x_{i}", "description": "d",
            "parameters": {"type": "object", "properties": {}}}} for i in range(40)]
    first = session.assemble_tools(mcp)
    again = session.assemble_tools(first)
    assert [t["function"]["name"] for t in again] == [t["function"]["name"] for t in first]
    assert {"context_search", "context_expand", "tool_search"} <= {t["function"]["name"] for t in first}


def test_the_per_turn_archive_check_never_waits_for_a_compaction_being_archived(tmp_path: Path) -> None:
    # Every assembly asks whether anything is archived; once the archive is loaded that is one
    # read of a count that only grows, so a turn never queues behind a compaction that holds
    # the archive's lock on another thread.
    session = compacted(tmp_path)
    assert archive_of(session).has_entries()
    answers: list[list[dict[str, Any]]] = []
    with archive_of(session)._lock:  # what record() holds while it archives
        worker = threading.Thread(target=lambda: answers.append(session.assemble_tools([])))
        worker.start()
        worker.join(timeout=5)
        answered_while_held = bool(answers)
    worker.join()
    assert answered_while_held
    assert [t["function"]["name"] for t in answers[0]] == ["context_search", "context_expand"]


def test_unknown_tools_are_not_answered(tmp_path: Path) -> None:
    session = compacted(tmp_path)
    with pytest.raises(KeyError):
        session.handle_tool_call("context_nope", {})
