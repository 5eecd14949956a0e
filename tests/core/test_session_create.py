"""Issue 34, a five-line loop: ``Session.create`` / ``AsyncSession.create`` run a whole turn
against the official SDK clients (local fake servers): tool calls answered through the bridge
and ``invoke``, an overflow error recovered through ``on_provider_error``, other errors raised,
the caller's list untouched."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")

import anthropic  # noqa: E402
import openai  # noqa: E402

from hermes_core import AsyncSession, Session  # noqa: E402
from hermes_core.pairing import pairing_problems  # noqa: E402

from fake_llm_servers import anthropic_message, json_reply, openai_error, running  # noqa: E402

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]


def _chat(content: str | None, calls: list[tuple[str, str, dict[str, Any]]] = (), prompt_tokens: int = 500) -> Any:  # type: ignore[assignment]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": cid, "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}
                                 for cid, name, args in calls]
    return json_reply(200, {
        "id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "gpt-5",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5},
    })


def _open(tmp_path: Path, **kwargs: Any) -> Session:
    ran: list[tuple[str, dict[str, Any]]] = []

    def run_tool(name: str, arguments: dict[str, Any]) -> str:
        ran.append((name, arguments))
        return f"contents of {arguments['path']}"

    session = Session.open(cwd=tmp_path, home=tmp_path, persist=False, env={}, invoke=run_tool, **kwargs)
    session.ran = ran  # type: ignore[attr-defined]
    return session


def test_a_turn_with_tool_calls_against_the_openai_sdk(tmp_path: Path) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai")
    messages = [{"role": "user", "content": "Read a.py and b.py"}]
    before = copy.deepcopy(messages)
    with running("openai") as server:
        server.push(_chat(None, [("c1", "read_file", {"path": "a.py"}), ("c2", "read_file", {"path": "b.py"})]),
                    _chat("Both read."))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        turn = session.create(client, messages, tools=TOOLS, temperature=0)
        bodies = [r.json() for r in server.requests]
    assert messages == before  # the caller's list is not changed
    assert turn.finished and turn.steps == 2 and turn.content == "Both read." and turn.overflow_retries == 0
    assert session.ran == [("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})]  # type: ignore[attr-defined]
    assert [m["role"] for m in turn.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert turn.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "contents of a.py"}
    for body in bodies:
        assert body["messages"][0] == {"role": "system", "content": session.system_prompt}
        assert body["temperature"] == 0 and str(body["prompt_cache_key"]).startswith("hermes-")
        assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]  # no sourced tool: no bridge
    assert pairing_problems(bodies[1]["messages"][1:], allow_pending=False) == []


def _long_history() -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Refactor everything."}]
    for i in range(40):
        call = {"id": f"h{i}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{i}.py"})}}
        history += [{"role": "assistant", "content": "", "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": f"h{i}", "content": f"def f{i}(x):\n    return x\n" * 150}]
    history.append({"role": "user", "content": "Now summarise what you changed."})
    return history


def test_an_overflow_error_is_recovered_through_on_provider_error(tmp_path: Path) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai")
    messages = _long_history()
    with running("openai") as server:
        server.push(openai_error(400, "This model's maximum context length is 40000 tokens. However, your "
                                      "messages resulted in 90000 tokens.", code="context_length_exceeded"),
                    _chat("Summary: done."))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        turn = session.create(client, messages, tools=TOOLS)
        bodies = [r.json() for r in server.requests]
    assert turn.finished and turn.overflow_retries == 1 and turn.content == "Summary: done."
    assert len(bodies) == 2 and len(bodies[1]["messages"]) < len(bodies[0]["messages"])
    assert session.window == 40_000  # the provider's figure won over the model data's 400k
    assert pairing_problems(bodies[1]["messages"][1:], allow_pending=False) == []


def test_other_errors_reach_the_host_and_nothing_is_changed(tmp_path: Path) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai")
    messages = [{"role": "user", "content": "hi"}]
    with running("openai") as server:
        server.push(openai_error(401, "bad key", type="authentication_error"))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            session.create(client, messages)
        assert len(server.requests) == 1
    assert messages == [{"role": "user", "content": "hi"}]


def test_max_steps_ends_an_unfinished_turn_visibly(tmp_path: Path) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai")
    with running("openai") as server:
        server.push(_chat(None, [("c1", "read_file", {"path": "a.py"})]))  # repeats: always a tool call
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        turn = session.create(client, [{"role": "user", "content": "loop"}], tools=TOOLS, max_steps=3)
    assert not turn.finished and turn.steps == 3
    assert turn.messages[-1]["role"] == "tool"  # the last call was answered, not sent back yet


def test_a_mismatched_client_or_streaming_is_a_clear_error(tmp_path: Path) -> None:
    session = _open(tmp_path, model="claude-sonnet-4-5", provider="anthropic")
    client = openai.OpenAI(base_url="http://127.0.0.1:9", api_key="sk-test")
    with pytest.raises(TypeError, match="client.messages.create"):
        session.create(client, [{"role": "user", "content": "hi"}])
    openai_session = _open(tmp_path, model="gpt-5", provider="openai")
    with pytest.raises(TypeError, match="stream"):
        openai_session.create(client, [{"role": "user", "content": "hi"}], stream=True)
    with pytest.raises(TypeError, match="max_tokens"):
        openai_session.create(client, [{"role": "user", "content": "hi"}], tools=TOOLS, model="other")


def test_async_turns_with_the_async_openai_and_anthropic_clients(tmp_path: Path) -> None:
    async def run_tool(name: str, arguments: dict[str, Any]) -> str:
        return f"async contents of {arguments['path']}"

    async def main() -> tuple[Any, Any, list[Any], list[Any]]:
        with running("openai") as oa, running("anthropic") as an:
            oa.push(_chat(None, [("c1", "read_file", {"path": "a.py"})]), _chat("OpenAI done."))
            an.push(anthropic_message("", extra_blocks=[{"type": "tool_use", "id": "t1", "name": "read_file",
                                                         "input": {"path": "b.py"}}]),
                    anthropic_message("Claude done."))
            chat = await AsyncSession.open(cwd=tmp_path, home=tmp_path, persist=False, env={},
                                           model="gpt-5", provider="openai", invoke=run_tool)
            claude = await AsyncSession.open(cwd=tmp_path, home=tmp_path, persist=False, env={},
                                             model="claude-sonnet-4-5", provider="anthropic", invoke=run_tool)
            first, second = await asyncio.gather(
                chat.create(openai.AsyncOpenAI(base_url=oa.base_url, api_key="k", max_retries=0),
                            [{"role": "user", "content": "read a"}], tools=TOOLS),
                claude.create(anthropic.AsyncAnthropic(base_url=an.base_url, api_key="k", max_retries=0),
                              [{"role": "user", "content": "read b"}], tools=TOOLS),
            )
            await chat.close()
            await claude.close()
            return first, second, [r.json() for r in oa.requests], [r.json() for r in an.requests]

    first, second, oa_bodies, an_bodies = asyncio.run(main())
    assert first.finished and first.content == "OpenAI done."
    assert second.finished and second.content == "Claude done."
    assert oa_bodies[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "async contents of a.py"}
    result = an_bodies[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "t1"
    assert "async contents of b.py" in json.dumps(result["content"])
    assert an_bodies[0]["max_tokens"] == 8192 and "system" in an_bodies[0]


def test_the_recall_tools_are_offered_once_something_is_archived_even_without_tools(tmp_path: Path) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai", context_length=16_000)
    messages = _long_history()
    with running("openai") as server:
        server.push(_chat("first"), _chat("second"))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        first = session.create(client, messages)  # compresses: the history is over the window
        session.create(client, [*first.messages, {"role": "user", "content": "and?"}])
        bodies = [r.json() for r in server.requests]
    assert session.engine.compression_count >= 1
    for body in bodies:  # the first request already: the compression before it archived
        assert {t["function"]["name"] for t in body["tools"]} == {"context_search", "context_expand"}
