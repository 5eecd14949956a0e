"""Issue 34, the OpenAI Agents SDK: ``HermesAgentsSession`` implements the SDK's ``Session``
protocol over hermes-core, tested with the real ``openai-agents`` package: ``Runner.run`` with a
chat-completions model on an ``AsyncOpenAI`` client pointed at a local fake server (no network,
tracing off). Items go in and come out, a history that outgrew the window is compacted at the
start of a run, and the archive's tools are offered and answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool  # noqa: E402
from agents.memory import Session as AgentsSessionProtocol  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from hermes_core.integrations.openai_agents import HermesAgentsSession  # noqa: E402

from fake_llm_servers import json_reply, running  # noqa: E402

NO_TRACING = RunConfig(tracing_disabled=True)


def _chat(content: str | None, calls: list[tuple[str, str, dict[str, Any]]] | None = None) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": cid, "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}
                                 for cid, name, args in calls]
    return json_reply(200, {
        "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "gpt-5",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
    })


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\n" + "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(120))


def _agent(base_url: str, memory: HermesAgentsSession) -> Agent:
    model = OpenAIChatCompletionsModel(model="gpt-5", openai_client=AsyncOpenAI(base_url=base_url, api_key="sk-test",
                                                                                max_retries=0))
    agent = Agent(name="Assistant", instructions="Be terse.", model=model)
    return agent.clone(tools=memory.agent_tools([read_file]))


def _memory(tmp_path: Path, **kwargs: Any) -> HermesAgentsSession:
    return HermesAgentsSession(cwd=tmp_path, home=tmp_path, model="gpt-5", provider="openai", persist=False,
                               env={}, **kwargs)


def test_it_is_an_agents_sdk_session(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    assert isinstance(memory, AgentsSessionProtocol)
    assert memory.session_id == memory.session.session_id


def test_items_go_in_and_come_out_across_runs(tmp_path: Path) -> None:
    memory = _memory(tmp_path)

    async def main() -> tuple[Any, Any, list[Any]]:
        with running("openai") as server:
            server.push(_chat(None, [("c1", "read_file", {"path": "a.py"})]), _chat("a.py defines f0..f119."),
                        _chat("You asked about a.py."))
            first = await Runner.run(_agent(server.base_url, memory), "What is in a.py?", session=memory,
                                     run_config=NO_TRACING)
            second = await Runner.run(_agent(server.base_url, memory), "What did I ask?", session=memory,
                                      run_config=NO_TRACING)
            return first, second, [r.json() for r in server.requests]

    first, second, bodies = asyncio.run(main())
    assert first.final_output == "a.py defines f0..f119." and second.final_output == "You asked about a.py."
    last = bodies[-1]["messages"]
    roles = [m["role"] for m in last]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert last[0]["content"] == "Be terse." and last[1]["content"] == "What is in a.py?"
    assert last[3]["tool_call_id"] == "c1" and "def f119" in last[3]["content"]
    items = asyncio.run(memory.get_items())
    assert len(items) == 6 and asyncio.run(memory.get_items(limit=2)) == items[-2:]
    assert asyncio.run(memory.pop_item()) == items[-1]
    asyncio.run(memory.clear_session())
    assert asyncio.run(memory.get_items()) == []


def test_unchanged_items_come_back_as_the_same_objects(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    items = [{"role": "user", "content": "hi"}, reasoning,
             {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
              "content": [{"type": "output_text", "text": "hello", "annotations": []}]}]
    asyncio.run(memory.add_items(items))
    out = asyncio.run(memory.get_items())
    assert len(out) == 3 and all(a is b for a, b in zip(out, items))


def test_a_long_history_is_compacted_at_the_start_of_a_run_and_recall_is_offered(tmp_path: Path) -> None:
    memory = _memory(tmp_path, context_length=16_000)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Refactor every module."}]
    for i in range(30):
        history += [{"type": "function_call", "call_id": f"h{i}", "name": "read_file",
                     "arguments": json.dumps({"path": f"m{i}.py"})},
                    {"type": "function_call_output", "call_id": f"h{i}",
                     "output": f"# m{i}.py\n" + f"value_{i} = compute({i})\n" * 200}]
    history.append({"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                    "content": [{"type": "output_text", "text": "All modules read.", "annotations": []}]})
    asyncio.run(memory.add_items(history))
    assert memory.agent_tools([read_file]) == [read_file]  # nothing archived yet: no recall tools

    async def main() -> tuple[Any, list[Any], list[Any]]:
        with running("openai") as server:
            server.push(_chat(None, [("s1", "context_search", {"query": "value_3"})]), _chat("Found it."))
            agent = _agent(server.base_url, memory)
            items = await memory.get_items()  # what Runner.run will read first: compacts
            agent = _agent(server.base_url, memory)  # built after the compaction: recall offered
            result = await Runner.run(agent, "Where was value_3 computed?", session=memory, run_config=NO_TRACING)
            return result, items, [r.json() for r in server.requests]

    result, items, bodies = asyncio.run(main())
    assert len(items) < len(history)
    assert memory.session.engine.compression_count >= 1
    tool_names = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert {"read_file", "context_search", "context_expand"} <= tool_names
    answer = json.loads(bodies[1]["messages"][-1]["content"])
    assert answer["hits"] and "value_3" in json.dumps(answer)
    assert result.final_output == "Found it."
    sent = bodies[0]["messages"]
    assert len(sent) < len(history)  # the model saw the compacted history
    ids = {m.get("tool_call_id") for m in sent if m["role"] == "tool"}
    calls = {c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or ()}
    assert ids <= calls  # every tool output still has its call


def test_the_agent_can_take_the_sessions_prompt_with_its_own_identity(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run the tests with `make test`.\n")
    memory = _memory(tmp_path)
    prompt = memory.instructions("Be terse.")
    assert prompt.startswith("Be terse.") and "make test" in prompt and "Hermes" not in prompt
    assert memory.instructions("Be terse.") is prompt  # byte-stable: built once

    async def main() -> list[Any]:
        with running("openai") as server:
            server.push(_chat("Hi."))
            model = OpenAIChatCompletionsModel(model="gpt-5", openai_client=AsyncOpenAI(
                base_url=server.base_url, api_key="sk-test", max_retries=0))
            agent = Agent(name="Assistant", instructions=prompt, model=model)
            await Runner.run(agent, "Hello", session=memory, run_config=NO_TRACING)
            return [r.json() for r in server.requests]

    bodies = asyncio.run(main())
    assert bodies[0]["messages"][0] == {"role": "system", "content": prompt}
