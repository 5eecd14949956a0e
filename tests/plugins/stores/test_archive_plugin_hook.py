"""The archive is a plugin behind ``hermes_session_compacted``: blocked, compaction still runs
and fits with nothing archived and no recall tools; a third-party plugin can take its place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session, hookimpl
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.session_store import DB_NAME, SQLiteSessionStore

from recall_support import TestEngines, history

WINDOW = 64_000


def open_session(home: Path, *, blocked: tuple[str, ...] = (), extra: Any = (), **config: Any) -> Session:
    data = {"context": {"engine": "compressor"}, **config}
    loaded = load_config(data=data)
    host = PluginHost.create(blocked=blocked, config=loaded, plugins=[(TestEngines(), "test_engines")])
    for name, plugin in extra:
        host.register(plugin, name)
    return Session.open(cwd=home, home=home, model="m", context_length=WINDOW, session_id="s1",
                        host=host, config=loaded)


def tool_names(session: Session) -> set[str]:
    return {tool["function"]["name"] for tool in session.assemble_tools([])}


def archived_rows(home: Path) -> int:
    """What the session store on disk holds of the session's archive."""
    count: int = SQLiteSessionStore(home / DB_NAME).archive_stats("s1")["count"]
    return count


def test_the_builtin_archive_marks_replacements_and_offers_recall(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = history(40, tool_chars=3_000)
    out = session.compress(messages).messages
    assert len(out) < len(messages)
    assert any(m.get("_ref") for m in out)
    assert {"context_search", "context_expand"} <= tool_names(session)
    archive = archive_of(session)
    assert archive is not None and len(archive) > 0
    session.close()
    assert archived_rows(tmp_path) == len(archive)


@pytest.mark.parametrize("how", ["host", "config"])
def test_blocking_the_archive_keeps_compaction_and_writes_nothing(tmp_path: Path, how: str) -> None:
    if how == "host":
        session = open_session(tmp_path, blocked=("archive",))
    else:
        session = open_session(tmp_path, plugins={"disabled": ["archive"]})
    messages = history(40, tool_chars=3_000)
    result = session.compress(messages)
    out = result.messages
    assert len(out) < len(messages)  # compaction ran
    feedback = result.feedback
    assert feedback.before_tokens > WINDOW // 2 > feedback.after_tokens and not feedback.aborted  # and fits
    assert not any(m.get("_ref") or m.get("_refs") for m in out)
    assert not any("[ref " in str(m.get("content")) or "context_search" in str(m.get("content")) for m in out)
    assert archive_of(session) is None
    assert not {"context_search", "context_expand"} & tool_names(session)
    # No plugin answers the recall tools: the call goes to the host's own tools.
    assert session.handle_tool_call("context_search", {"query": "module_3"}, invoke=lambda *_: "host tool") == "host tool"
    session.close()
    assert archived_rows(tmp_path) == 0


class Replacement:
    """A third party's archive: keeps what left by identity, marks the first replacement."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str]] = []
        self.kept: list[dict[str, Any]] = []

    @hookimpl
    def hermes_session_compacted(self, session: Any, before: list[dict[str, Any]], after: list[dict[str, Any]],
                                 phase: str) -> list[dict[str, Any]]:
        self.calls.append((len(before), len(after), phase))
        ids = {id(m) for m in after}
        self.kept.extend(m for m in before if id(m) not in ids)
        out = list(after)
        out[0] = {**out[0], "_mine": len(self.kept)}
        return out


class Observer:
    def __init__(self) -> None:
        self.phases: list[str] = []

    @hookimpl
    def hermes_session_compacted(self, session: Any, before: Any, after: Any, phase: str) -> None:
        self.phases.append(phase)


def test_a_third_party_archive_answers_the_hook_in_place_of_the_builtin(tmp_path: Path) -> None:
    mine = Replacement()
    session = open_session(tmp_path, blocked=("archive",), extra=[("my_archive", mine)])
    messages = history(40, tool_chars=3_000)
    out = session.compress(messages).messages
    assert mine.calls and mine.calls[0] == (len(messages), mine.calls[0][1], "manual")
    assert out[0]["_mine"] == len(mine.kept) > 0
    assert all(m in messages for m in mine.kept)
    assert not any(m.get("_ref") for m in out)
    session.close()
    assert archived_rows(tmp_path) == 0


def test_the_first_answer_wins_and_an_observer_keeps_the_builtin(tmp_path: Path) -> None:
    mine, seen = Replacement(), Observer()
    session = open_session(tmp_path, extra=[("my_archive", mine), ("observer", seen)])
    out = session.compress(history(40, tool_chars=3_000)).messages
    assert "_mine" in out[0] and not any(m.get("_ref") for m in out)  # the replacement answered first
    assert seen.phases == ["manual"]

    observed = Observer()
    other = open_session(tmp_path / "b", extra=[("observer", observed)])
    out = other.compress(history(40, tool_chars=3_000)).messages
    assert observed.phases == ["manual"] and any(m.get("_ref") for m in out)  # None: the built-in answers


def test_session_close_closes_plugin_state_and_reports_a_failure(tmp_path: Path) -> None:
    closed: list[str] = []

    class Good:
        def close(self) -> None:
            closed.append("good")

    class Bad:
        def close(self) -> None:
            raise OSError("disk gone")

    session = open_session(tmp_path)
    session.plugin_state.update(good=Good(), bad=Bad(), plain=object())
    session.close()
    assert closed == ["good"]
    warnings = [w for w in session.warnings if w.kind == "plugin_state_close_failed"]
    assert len(warnings) == 1 and "'bad'" in warnings[0].message and "disk gone" in warnings[0].message
