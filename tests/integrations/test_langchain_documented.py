"""Issue 34, LangChain: the documented example (docs/embedding.md) runs after the documented
install - ``create_agent("openai:gpt-5", ...)`` needs ``langchain-openai``, which the
``[langchain]`` extra pulls - and that path sends the session's ``prompt_cache_key`` to the
provider (a local fake server: no network)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")
pytest.importorskip("langchain_openai")

from fake_llm_servers import json_reply, running  # noqa: E402
from locations import ROOT


def _documented_example() -> str:
    text = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    section = text.split("## LangChain: `HermesMiddleware`", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1)


def _reply(content: str, calls: list[dict[str, Any]] | None = None) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return json_reply(200, {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-5",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 9, "total_tokens": 909},
    })


def test_the_langchain_extra_pulls_what_the_example_needs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    needed = {re.split(r"[<>=\[]", r, maxsplit=1)[0].strip() for r in extras["langchain"]}
    assert {"langchain", "langchain-openai"} <= needed
    assert '"openai:' in _documented_example()  # the example does use the OpenAI provider string


def test_the_documented_example_runs_and_sends_prompt_cache_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_core.tools import tool

    @tool
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return "# demo\n"

    code = _documented_example().replace("for mode, chunk in agent.stream({\"messages\": [...]}",
                                         "for mode, chunk in agent.stream({\"messages\": messages}")
    assert "messages}" in code, "the example's stream call changed; update this test"
    monkeypatch.chdir(tmp_path)
    with running("openai") as server:
        server.push(
            _reply("", [{"id": "c1", "type": "function",
                         "function": {"name": "read_file", "arguments": json.dumps({"path": "README.md"})}}]),
            _reply("It is a demo."),
        )
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
        namespace: dict[str, Any] = {"my_tools": [read_file],
                                     "messages": [{"role": "user", "content": "What is this project?"}],
                                     "print": lambda *a, **k: None}
        exec(compile(code, "docs/embedding.md", "exec"), namespace)  # noqa: S102 - the documented block
        bodies = [r.json() for r in server.requests]
    assert len(bodies) == 2
    keys = {b.get("prompt_cache_key") for b in bodies}
    assert len(keys) == 1 and str(next(iter(keys))).startswith("hermes-")
    system = [b["messages"][0] for b in bodies]
    assert all(m["role"] in ("system", "developer") for m in system)
    # the agent's system_prompt is the identity: one stable prompt, no Hermes persona
    assert system[0]["content"] == system[1]["content"]
    assert str(system[0]["content"]).startswith("Be terse.") and "Hermes" not in str(system[0]["content"])
    assert bodies[1]["messages"][-1]["role"] == "tool"
