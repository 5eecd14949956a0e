"""The bridge tools' dispatch (tool_search / tool_describe / tool_call) and argument checking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, ToolCallContext, hookimpl
from hermes_core.config import Config
from hermes_plugins.tools.bridge import handle_bridge_call
from hermes_plugins.tools.schema_check import check
from hermes_plugins.tools.settings import ToolSearchSection

from hypothesis_budget import examples
from tool_catalog import CATALOG, needs_stemmer, tool

TODO = tool(
    "acme_todo",
    "Replace the todo list.",
    source="plugin-acme",
    todos={
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "status": {"type": "string", "enum": ["pending", "done"]},
            },
            "required": ["id", "status"],
        },
    },
    count={"type": "integer"},
)
TODO["function"]["parameters"]["required"] = ["todos"]
TOOLS = [*CATALOG, TODO]


class Recorder:
    def __init__(self, result: Any = "ok") -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.result = result

    def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((name, arguments))
        return self.result


def call(name: str, arguments: Any, invoke: Any = None, **kwargs: Any) -> Any:
    return handle_bridge_call(
        name, arguments, tools=TOOLS, config=kwargs.pop("config", None),
        invoke=invoke or Recorder(), **kwargs,
    )


def as_json(answer: Any) -> dict[str, Any]:
    data = json.loads(answer)
    assert isinstance(data, dict)
    return data


# --- tool_search ---------------------------------------------------------------------------


@needs_stemmer
def test_search_returns_names_and_short_summaries() -> None:
    data = as_json(call("tool_search", {"queries": ["create issue", "refund"]}))
    assert data["total_available"] == 19
    assert [r["matches"] for r in data["results"]] == [
        ["github_create_issue", "github_list_issues"], ["stripe_refund_payment"],
    ]
    summary = data["tools"]["github_create_issue"]
    assert summary == {
        "source": "github",
        "source_name": "mcp-github",
        "description": "Create a new issue in a GitHub repository.",
        "required": ["owner", "repo", "title"],
    }


def test_search_accepts_json_text_and_a_single_string() -> None:
    data = as_json(call("tool_search", json.dumps({"queries": "refund"})))
    assert data["results"][0]["matches"] == ["stripe_refund_payment"]


@pytest.mark.parametrize(
    "arguments,needle",
    [
        ({}, "'queries' must be a list"),
        ({"queries": []}, "at least one non-blank query"),
        ({"queries": ["  ", ""]}, "at least one non-blank query"),
        ({"queries": [1, 2]}, "'queries' must be a list"),
        ({"queries": [f"q{i}" for i in range(8)]}, "too many queries"),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_search_arguments_are_clear_errors(arguments: Any, needle: str) -> None:
    assert needle in as_json(call("tool_search", arguments))["error"]


def test_empty_match_lists_sources_and_a_hint() -> None:
    data = as_json(call("tool_search", {"queries": ["xylophone"]}))
    group = data["results"][0]
    assert group["matches"] == [] and data["tools"] == {}
    assert {"name": "github", "tool_count": 5} in group["available_sources"]
    assert "try other keywords" in group["hint"]


def test_limit_defaults_from_config_and_is_clamped() -> None:
    many = [tool(f"widget_{i}", "A widget tool.", source="mcp-widgets") for i in range(60)]
    answer = handle_bridge_call(
        "tool_search", {"queries": ["widget"]}, tools=many, config=None, invoke=Recorder()
    )
    assert len(as_json(answer)["results"][0]["matches"]) == 5
    answer = handle_bridge_call(
        "tool_search", {"queries": ["widget"], "limit": 999}, tools=many,
        config=ToolSearchSection(max_search_limit=7), invoke=Recorder(),
    )
    assert len(as_json(answer)["results"][0]["matches"]) == 7
    config = Config()
    answer = handle_bridge_call(
        "tool_search", {"queries": ["widget"], "limit": "3"}, tools=many, config=config, invoke=Recorder()
    )
    assert len(as_json(answer)["results"][0]["matches"]) == 3


def test_long_descriptions_are_clipped_in_summaries() -> None:
    tools = [tool("verbose_tool", "word " * 300, source="mcp-verbose")]
    data = as_json(handle_bridge_call(
        "tool_search", {"queries": ["verbose"]}, tools=tools, config=None, invoke=Recorder()
    ))
    description = data["tools"]["verbose_tool"]["description"]
    assert len(description) <= 501 and description.endswith("…")


def test_search_sees_the_live_definitions_on_every_call() -> None:
    tools = list(TOOLS)
    assert as_json(call("tool_search", {"queries": ["radar"]}))["results"][0]["matches"] == []
    tools.append(tool("weather_radar", "Rain radar.", source="plugin-weather"))
    answer = handle_bridge_call("tool_search", {"queries": ["radar"]}, tools=tools, config=None, invoke=Recorder())
    assert as_json(answer)["results"][0]["matches"] == ["weather_radar"]


# --- tool_describe -------------------------------------------------------------------------


def test_describe_gives_full_schemas() -> None:
    data = as_json(call("tool_describe", {"names": ["acme_todo", "acme_todo", "nope", "terminal", "tool_call"]}))
    assert list(data["tools"]) == ["acme_todo"]
    assert data["tools"]["acme_todo"]["parameters"] == TODO["function"]["parameters"]
    assert data["not_found"] == ["nope"] and "tool_search" in data["hint"]
    assert "listed directly" in data["errors"]["terminal"]
    assert "bridge tool" in data["errors"]["tool_call"]


def test_describe_limits_the_number_of_names() -> None:
    assert "at most 10" in as_json(call("tool_describe", {"names": [f"n{i}" for i in range(11)]}))["error"]
    assert "exact tool names" in as_json(call("tool_describe", {}))["error"]


# --- tool_call -----------------------------------------------------------------------------


def test_call_runs_the_real_tool_with_checked_arguments() -> None:
    invoke = Recorder("done")
    answer = call(
        "tool_call",
        {"calls": [{"name": "acme_todo", "arguments": {"todos": [{"id": "42", "status": "done"}], "count": "3"}}]},
        invoke,
    )
    assert answer == "done"
    assert invoke.calls == [("acme_todo", {"todos": [{"id": 42, "status": "done"}], "count": 3})]


def test_call_accepts_json_argument_text_and_the_flat_form() -> None:
    invoke = Recorder()
    call("tool_call", {"name": "weather_forecast", "arguments": '{"city": "Oslo"}'}, invoke)
    assert invoke.calls == [("weather_forecast", {"city": "Oslo"})]


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_blank_arguments_mean_an_empty_object(blank: Any) -> None:
    invoke = Recorder()
    call("tool_call", {"calls": [{"name": "slack_list_channels", "arguments": blank}]}, invoke)
    assert invoke.calls == [("slack_list_channels", {})]


def test_missing_required_argument_is_not_invoked_and_shows_the_schema() -> None:
    invoke = Recorder()
    data = as_json(call("tool_call", {"calls": [{"name": "acme_todo", "arguments": {}}]}, invoke))
    assert "NOT invoked" in data["error"]
    assert data["schema"] == TODO["function"]["parameters"]
    assert data["problems"] == ["(arguments): missing required property 'todos'"]
    assert invoke.calls == []


def test_invalid_enum_reports_the_path_and_the_constraint() -> None:
    invoke = Recorder()
    data = as_json(call(
        "tool_call",
        {"calls": [{"name": "acme_todo", "arguments": {"todos": [{"id": 1, "status": "later"}]}}]},
        invoke,
    ))
    assert data["problems"] == ["todos[0].status: must be one of 'pending', 'done'; got 'later'"]
    assert invoke.calls == []


def test_malformed_argument_json_is_reported() -> None:
    invoke = Recorder()
    data = as_json(call("tool_call", {"calls": [{"name": "acme_todo", "arguments": '{"todos": ['}]}, invoke))
    assert "not valid JSON" in data["error"] and "NOT invoked" in data["error"]
    assert invoke.calls == []


@pytest.mark.parametrize(
    "target,needle",
    [
        ("tool_call", "bridge tool"),
        ("tool_search", "bridge tool"),
        ("terminal", "directly-listed tool"),
        ("no_such_tool", "tool_search"),
    ],
)
def test_call_refuses_what_it_must_not_run(target: str, needle: str) -> None:
    invoke = Recorder()
    error = as_json(call("tool_call", {"calls": [{"name": target, "arguments": {}}]}, invoke))["error"]
    assert needle in error
    assert invoke.calls == []


def test_one_call_at_a_time() -> None:
    invoke = Recorder()
    calls = [{"name": "slack_list_channels"}, {"name": "slack_list_channels"}]
    assert "one tool per call" in as_json(call("tool_call", {"calls": calls}, invoke))["error"]
    assert invoke.calls == []


def test_a_failing_tool_becomes_an_error_for_the_model() -> None:
    def boom(name: str, arguments: dict[str, Any]) -> Any:
        raise RuntimeError("disk on fire")

    data = as_json(call("tool_call", {"calls": [{"name": "slack_list_channels"}]}, boom))
    assert "disk on fire" in data["error"]


def test_unknown_bridge_name_is_an_error() -> None:
    assert "not a bridge tool" in as_json(call("terminal", {}))["error"]


def test_real_result_goes_through_the_hosts_result_processing(plugin_host: PluginHost, register_plugin: Any) -> None:
    seen: list[ToolCallContext] = []

    class Watcher:
        @hookimpl
        def hermes_tool_result_process(self, content: Any, ctx: ToolCallContext) -> Any:
            seen.append(ctx)
            return f"processed:{content}"

    register_plugin(Watcher(), "watcher")
    bridge_ctx = ToolCallContext(tool_name="tool_call", tool_call_id="call_9", context_length=32_000)
    answer = call(
        "tool_call", {"calls": [{"name": "weather_forecast", "arguments": {"city": "Oslo"}}]},
        Recorder("sunny"), host=plugin_host, ctx=bridge_ctx,
    )
    assert answer == "processed:sunny"
    assert seen[0].tool_name == "weather_forecast"
    assert seen[0].tool_call_id == "call_9" and seen[0].context_length == 32_000
    assert dict(seen[0].arguments) == {"city": "Oslo"}


def test_without_a_host_the_builtin_pipeline_spills_big_results(tmp_path: Path) -> None:
    big = "line\n" * 40_000
    ctx = ToolCallContext(tool_name="tool_call", tool_call_id="call_big", home=tmp_path)
    answer = call("tool_call", {"calls": [{"name": "postgres_run_query", "arguments": {"sql": "select"}}]},
                  Recorder(big), ctx=ctx)
    assert answer.startswith("<persisted-output>")
    assert (tmp_path / "cache" / "spillover" / "call_big.txt").read_text() == big


def test_direct_and_bridged_calls_are_processed_alike(plugin_host: PluginHost, tmp_path: Path) -> None:
    big = "x" * 120_000
    ctx = ToolCallContext(tool_name="postgres_run_query", tool_call_id="c1", home=tmp_path, host=plugin_host)
    direct = plugin_host.tool_result_process(big, ctx)
    bridged = call("tool_call", {"name": "postgres_run_query", "arguments": {"sql": "x"}},
                   Recorder(big), host=plugin_host, ctx=ctx)
    assert bridged == direct and direct.startswith("<persisted-output>")


# --- schema_check ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,schema,expected",
    [
        ("42", {"type": "integer"}, 42),
        (" -7 ", {"type": "integer"}, -7),
        (3.0, {"type": "integer"}, 3),
        ("2.5", {"type": "number"}, 2.5),
        ("true", {"type": "boolean"}, True),
        ("x", {"type": ["integer", "string"]}, "x"),
        (None, {"type": ["string", "null"]}, None),
        ({"a": "1"}, {"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}),
        (["1", "2"], {"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ("5", {"anyOf": [{"type": "boolean"}, {"type": "integer"}]}, 5),
    ],
)
def test_accepted_values_and_coercions(value: Any, schema: Any, expected: Any) -> None:
    assert check(value, schema) == (expected, [])


@pytest.mark.parametrize(
    "value,schema,problem",
    [
        ("4.5", {"type": "integer"}, "(arguments): expected integer, got string '4.5'"),
        (True, {"type": "integer"}, "(arguments): expected integer, got boolean True"),
        ({"a": 1}, {"type": "object", "properties": {"a": {"type": "string"}}}, "a: expected string, got integer 1"),
        ({"b": 1}, {"type": "object", "additionalProperties": False, "properties": {"a": {}}}, "b: unexpected property (known: a)"),
        ([1, 2, 3], {"type": "array", "maxItems": 2}, "(arguments): allows at most 2 items; got 3"),
        ("", {"type": "string", "minLength": 1}, "(arguments): needs at least 1 characters; got 0"),
        (11, {"type": "integer", "maximum": 10}, "(arguments): must be at most 10; got 11"),
        ({"x": {"y": [{"z": "no"}]}},
         {"properties": {"x": {"properties": {"y": {"items": {"properties": {"z": {"const": "yes"}}}}}}}},
         "x.y[0].z: must be 'yes'; got 'no'"),
        ("x", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, "(arguments): matches none of the allowed shapes (anyOf)"),
    ],
)
def test_rejected_values_name_path_and_constraint(value: Any, schema: Any, problem: str) -> None:
    assert check(value, schema)[1] == [problem]


@settings(max_examples=examples(100), deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=10,
))
def test_an_empty_schema_accepts_anything_unchanged(value: Any) -> None:
    assert check(value, {}) == (value, [])


def test_summaries_belong_to_the_tool_found_whatever_the_shapes() -> None:
    flat = {"name": "flat_tool", "description": "Flat shape with a kazoo.", "parameters": {}, "source": "mcp-k"}
    tools = [flat, {"type": "function"}, *TOOLS,
             {"name": "other_flat", "description": "Kazoo two.", "source": "mcp-k"}]
    data = json.loads(handle_bridge_call(
        "tool_search", {"queries": ["kazoo", "refund"]}, tools=tools, config=None, invoke=Recorder()
    ))
    assert data["tools"]["flat_tool"]["description"] == "Flat shape with a kazoo."
    assert data["tools"]["other_flat"]["description"] == "Kazoo two."
    assert data["tools"]["stripe_refund_payment"]["required"] == ["payment"]
