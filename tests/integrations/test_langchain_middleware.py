"""The LangChain v1 middleware in a 60-turn fake ``create_agent`` run: the session's system
prompt on every model call, a compaction (with its status event in the custom stream), valid
call/result pairs throughout, and tool search over a tool with a declared source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    SystemMessage,
    convert_to_openai_messages,  # noqa: E402
)
from langchain_core.tools import tool  # noqa: E402

from hermes_core.integrations.langchain import HermesMiddleware  # noqa: E402
from hermes_core.pairing import pairing_problems  # noqa: E402

TURNS = 60


class RecordingFakeModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, recording what each call was sent (and accepting tools)."""

    seen: list[list[BaseMessage]] = []
    bound: list[list[str]] = []
    settings: list[dict[str, Any]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.settings.append(dict(kwargs))
        names = []
        for t in tools:
            names.append(t["function"]["name"] if isinstance(t, dict) and "function" in t
                         else getattr(t, "name", None) or t.get("name"))
        self.bound.append(names)
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        # The provider's count of what it was sent (about 4 characters a token, as it would
        # report in usage_metadata).
        tokens = sum(len(str(m.content)) + len(json.dumps(getattr(m, "tool_calls", []))) for m in messages) // 4
        result = super()._generate(messages, *args, **kwargs)
        reply = result.generations[0].message
        result.generations[0].message = reply.model_copy(update={"usage_metadata": {
            "input_tokens": tokens, "output_tokens": 20, "total_tokens": tokens + 20}})
        return result


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\n" + "value = compute(x)\n" * 220


@tool
def create_issue(title: str) -> str:
    """Open a GitHub issue."""
    return json.dumps({"created": title})


create_issue.metadata = {"source": "mcp-github"}


def script() -> list[AIMessage]:
    replies: list[AIMessage] = []
    for turn in range(TURNS):
        if turn == 3:
            calls = [{"name": "tool_search", "args": {"queries": ["github issue"]}, "id": f"c{turn}"}]
        elif turn == 4:
            calls = [{"name": "tool_call", "id": f"c{turn}",
                      "args": {"calls": [{"name": "create_issue", "arguments": {"title": "T"}}]}}]
        else:
            calls = [{"name": "read_file", "args": {"path": f"m{turn}.py"}, "id": f"c{turn}"}]
        replies.append(AIMessage(content=f"step {turn}", tool_calls=calls))
    replies.append(AIMessage(content="All done."))
    return replies


def test_a_sixty_turn_agent_run_with_a_compaction(tmp_path: Path) -> None:
    RecordingFakeModel.seen, RecordingFakeModel.bound, RecordingFakeModel.settings = [], [], []
    model = RecordingFakeModel(responses=script())
    statuses: list[Any] = []
    middleware = HermesMiddleware(cwd=tmp_path, model="gpt-5", provider="openai",
                                  context_length=64_000, persist=False, env={},
                                  on_status=statuses.append)
    agent = create_agent(model, tools=[read_file, create_issue], middleware=[middleware],
                         system_prompt="Be terse.")
    custom: list[Any] = []
    final: dict[str, Any] = {}
    for mode, chunk in agent.stream(
        {"messages": [{"role": "user", "content": "Refactor every module."}]},
        {"recursion_limit": 400}, stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            custom.append(chunk)
        else:
            final = chunk

    prompt = middleware.session.system_prompt
    assert len(model.seen) == TURNS + 1
    for sent in model.seen:
        assert isinstance(sent[0], SystemMessage)
        assert sent[0].content == prompt  # one byte-stable prompt ...
    # ... whose identity is the agent's own system_prompt: nothing says Hermes (issue 34)
    assert prompt.startswith("Be terse.\n\n") and "Hermes" not in prompt and "hermes-agent" not in prompt
    # the session's prompt_cache_key reaches the model on every call (OpenAI provider)
    keys = {s.get("prompt_cache_key") for s in model.settings}
    assert len(model.settings) == TURNS + 1 and len(keys) == 1 and str(keys.pop()).startswith("hermes-")
    for sent in model.seen:
        history = convert_to_openai_messages(sent[1:])
        assert pairing_problems(history, allow_pending=False) == [], pairing_problems(history)
    # tool search: the sourced tool is behind the bridge; the agent's own tool stays visible
    assert all("create_issue" not in names and {"read_file", "tool_search"} <= set(names)
               for names in model.bound)
    tool_results = {m.tool_call_id: m.content for sent in model.seen for m in sent
                    if m.type == "tool"}
    assert "create_issue" in json.loads(tool_results["c3"])["tools"]
    assert json.loads(tool_results["c4"]) == {"created": "T"}
    # a compaction happened, was reported, and shortened what the model saw
    compacted = [e for e in statuses if e.kind == "compacted"]
    assert compacted and middleware.session.engine.compression_count >= 1
    assert any(c.get("hermes_status", {}).get("kind") == "compacted" for c in custom)
    assert min(len(s) for s in model.seen[30:]) < max(len(s) for s in model.seen[:30])
    assert final["messages"][-1].content == "All done."
    assert pairing_problems(convert_to_openai_messages(final["messages"]), allow_pending=False) == []


def test_the_integration_is_not_imported_by_the_core() -> None:
    import subprocess
    import sys

    code = ("import sys, hermes_core; from hermes_core import Session, AsyncSession; "
            "print('langchain' in sys.modules, 'hermes_core.integrations.langchain' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
