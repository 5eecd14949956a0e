"""Integration paths the rest of the suite never reached: the LangChain middleware on an
already-open session and in an async agent run (bridge tool calls, an unknown tool, a raising
stream writer), and the Agents SDK session's content parts, trailing items and dropped
reasoning items."""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from openai.types.responses import ResponseInputFile  # noqa: E402

from hermes_core import Session  # noqa: E402
from hermes_core.compaction_feedback import CompactionEvent  # noqa: E402
from hermes_core.integrations import langchain as lc  # noqa: E402
from hermes_core.integrations.langchain import HermesMiddleware  # noqa: E402
from hermes_core.integrations.openai_agents import HermesAgentsSession, items_to_messages  # noqa: E402

# --- LangChain ------------------------------------------------------------------------------


class ToolFakeModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, accepting tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\nvalue = 1\n"


@tool
def create_issue(title: str) -> str:
    """Open a GitHub issue."""
    return json.dumps({"created": title})


create_issue.metadata = {"source": "mcp-github"}


def _session(tmp_path: Path, **kwargs: Any) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, model="gpt-5", provider="openai", persist=False,
                        env={}, **kwargs)


def test_an_open_session_keeps_its_own_status_callback_after_the_middlewares(tmp_path: Path) -> None:
    heard: list[str] = []
    session = _session(tmp_path, on_status=lambda e: heard.append(e.kind))
    with pytest.raises(TypeError, match="not both"):
        HermesMiddleware(session, model="other")
    middleware = HermesMiddleware(session)
    session._loop.on_status(CompactionEvent(kind="compacted", phase="preflight", message="m"))  # what the loop calls
    assert heard == ["compacted"]
    assert [e.kind for e in middleware._events] == ["compacted"]


def test_a_raising_stream_writer_or_none_loses_only_the_status_events(tmp_path: Path) -> None:
    middleware = HermesMiddleware(_session(tmp_path))
    state = {"messages": [HumanMessage("hi")]}

    def raising(chunk: Any) -> None:
        raise RuntimeError("no streaming run")

    for runtime in (types.SimpleNamespace(stream_writer=raising), None):
        middleware._status(CompactionEvent(kind="compacted", phase="preflight", message="m"))
        assert middleware.before_model(state, runtime) is None
        assert middleware._events == []
    # an answer without usage: nothing to judge
    assert middleware.after_model({"messages": [HumanMessage("hi"), AIMessage("hello")]}, None) is None


def test_tool_names_of_plain_objects() -> None:
    assert lc._tool_name(types.SimpleNamespace(name="custom")) == "custom"
    assert lc._tool_name(object()) == ""


def test_an_async_agent_run_through_the_middleware(tmp_path: Path) -> None:
    replies = [
        AIMessage(content="", tool_calls=[{"name": "tool_search", "args": {"queries": ["github issue"]}, "id": "c1"}]),
        AIMessage(content="", tool_calls=[{"name": "tool_call", "id": "c2",
                                           "args": {"calls": [{"name": "no_such_tool", "arguments": {}}]}}]),
        AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "c3"}]),
        AIMessage(content="", tool_calls=[{"name": "tool_call", "id": "c4",
                                           "args": {"calls": [{"name": "create_issue", "arguments": {"title": "T"}}]}}]),
        AIMessage(content="Done."),
    ]
    middleware = HermesMiddleware(cwd=tmp_path, home=tmp_path, model="gpt-5", provider="openai",
                                  persist=False, env={})
    agent = create_agent(ToolFakeModel(responses=replies), tools=[read_file, create_issue],
                         middleware=[middleware], system_prompt="Be terse.")
    final = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Work."}]}))
    results = {m.tool_call_id: m.content for m in final["messages"] if m.type == "tool"}
    assert "create_issue" in json.loads(results["c1"])["tools"]  # bridged, off the loop
    assert "no_such_tool" in results["c2"]  # the agent has no such tool: said, not raised
    assert results["c3"].startswith("# a.py")  # the agent's own tool, through its handler
    assert json.loads(results["c4"]) == {"created": "T"}  # a bridged tool, invoked by the bridge
    with pytest.raises(KeyError, match="the agent has no tool named 'gone'"):
        middleware._invoke("gone", {})  # what the bridge hears for a tool the agent lost
    assert final["messages"][-1].content == "Done."
    assert middleware.session.system_prompt.startswith("Be terse.")


# --- OpenAI Agents SDK ----------------------------------------------------------------------


def test_message_parts_become_chat_content() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque-part"

    items = [
        {"role": "assistant", "content": [{"type": "output_text", "text": "a"}, {"type": "refusal", "refusal": "no"}]},
        {"role": "user", "content": [{"type": "input_text", "text": "see"},
                                     {"type": "input_image", "image_url": "https://x.test/i.png"}]},
        {"role": "user", "content": [ResponseInputFile(type="input_file", file_id="file_1"), Opaque(),
                                     {"type": "input_audio", "format": "wav"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "out"}]},
        {"type": "reasoning", "id": "rs_9", "summary": []},
    ]
    messages = items_to_messages(items)
    assert messages[0]["content"] == "a\nno"
    assert messages[1]["content"] == [{"type": "text", "text": "see"},
                                      {"type": "image_url", "image_url": {"url": "https://x.test/i.png"}}]
    assert messages[2]["content"] == ('{"type": "input_file", "file_id": "file_1"}\n"opaque-part"\n'
                                      '{"type": "input_audio", "format": "wav"}')
    assert messages[4]["content"] == "out"
    assert messages[5] == {"role": "assistant", "content": "", "_agents_items": [items[5]], "_carrier": True}


def test_the_agents_session_refuses_a_session_and_keywords(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="not both"):
        HermesAgentsSession(_session(tmp_path), model="other")


def test_reasoning_items_dropped_by_a_compaction_are_counted_and_warned(tmp_path: Path) -> None:
    memory = HermesAgentsSession(_session(tmp_path, context_length=16_000))
    history: list[dict[str, Any]] = [{"role": "user", "content": "Refactor every module."}]
    for i in range(30):
        history += [{"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": "opaque"},
                    {"type": "function_call", "call_id": f"h{i}", "name": "read_file",
                     "arguments": json.dumps({"path": f"m{i}.py"})},
                    {"type": "function_call_output", "call_id": f"h{i}",
                     "output": f"# m{i}.py\n" + f"value_{i} = compute({i})\n" * 200}]
    asyncio.run(memory.add_items(history))
    items = asyncio.run(memory.get_items())
    assert len(items) < len(history)
    kept = sum(1 for item in items if isinstance(item, dict) and item.get("type") == "reasoning")
    assert memory.dropped_items == 30 - kept > 0
    [warning] = [w for w in memory.session.warnings if w.kind == "agents_items_dropped"]
    assert f"dropped {memory.dropped_items} item(s)" in warning.message
