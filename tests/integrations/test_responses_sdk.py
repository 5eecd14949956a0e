"""The Responses API through the real ``openai`` SDK against a local fake server: docs/embedding.md's
Responses loop runs as written, every request the server receives passes the Responses
validator, and the reply's items (reasoning with its encrypted content) come back in the next
request byte for byte."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

import validators_openai_responses as vr

pytest.importorskip("openai")

from hermes_core import AsyncSession  # noqa: E402

from fake_llm_servers import responses_reply, running  # noqa: E402
from locations import DOCS

REASONING = {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-signed-blob==",
             "summary": [{"type": "summary_text", "text": "Read the file first."}]}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
        "arguments": '{"path": "README.md"}', "status": "completed"}
ANSWER = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "A tiny demo project.", "annotations": []}]}


def _docs_block() -> str:
    page = (DOCS / "embedding.md").read_text(encoding="utf-8")
    section = page.split("## OpenAI Responses API", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the Responses section of docs/embedding.md has no python block"
    return block.group(1)


def test_the_documented_responses_loop_runs_against_the_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# demo\nA tiny project.\n", encoding="utf-8")
    monkeypatch.chdir(work)
    with running("responses") as server:
        server.push(responses_reply([REASONING, CALL], input_tokens=1200),
                    responses_reply([ANSWER], input_tokens=1300))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        namespace: dict[str, Any] = {"__name__": "docs_snippet"}
        exec(compile(_docs_block(), "docs/embedding.md", "exec"), namespace)  # noqa: S102
        received = list(server.requests)

    assert [r.path for r in received] == ["/v1/responses", "/v1/responses"]
    bodies = [r.json() for r in received]
    session = namespace["session"]
    for body in bodies:
        vr.check(body)
        assert body["instructions"] == session.system_prompt
        assert body["prompt_cache_key"].startswith("hermes-")
        assert {t["name"] for t in body["tools"]} >= {"read_file"}
        assert body["store"] is False
    # the reply's items went back as the server sent them, then the tool's output
    second = received[1].body.decode()
    # every field and value as the server sent it (key order is the SDK object's own)
    assert bodies[1]["input"][1:3] == [REASONING, CALL]
    assert '"encrypted_content":"gAAAA-signed-blob=="' in second.replace(" ", "")
    assert bodies[1]["input"][3] == {"type": "function_call_output", "call_id": "call_1",
                                     "output": "# demo\nA tiny project.\n"}
    assert capsys.readouterr().out.strip() == "A tiny demo project."
    assert session.closed


def test_an_sdk_response_appended_as_is_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openai import OpenAI

    from hermes_core import Session, as_message

    with running("responses") as server:
        server.push(responses_reply([REASONING, ANSWER, CALL]))
        client = OpenAI(base_url=server.base_url, api_key="sk-test")
        response = client.responses.create(model="gpt-5", input="hi")
    message = as_message(response)
    assert message["_responses"] == [REASONING, ANSWER, CALL]  # every item, every field
    assert message["content"] == "A tiny demo project."
    assert message["tool_calls"][0]["id"] == "call_1"
    session = Session.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5",
                           provider="openai", persist=False, env={})
    history = [{"role": "user", "content": "hi"}, message,
               {"type": "function_call_output", "call_id": "call_1", "output": "ok"}]
    kwargs = session.request(history, api="responses")
    vr.check(kwargs)
    assert kwargs["input"][1:4] == [REASONING, ANSWER, CALL]


def test_the_async_session_takes_the_same_api_keyword(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        session = await AsyncSession.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5",
                                          provider="openai", persist=False, env={})
        async with session:
            return await session.request(
                [{"role": "user", "content": "go"}, REASONING, CALL,
                 {"type": "function_call_output", "call_id": "call_1", "output": "x"}],
                api="responses",
            )

    kwargs = asyncio.run(main())
    vr.check(kwargs)
    assert kwargs["input"][1:3] == [REASONING, CALL]


def test_session_create_runs_a_responses_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The one-call turn (issue 34) speaks the Responses API too: the reply's items go back as
    # they came, the tool's output as a function_call_output, every request valid.
    from openai import OpenAI

    from hermes_core import Session

    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# demo\nA tiny project.\n", encoding="utf-8")
    monkeypatch.chdir(work)

    def run_tool(name: str, arguments: dict[str, Any]) -> str:
        return Path(arguments["path"]).read_text(encoding="utf-8")

    tools = [{"type": "function", "function": {
        "name": "read_file", "description": "Read a text file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
    with running("responses") as server:
        server.push(responses_reply([REASONING, CALL], input_tokens=1200),
                    responses_reply([ANSWER], input_tokens=1300))
        client = OpenAI(base_url=server.base_url, api_key="sk-test")
        session = Session.open(cwd=str(work), home=str(tmp_path / "home"), model="gpt-5", provider="openai",
                               invoke=run_tool, env={})
        turn = session.create(client, [{"role": "user", "content": "What is this project?"}], tools=tools,
                              api="responses")
        received = list(server.requests)
    assert [r.path for r in received] == ["/v1/responses", "/v1/responses"]
    bodies = [r.json() for r in received]
    for body in bodies:
        vr.check(body)
    assert bodies[1]["input"][1:3] == [REASONING, CALL]
    # the tool's result went through the result limits (surrounding whitespace trimmed)
    assert bodies[1]["input"][3] == {"type": "function_call_output", "call_id": "call_1",
                                     "output": "# demo\nA tiny project."}
    assert turn.finished and turn.steps == 2 and "tiny demo project" in str(turn.content)
