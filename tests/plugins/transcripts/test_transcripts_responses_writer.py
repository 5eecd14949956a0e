"""``hermes-ctx convert --to responses``: any transcript as a ``client.responses.create`` body that
passes the Responses validator, with what could not go as it was counted in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hermes_core.cli import cli

import validators_openai_responses as vr

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                 {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
        {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "b"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "A"},
    {"role": "tool", "tool_call_id": "c2", "content": "B"},
    {"role": "assistant", "content": "A and B."},
]
CLAUDE = {
    "model": "claude-x", "system": "Be brief.",
    "tools": [{"name": "read_file", "description": "Read.", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A",
                                      "is_error": True}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It failed."}]},
    ],
}


def convert(tmp_path: Path, data: Any, *extra: str) -> tuple[dict[str, Any], str]:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "convert", "--to",
                                      "responses", str(source), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8")), result.output


def test_a_chat_transcript_becomes_a_valid_responses_body(tmp_path: Path) -> None:
    body, _ = convert(tmp_path, CHAT)
    vr.check(body)
    assert body["instructions"] == "Be brief."
    # the reader stands a placeholder for the image (its own report counts it); the part is
    # a Responses part either way
    assert body["input"][0]["content"][1]["type"] in ("input_image", "input_text")
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert calls == outputs == ["c1", "c2"]


def test_an_anthropic_transcript_counts_what_the_responses_body_cannot_carry(tmp_path: Path) -> None:
    body, _ = convert(tmp_path, CLAUDE)
    vr.check(body)
    assert body["tools"] == [{"type": "function", "name": "read_file", "description": "Read.",
                              "parameters": {"type": "object"}, "strict": False}]
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "home"), "convert", "--to",
                                      "responses", str(tmp_path / "in.json"), "-o",
                                      str(tmp_path / "o2.json"), "--json"])
    written = json.loads(result.stdout)["written"]
    assert written["format"] == "responses"
    assert written["changed"].get("error_flags_written_into_the_output") == 1
    # the thinking the reader kept as metadata has no Responses form: dropped, and said so
    assert written["dropped"] == {"reasoning_of_another_api_dropped": 1}
    output = next(i for i in body["input"] if i.get("type") == "function_call_output")
    assert output["output"].startswith("[tool error]")


def test_a_responses_transcript_converts_back_to_a_valid_body(tmp_path: Path) -> None:
    items = {"instructions": "Be brief.", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "read a"}]},
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "A"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]}
    body, _ = convert(tmp_path, items, "--format", "openai-responses")
    vr.check(body)
    assert [i.get("type", "message") for i in body["input"]] == [
        "message", "function_call", "function_call_output", "message"]
