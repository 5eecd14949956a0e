"""The extractive summary's shortcuts give what the general reads give (issue 13).

A summary over 100k messages reads thousands of calls; what it asks of a tool's name is
decided once per name (``_kind_of``), and ``file_actions`` is asked only of tools that can
name files. These properties hold the shortcuts to the plain definitions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins._common import toolkinds
from hermes_plugins._common.toolkinds import file_actions
from hermes_plugins.compressor import facts as facts_module
from hermes_plugins.compressor import oneliners
from hermes_plugins.compressor.facts import _kind_of

from hypothesis_budget import examples

_NAMES = sorted(
    toolkinds.SHELL_TOOLS | toolkinds.READ_TOOLS | toolkinds.WRITE_TOOLS | toolkinds.EDIT_TOOLS
    | toolkinds.PATCH_TOOLS | toolkinds.SEARCH_TOOLS | toolkinds.EDITOR_TOOLS | toolkinds.DATA_TOOLS
    | set(oneliners._BY_TOOL) | {"TodoWrite", "todo", "todo_write", "clarify", "acme_lookup", "x;y", "a\nb",
                                 "duplicate tool output", "MEDIA:x"}
)
_names = st.one_of(st.sampled_from(_NAMES), st.text(max_size=12))
_args = st.dictionaries(
    st.sampled_from(["command", "cmd", "path", "file_path", "input", "patch", "mode", "question", "todos"]),
    st.one_of(st.text(max_size=30), st.lists(st.sampled_from(["bash", "-lc", "apply_patch", "ls"]), max_size=3),
              st.just("*** Begin Patch\n*** Update File: a.py\n"), st.just("view"), st.just("patch"), st.none()),
    max_size=4,
)


@settings(max_examples=examples(150), deadline=None)
@given(_names, _args)
def test_a_names_kind_is_what_the_tool_sets_say(name: str, args: dict[str, Any]) -> None:
    kind = _kind_of(name)
    assert kind[facts_module._ARGUMENT] == (name in facts_module._ARGUMENT_TOOLS)
    assert kind[facts_module._SHELL] == (name in toolkinds.SHELL_TOOLS)
    assert kind[facts_module._PLAIN] == (name not in toolkinds.EDIT_TOOLS and oneliners.plain_line_certain(name, "{}"))
    assert kind[facts_module._LINE] == (name in facts_module._LINE_TOOLS)
    assert kind[facts_module._SPECIAL] == (name in facts_module._TODO_TOOLS or name == "clarify")
    # ``file_actions`` is skipped only where it finds nothing.
    asked = kind[facts_module._FILES] and (not kind[facts_module._SHELL] or isinstance(args.get("command"), list))
    if not asked:
        assert file_actions(name, args, "[File: src/a.py (3 lines total)]") == []


@settings(max_examples=examples(150), deadline=None)
@given(_names, st.one_of(st.text(max_size=40), st.sampled_from(['{"path": "a.py"}', '{"a": [1]}', '{"k": "a;b"}'])))
def test_plain_lines_decided_in_two_parts_as_in_one(name: str, arguments: str) -> None:
    whole = oneliners.plain_line_certain(name, arguments)
    assert whole == (oneliners.plain_line_name(name) and oneliners.plain_line_arguments(name, arguments))


_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(alphabet="ab: 1.e[{}", max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.text(alphabet="ab", max_size=2), inner, max_size=2)),
    max_leaves=4,
)


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(st.text(alphabet="abk: 1", max_size=4), _json_values, max_size=4), st.booleans(), st.booleans())
def test_the_arguments_part_of_a_plain_line_is_what_parsing_finds(args: dict[str, Any], compact: bool, parsed: bool) -> None:
    import json

    arguments = json.dumps(args, separators=(",", ":") if compact else None)
    given_args = oneliners.parse_arguments(arguments) if parsed else None
    plain = "\\" not in arguments and ";" not in arguments and "MEDIA:" not in arguments and all(
        v is None or type(v) in (str, int, bool) for v in oneliners.parse_arguments(arguments).values())
    assert oneliners.plain_line_arguments("acme", arguments, given_args) == plain
