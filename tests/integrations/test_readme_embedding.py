"""The README's "Embedding it" snippet (one ``session.create`` call per turn) and the loop written
out in docs/embedding.md run as written against local fake OpenAI and Anthropic servers through
the official SDKs, and each server receives what a host needs it to: the session's system
prompt, the cache layout, valid tool pairs and the bridge's answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hermes_core.pairing import pairing_problems
from hermes_core.sdk import normalize_messages

pytest.importorskip("openai")
pytest.importorskip("anthropic")

from fake_llm_servers import anthropic_message, json_reply, running  # noqa: E402
from locations import ROOT

TITLE = "README is terse"


def _snippet(page: str, heading: str) -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"{page}'s {heading} section has no python block"
    return block.group(1)


README_SNIPPET = _snippet("README.md", "## Embedding it")
LOOP_SNIPPET = _snippet("docs/embedding.md", "## The loop written out")
SNIPPETS = {"readme_create": README_SNIPPET, "docs_loop": LOOP_SNIPPET}


def test_the_readme_runs_a_turn_in_one_call() -> None:
    assert "session.create(client, messages, tools=tools)" in README_SNIPPET
    assert "for _turn in range" not in README_SNIPPET and "for _turn in range" in LOOP_SNIPPET


def _openai_reply(content: str | None, calls: list[tuple[str, str, dict[str, Any]]]) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in calls
        ]
    return json_reply(200, {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000,
        "model": "gpt-5",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 20, "total_tokens": 1220},
    })


def _anthropic_reply(text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> Any:
    blocks = [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
    return anthropic_message(text, model="claude-x", extra_blocks=blocks)


# Turn 1: search the deferred tools and read a file in parallel; turn 2: run the MCP tool found
# through the bridge; turn 3: answer.
SCRIPT = [
    ("Looking.", [("call_1", "tool_search", {"queries": ["github issue"]}),
                  ("call_2", "read_file", {"path": "README.md"})]),
    ("Filing.", [("call_3", "tool_call", {"calls": [{"name": "create_issue",
                                                     "arguments": {"title": TITLE}}]})]),
    ("Done: issue filed.", []),
]


def _run_snippet(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# demo\nA tiny project.\n", encoding="utf-8")
    (work / "AGENTS.md").write_text("Run the tests with `make test`.\n", encoding="utf-8")
    monkeypatch.chdir(work)
    namespace: dict[str, Any] = {"__name__": "readme_snippet"}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the documented snippet
    return namespace


def _check_tools(tools: list[dict[str, Any]], name_of: Any) -> None:
    names = {name_of(t) for t in tools}
    assert {"read_file", "tool_search", "tool_describe", "tool_call"} <= names
    assert "create_issue" not in names  # behind the bridge: it has a declared source
    assert all("source" not in t and "source" not in t.get("function", {}) for t in tools)


@pytest.mark.parametrize("snippet", sorted(SNIPPETS))
def test_the_readme_snippet_against_the_openai_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snippet: str
) -> None:
    with running("openai") as server:
        server.push(*(_openai_reply(text, calls) for text, calls in SCRIPT))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ns = _run_snippet(SNIPPETS[snippet], tmp_path, monkeypatch)
        bodies = [r.json() for r in server.requests]

    assert len(bodies) == 3
    prompt = ns["session"].system_prompt
    keys = {b.get("prompt_cache_key") for b in bodies}
    assert len(keys) == 1 and next(iter(keys)).startswith("hermes-")
    for body in bodies:
        assert body["model"] == "gpt-5"
        assert body["messages"][0] == {"role": "system", "content": prompt}
        assert "make test" in prompt  # the project's AGENTS.md reached the prompt
        _check_tools(body["tools"], lambda t: t["function"]["name"])
        assert pairing_problems(body["messages"][1:], allow_pending=False) == []
        assert all(not k.startswith("_") for m in body["messages"] for k in m)
    last = {m.get("tool_call_id"): m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"}
    assert "create_issue" in json.loads(last["call_1"])["tools"]  # the search found it
    assert last["call_2"] == "# demo\nA tiny project."  # the host's own tool, via invoke
    assert json.loads(last["call_3"]) == {"created": TITLE}  # the bridge ran the MCP tool
    assert capsys.readouterr().out.splitlines()[0] == "Done: issue filed."


def _anthropic_variant(snippet: str) -> str:
    """The changes the docs name for Anthropic, each required to apply once (the provider call
    only in the loop written out: ``session.create`` picks it from the provider)."""
    code = snippet
    changes = [
        ("from openai import OpenAI", "from anthropic import Anthropic"),
        ("client = OpenAI()", "client = Anthropic()"),
        ('model="gpt-5", provider="openai"', 'model="claude-x", provider="anthropic"'),
    ]
    if "session.create(" not in code:
        changes.append(("client.chat.completions.create(", "client.messages.create("))
    for old, new in changes:
        assert code.count(old) == 1, old
        code = code.replace(old, new)
    return code


@pytest.mark.parametrize("snippet", sorted(SNIPPETS))
def test_the_readme_snippet_against_the_anthropic_sdk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snippet: str
) -> None:
    with running("anthropic") as server:
        server.push(*(_anthropic_reply(text, calls) for text, calls in SCRIPT))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        ns = _run_snippet(_anthropic_variant(SNIPPETS[snippet]), tmp_path, monkeypatch)
        bodies = [r.json() for r in server.requests]

    assert len(bodies) == 3
    prompt = ns["session"].system_prompt
    for body in bodies:
        assert body["model"] == "claude-x" and body["max_tokens"] == 8192
        system = body["system"]
        assert "".join(block["text"] for block in system) == prompt
        markers = [b for b in system if "cache_control" in b]
        markers += [
            block for m in body["messages"] for block in m["content"] if "cache_control" in block
        ]
        assert 1 <= len(markers) <= 4 and system[0]["cache_control"] == {"type": "ephemeral"}
        _check_tools(body["tools"], lambda t: t["name"])
        assert all("input_schema" in t for t in body["tools"])
        history = normalize_messages(body["messages"])
        assert pairing_problems(history, allow_pending=False) == []
    results = {
        block["tool_use_id"]: block["content"]
        for m in bodies[2]["messages"] for block in m["content"] if block["type"] == "tool_result"
    }
    assert "create_issue" in json.loads(results["call_1"])["tools"]
    assert json.loads(results["call_3"]) == {"created": TITLE}
    assert capsys.readouterr().out.splitlines()[0] == "Done: issue filed."
