"""``tool_call`` arguments are validated by jsonschema (draft 2020-12) after the coercions:
the keywords the hand-written pass ignored now reject, ``nullable`` admits null, and every
problem names the argument's path."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins.tools import schema_check
from hermes_plugins.tools.bridge import handle_bridge_call
from hermes_plugins.tools.schema_check import SchemaValidators, check, openapi_nullable

from hypothesis_budget import examples

pytest.importorskip("jsonschema")

DEFS = {"$defs": {"tag": {"type": "string", "pattern": "^[a-z]+$"}}}


@pytest.mark.parametrize(
    "value,schema,path,needle",
    [
        ({"tag": "ABC"}, {**DEFS, "properties": {"tag": {"$ref": "#/$defs/tag"}}}, "tag", "does not match"),
        ({"id": "x-1"}, {"properties": {"id": {"type": "string", "pattern": "^[0-9]+$"}}}, "id", "does not match"),
        ({"ids": [1, 1]}, {"properties": {"ids": {"type": "array", "uniqueItems": True}}}, "ids", "non-unique"),
        ({"n": 5}, {"properties": {"n": {"allOf": [{"minimum": 0}, {"maximum": 3}]}}}, "n", "greater than the maximum"),
        ({"n": 7}, {"properties": {"n": {"type": "integer", "multipleOf": 5}}}, "n", "not a multiple of 5"),
        ({"v": 4}, {"properties": {"v": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}, "v", "valid under each of"),
        ({"p": [1, "x"]}, {"properties": {"p": {"prefixItems": [{"type": "integer"}, {"type": "integer"}]}}},
         "p[1]", "not of type 'integer'"),
        ({"a": 1}, {"dependentRequired": {"a": ["b"]}}, "(arguments)", "'b' is a dependency of 'a'"),
        ({"a": 1, "z": 2}, {"properties": {"a": {}}, "unevaluatedProperties": False}, "(arguments)", "'z' was unexpected"),
        ({"when": "yesterday"}, {"properties": {"when": {"type": "string", "format": "date"}}}, "when", "is not a 'date'"),
        ({"items": [{"name": 3}]},
         {"properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
          "$defs": {"item": {"properties": {"name": {"type": "string"}}}}},
         "items[0].name", "is not of type 'string'"),
    ],
)
def test_draft_2020_12_keywords_reject_with_the_argument_path(value: Any, schema: Any, path: str, needle: str) -> None:
    _, problems = check(value, {"type": "object", **schema})
    assert problems and problems[0].startswith(f"{path}: ") and needle in problems[0], problems


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "nullable": True},
        {"type": "integer", "enum": [1, 2], "nullable": True},
        {"$ref": "#/$defs/tag", "nullable": True},
        {"type": ["string", "integer"], "nullable": True},
    ],
)
def test_nullable_admits_null(schema: dict[str, Any]) -> None:
    full = {"type": "object", **DEFS, "properties": {"x": schema}, "required": ["x"]}
    assert check({"x": None}, full) == ({"x": None}, [])
    assert check({"x": None}, {**full, "properties": {"x": {k: v for k, v in schema.items() if k != "nullable"}}})[1]


def test_coercion_comes_first_and_the_library_sees_the_coerced_value() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}}
    assert check({"n": "4"}, schema) == ({"n": 4}, [])
    assert "not a multiple of 2" in check({"n": "5"}, schema)[1][0]


def test_a_broken_schema_or_an_unresolvable_ref_never_crashes() -> None:
    assert check({"a": 1}, {"type": "object", "properties": {"a": {"type": 12}}}) == ({"a": 1}, [])
    problems = check({"a": 1}, {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})[1]
    assert problems and "could not be applied" in problems[0]


def test_a_violating_bridged_call_is_not_invoked() -> None:
    ran: list[Any] = []
    tools = [{"type": "function", "source": "mcp-x", "function": {
        "name": "tag_it", "description": "Tag.",
        "parameters": {"type": "object", "properties": {"tag": {"type": "string", "pattern": "^[a-z]+$"}}}}}]
    answer = handle_bridge_call("tool_call", {"calls": [{"name": "tag_it", "arguments": {"tag": "NO"}}]},
                                tools=tools, config=None, invoke=lambda n, a: ran.append(a) or "ok")
    assert "NOT invoked" in answer and "tag: 'NO' does not match" in answer and ran == []
    answer = handle_bridge_call("tool_call", {"calls": [{"name": "tag_it", "arguments": {"tag": "yes"}}]},
                                tools=tools, config=None, invoke=lambda n, a: ran.append(a) or "ok")
    assert answer == "ok" and ran == [{"tag": "yes"}]


def test_a_hosts_validators_compile_each_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core import PluginHost

    compiled: list[Any] = []
    real = schema_check._compile
    monkeypatch.setattr(schema_check, "_compile", lambda schema: compiled.append(schema) or real(schema))
    tools = [{"type": "function", "source": "mcp-x", "function": {
        "name": "tag_it", "description": "Tag.",
        "parameters": {"type": "object", "properties": {"tag": {"type": "string"}}}}}]
    args = {"calls": [{"name": "tag_it", "arguments": {"tag": "a"}}]}

    def bridged(host: Any) -> Any:
        return handle_bridge_call("tool_call", args, tools=tools, config=None, host=host,
                                  invoke=lambda n, a: "ok")

    host = PluginHost.create(load_entry_points=False, env={})
    bridged(host)
    bridged(host)
    assert len(compiled) == 1 and len(host.state(SchemaValidators)) == 1
    bridged(PluginHost.create(load_entry_points=False, env={}))
    assert len(compiled) == 2  # another host compiles for itself
    bridged(None)
    bridged(None)
    assert len(compiled) == 4  # without a host nothing is kept


json_schemas = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "boolean", "null"])},
                          optional={"nullable": st.booleans()}),
    lambda inner: st.fixed_dictionaries({"type": st.just("object"),
                                         "properties": st.dictionaries(st.sampled_from("abc"), inner, max_size=3)},
                                        optional={"nullable": st.booleans()}),
    max_leaves=6,
)


@settings(max_examples=examples(80), deadline=None)
@given(json_schemas)
def test_openapi_nullable_leaves_no_nullable_keyword_and_admits_null_where_asked(schema: dict[str, Any]) -> None:
    spelled = openapi_nullable(schema)
    assert "nullable" not in str(spelled)
    if schema.get("nullable") is True:
        assert check(None, schema) == (None, [])
