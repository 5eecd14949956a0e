"""Within a turn, the tool_search answered through the Session reuses the split (and search
fingerprint) the assembly computed: the catalog is compared once per turn, not twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hermes_plugins.tools import bm25, catalog

from hermes_core import Session


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
    bm25.clear_caches()
    fresh = Session.open(cwd=str(session.cwd), home=str(session.home), model="gpt-5",
                         provider="openai", context_length=200_000, persist=False)
    fresh.tool_catalog  # noqa: B018 - nothing assembled yet on this one
    fresh._tool_catalog = defs  # a catalog known without this turn's split
    assert fresh.handle_tool_call("tool_search", {"queries": ["github issues 12"]}) == reused
