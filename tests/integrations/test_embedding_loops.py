"""docs/embedding.md's provider loops run as written against local fake servers through the
official SDKs (issue 28): every request the server receives is valid by the provider's rules
(tests/support/validators_*.py), signed thinking goes back byte-identical, a failed call goes back with
``is_error``, OpenAI parts go out unchanged."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("anthropic")

import validators_anthropic  # noqa: E402
import validators_openai_chat  # noqa: E402
from fake_llm_servers import anthropic_message, json_reply, running  # noqa: E402
from locations import DOCS

DOC = DOCS / "embedding.md"


def _snippet(heading: str) -> str:
    section = DOC.read_text(encoding="utf-8").split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"docs/embedding.md: no python block under {heading!r}"
    return block.group(1)


def _run(code: str, work: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(work)
    namespace: dict[str, Any] = {"__name__": "embedding_snippet"}
    exec(compile(code, "docs/embedding.md", "exec"), namespace)  # noqa: S102 - the documented loop
    return namespace


THINK_A = {"type": "thinking", "thinking": "Read both files, README first.", "signature": "sig-A-EqQBCkYIBxgC"}
REDACTED_A = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix-redacted"}
THINK_B = {"type": "thinking", "thinking": "NOTES.md is missing; say so.", "signature": "sig-B-EqQBCkYIBxgC"}
TURN_1 = [THINK_A, REDACTED_A, {"type": "text", "text": "Reading both."},
          {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "README.md"}},
          {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "NOTES.md"}}]
TURN_2 = [THINK_B, {"type": "tool_use", "id": "toolu_3", "name": "read_file", "input": {"path": "README.md"}}]


def _claude(blocks: list[dict[str, Any]], stop: str) -> Any:
    reply = anthropic_message([], model="claude-sonnet-4-5", extra_blocks=blocks)
    body = json.loads(reply.body)
    body["stop_reason"] = stop
    return json_reply(200, body)


def _strip_markers(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def test_the_anthropic_thinking_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README.md").write_text("# demo\nA tiny project.\n", encoding="utf-8")
    with running("anthropic") as server:
        server.push(_claude(TURN_1, "tool_use"), _claude(TURN_2, "tool_use"),
                    _claude([{"type": "text", "text": "README: a tiny project; NOTES.md is missing."}], "end_turn"))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        ns = _run(_snippet("Anthropic with extended thinking"), tmp_path, monkeypatch)
        bodies = [r.json() for r in server.requests]
    assert len(bodies) == 3
    for body in bodies:
        validators_anthropic.check(body, thinking=True)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    # Each earlier reply goes back as it came: every block, thinking byte for byte, in order.
    last = bodies[2]["messages"]
    assistant = [m["content"] for m in last if m["role"] == "assistant"]
    assert [[_strip_markers(b) for b in turn] for turn in assistant] == [TURN_1, TURN_2]
    assert [json.dumps(b) for b in assistant[0][:2]] == [json.dumps(THINK_A), json.dumps(REDACTED_A)]
    results = {b["tool_use_id"]: b for m in last for b in m["content"] if b["type"] == "tool_result"}
    assert results["toolu_2"]["is_error"] is True and "NOTES.md" in results["toolu_2"]["content"]
    assert "is_error" not in results["toolu_1"]
    assert results["toolu_1"]["content"] == "# demo\nA tiny project."
    assert capsys.readouterr().out.splitlines()[0] == "README: a tiny project; NOTES.md is missing."
    report = ns["report"]
    assert report.target == "anthropic" and report.lossless


def _openai(message: dict[str, Any], finish: str) -> Any:
    return json_reply(200, {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-5",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
    })


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def test_the_openai_chat_loop_with_an_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "screenshot.png").write_bytes(PNG)
    call = {"id": "call_1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    with running("openai") as server:
        server.push(_openai({"content": None, "tool_calls": [call]}, "tool_calls"),
                    _openai({"content": None, "refusal": "I can't help with that part."}, "stop"))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ns = _run(_snippet("OpenAI Chat Completions: images, audio, files, refusals"), tmp_path, monkeypatch)
        bodies = [r.json() for r in server.requests]
    assert len(bodies) == 2
    for body in bodies:
        validators_openai_chat.check(body)
        assert body["messages"][1]["content"][1] == {"type": "image_url", "image_url": {
            "url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}
    tool = [m for m in bodies[1]["messages"] if m["role"] == "tool"][0]
    assert tool["content"] == [{"type": "text", "text": "12:00 ok"}, {"type": "text", "text": "12:01 crash in b.py"}]
    assert ns["reply"]["refusal"] == "I can't help with that part."
    assert capsys.readouterr().out.splitlines()[0] == "I can't help with that part."
    assert ns["session"].last_request_report.lossless
