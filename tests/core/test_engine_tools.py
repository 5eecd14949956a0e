"""An engine's own tools (``ContextEngine.get_tool_schemas``) are offered with the turn's tools and
their calls reach ``ContextEngine.handle_tool_call`` (spec: upstream-compression-tools §2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core import Session
from hermes_core.engine import ContextEngine
from hermes_core.hookspecs import hookimpl
from hermes_core.host import PluginHost

PEEK = {"type": "function", "function": {"name": "context_peek", "description": "Show the window use.",
                                        "parameters": {"type": "object", "properties": {}}}}


class Peeking(ContextEngine):
    name = "peeking"

    def compress(self, messages: Any, current_tokens: Any = None, focus_topic: Any = None, force: bool = False) -> Any:
        return messages

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [PEEK]

    def handle_tool_call(self, name: str, args: Any, **kwargs: Any) -> str:
        return json.dumps({"tool": name, "args": dict(args), "context_length": self.context_length})


class Plugin:
    @hookimpl
    def hermes_context_engines(self) -> dict[str, Any]:
        return {"peeking": Peeking}


def _session(tmp_path: Path, engine: str = "peeking") -> Session:
    (tmp_path / "config.yaml").write_text(f"context:\n  engine: {engine}\n", encoding="utf-8")
    host = PluginHost.create(plugins=[(Plugin(), "peeking_plugin")])
    return Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=64_000, persist=False, env={},
                        host=host)


def test_the_engine_tools_come_last_and_their_calls_reach_the_engine(tmp_path: Path) -> None:
    session = _session(tmp_path)
    mine = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
    tools = session.assemble_tools([mine])
    names = [t["function"]["name"] for t in tools]
    assert names[0] == "read_file" and names[-1] == "context_peek"
    assert json.loads(session.handle_tool_call("context_peek", '{"x": 1}')) == {
        "tool": "context_peek", "args": {"x": 1}, "context_length": 64_000}


def test_a_host_tool_of_the_same_name_wins(tmp_path: Path) -> None:
    session = _session(tmp_path)
    own = {"type": "function", "function": {"name": "context_peek", "description": "the host's own"}}
    tools = session.assemble_tools([own])
    assert [t["function"].get("description") for t in tools] == ["the host's own"]
    answered = session.handle_tool_call("context_peek", {}, invoke=lambda name, args: "the host ran it")
    assert answered == "the host ran it"


def test_the_default_engine_adds_no_tool(tmp_path: Path) -> None:
    session = _session(tmp_path, engine="compressor")
    mine = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
    assert [t["function"]["name"] for t in session.assemble_tools([mine])] == ["read_file"]
