"""Issue 28, "bounded everywhere": data nested 10,000 deep (a model's tool-call arguments) or a
100,000-deep JSON file never reaches recursive code - every Session entry point keeps working,
the request stays valid and serialisable, the CLI answers with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session, bounded
from hermes_core.cli import cli
from hermes_core.sdk import normalize_messages

from hypothesis_budget import examples

DEPTH = 10_000


def deep_text(n: int) -> str:
    return '{"a":' * n + "1" + "}" * n


def deep_value(n: int) -> Any:
    value: Any = 1
    for _ in range(n):  # built without recursion, as a parser never could
        value = {"a": value}
    return value


# --- the module ---------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab{}[]"\\ ,:', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(alphabet='k{}[]"\\', max_size=3), inner, max_size=3),
    max_leaves=12,
)


def reference_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((reference_depth(v) for v in value), default=0)
    return 0


@settings(max_examples=examples(150), deadline=None)
@given(json_values, st.sampled_from([0, 1, 2, 3, 100]))
def test_the_bracket_scan_measures_what_the_parser_would_build(value: Any, limit: int) -> None:
    # Brackets, quotes and backslashes inside strings are not structure.
    text = json.dumps(value)
    expected = reference_depth(value)
    assert bounded.json_depth(text, limit) == min(expected, limit + 1) or (
        expected <= limit and bounded.json_depth(text, limit) >= expected
    )
    assert (bounded.json_depth(text, limit) > limit) == (expected > limit)
    assert bounded.value_depth(value, limit) == min(expected, limit + 1)


def test_loads_refuses_deep_text_without_recursing() -> None:
    with pytest.raises(bounded.TooDeepError):
        bounded.loads(deep_text(100_000))
    with pytest.raises(bounded.TooDeepError):
        bounded.loads("[" * 101 + "]" * 101)
    assert bounded.loads("[" * 100 + "]" * 100) is not None
    assert bounded.loads('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 3) == {"a": "[" * 41}
    assert bounded.value_depth(deep_value(DEPTH)) == bounded.MAX_DEPTH + 1


# --- the Session entry points -----------------------------------------------------------------------


def _session(tmp_path: Path, provider: str = "openai", window: int = 16_000) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path / "home", model="m", provider=provider,
                        context_length=window, persist=False, env={})


def _history(arguments: str, turns: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start the task"}]
    for i in range(turns):
        args = arguments if i % 3 == 0 else json.dumps({"path": f"f{i}.py"})
        messages.append({"role": "assistant", "content": f"step {i}", "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": "read_file", "arguments": args}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i}\n" * 300})
    messages.append({"role": "user", "content": "continue"})
    return messages


def _calls(request: dict[str, Any]) -> list[Any]:
    out = []
    for message in request["messages"]:
        out.extend(message.get("tool_calls") or ())
        content = message.get("content")
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    return out


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_deep_arguments_give_a_valid_request_on_every_turn(tmp_path: Path, provider: str) -> None:
    session = _session(tmp_path, provider)
    args = deep_text(DEPTH)
    messages = _history(args, turns=4)
    for turn in range(3):  # the deep message stays in the history: later turns work too
        sent = session.before_request(messages)
        request = session.request(sent)
        wire = json.dumps(request)  # what the SDK does with it: no RecursionError either
        assert json.loads(wire) == request
        deep_calls = [c for c in _calls(request) if c.get("id") in ("c0", "toolu_c0")
                      or c.get("function", {}).get("arguments", "").startswith('{"a":{"a"')]
        if provider == "openai":
            # the arguments kept as the original string
            assert any(c["function"]["arguments"] == args for c in deep_calls)
        messages = [*sent, {"role": "assistant", "content": f"turn {turn} done"},
                    {"role": "user", "content": "next"}]


def test_forced_compression_of_a_history_with_deep_arguments(tmp_path: Path) -> None:
    session = _session(tmp_path)
    messages = _history(deep_text(DEPTH))
    result = session.compress(messages)
    assert len(result.messages) < len(messages)
    json.dumps(session.request(result.messages))
    # and the automatic path, over the threshold
    out = session.before_request(messages)
    json.dumps(session.request(out))


def test_anthropic_tool_input_too_deep_to_serialise_becomes_a_note(tmp_path: Path) -> None:
    session = _session(tmp_path, "anthropic")
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "t1", "name": "f", "input": deep_value(DEPTH)}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    ]
    converted = normalize_messages(messages)
    arguments = converted[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == json.loads(bounded.too_deep_note("tool-call arguments"))
    request = session.request(messages)
    json.dumps(request)
    # The host hears of it: a warning at normalisation or the request's conversion report.
    kinds = {w.kind for w in session.warnings}
    assert kinds & {"tool_arguments_too_deep", "request_content_converted"}, kinds


def test_handle_tool_call_answers_deep_arguments_with_an_error(tmp_path: Path) -> None:
    session = _session(tmp_path)
    ran: list[Any] = []

    def invoke(name: str, args: dict[str, Any]) -> str:
        ran.append(name)
        return "ran"

    for arguments in (deep_text(DEPTH), deep_value(DEPTH)):
        answer = session.handle_tool_call("my_tool", arguments, invoke=invoke)
        assert "nested more than 100 levels deep" in json.loads(answer)["error"]
    assert ran == []
    # a bridge call of a deferred (MCP) tool whose inner arguments are a deep JSON string
    # (shallow outside)
    session.assemble_tools([{"type": "function", "source": "mcp-github", "function": {
        "name": "create_issue", "description": "Open a GitHub issue.",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}}])
    answer = session.handle_tool_call(
        "tool_call", json.dumps({"name": "create_issue", "arguments": deep_text(DEPTH)}),
        invoke=invoke)
    assert "nested more than 100 levels deep" in json.loads(answer)["error"]
    assert ran == []
    assert session.handle_tool_call("my_tool", '{"x": 1}', invoke=invoke) == "ran"


def test_the_bridge_refuses_deep_inner_arguments() -> None:
    from hermes_plugins.tools.bridge import _parse_arguments

    for arguments in (deep_text(DEPTH), deep_value(DEPTH)):
        value, problem = _parse_arguments(arguments)
        assert value is None and problem is not None and "100 levels" in problem
    assert _parse_arguments('{"a": [1]}') == ({"a": [1]}, None)


# --- the CLI ----------------------------------------------------------------------------------------


@pytest.fixture(params=["object", "array"])
def deep_file(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    path = tmp_path / "deep.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text('{"messages":' + deep + "}" if request.param == "object" else deep)
    return path


@pytest.mark.parametrize("args", [
    ["cache-report", "{f}"],
    ["tools", "search", "x", "--catalog", "{f}"],
    ["tools", "assemble", "--catalog", "{f}"],
    ["compress", "{f}"],
    ["convert", "{f}"],
])
def test_a_deep_json_file_is_a_one_line_error(deep_file: Path, tmp_path: Path, args: list[str]) -> None:
    argv = ["--home", str(tmp_path / "home"), *[a.format(f=deep_file) for a in args]]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, RecursionError)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(deep_file) in lines[0] and "deep" in lines[0], lines
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [
    ["compress", "{f}"],
    ["cache-report", "{f}"],
    ["eval", "{f}"],
    ["convert", "--to", "anthropic", "{f}"],
    ["convert", "--to", "responses", "{f}"],
])
def test_a_transcript_with_deep_arguments_is_read_and_written(tmp_path: Path, args: list[str]) -> None:
    path = tmp_path / "deepargs.json"
    path.write_text(json.dumps(_history(deep_text(DEPTH), turns=12)))
    argv = ["--home", str(tmp_path / "home"), *[a.format(f=path) for a in args]]
    result = CliRunner().invoke(cli, argv)
    # eval exits 1 when a run fails one of its checks (here: fit); what matters is no crash.
    assert result.exit_code in ((0, 1) if args[0] == "eval" else (0,)), (result.output, result.exception)
    assert not isinstance(result.exception, RecursionError) and "Traceback" not in result.output
    if args[0] == "convert":  # the arguments kept as their original string
        assert json.dumps(deep_text(DEPTH)) in result.stdout


def test_deep_json_tool_results_are_spilled_and_compressed_without_a_plugin_failing(tmp_path: Path) -> None:
    session = _session(tmp_path)
    big = '{"a":' * DEPTH + '"' + "x" * 200_000 + '"' + "}" * DEPTH
    out = session.process_tool_result(big, tool_name="mcp_thing")
    assert "Full output saved to" in out  # spilled like any large result
    messages = _history("{}", turns=20)
    for i in range(2, len(messages), 6):
        if messages[i]["role"] == "tool":
            messages[i] = {**messages[i], "content": deep_text(DEPTH)}
    session.compress(messages)
    json.dumps(session.request(session.before_request(messages)))
    failed = [w for w in session.warnings if w.kind == "plugin_hook_failed"]
    assert failed == [], [w.message for w in failed]


def test_a_tool_schema_nested_too_deep_is_not_compiled_and_the_bridge_still_answers(tmp_path: Path) -> None:
    # An MCP server's schema is outside data too: json.dumps, the nullable rewrite and
    # jsonschema recurse per level, so a schema past the bound is left uncompiled.
    from hermes_plugins.tools.schema_check import SchemaValidators

    schema: dict[str, Any] = {"type": "object"}
    node = schema
    for _ in range(DEPTH):
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"x": child}
        node = child
    validator = SchemaValidators().get(schema)
    assert list(validator.iter_errors({"x": {}})) == []
    assert "levels deep" in validator.reason
