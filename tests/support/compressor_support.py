"""Builders shared by the compressor tests (no tests here)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.config import Config, load_config
from hermes_plugins.compressor.engine import CompressorEngine


def call(ident: str, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def assistant(content: str = "", *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(ident: str, content: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": ident, "content": content}


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def system(content: str = "You are a helpful agent.") -> dict[str, Any]:
    return {"role": "system", "content": content}


def image_part(url: str = "data:image/png;base64,AAAA") -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def work_history(turns: int = 30, result_chars: int = 3_000, tool_name: str = "read_file") -> list[dict[str, Any]]:
    """A system prompt, then user -> assistant(call) -> tool -> assistant reply, ``turns`` times."""
    messages: list[dict[str, Any]] = [system()]
    for i in range(turns):
        messages.append(user(f"step {i}: look at src/mod_{i}.py"))
        messages.append(assistant("", call(f"c{i}", tool_name, path=f"src/mod_{i}.py", command=f"pytest tests/test_{i}.py")))
        messages.append(tool(f"c{i}", f"line of output {i}\n" * (result_chars // 16)))
        messages.append(assistant(f"Looked at src/mod_{i}.py."))
    messages.append(user("now run the whole suite"))
    return messages


def make_engine(context_length: int = 200_000, data: dict[str, Any] | None = None, host: Any = None,
                model: str = "main-model") -> CompressorEngine:
    config = load_config(data=data, env={}) if data else Config()
    engine = CompressorEngine(config=config, host=host)
    engine.update_model(model, context_length)
    return engine


class FakeClock:
    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def snapshot(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


def summary_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    found = [m for m in messages if m.get("_compressed_summary")]
    assert len(found) == 1, f"expected one summary message, found {len(found)}"
    return found[0]
