"""``tool_output.*`` limits: defaults, lenient parsing from config.yaml, read once, helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import PluginHost, ToolCallContext
from hermes_core.config import Config, known_keys
from hermes_core.diagnostics import collecting
from hermes_plugins.tools import output_limits as ol
from hermes_plugins.tools.settings import ToolOutputSection


def write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text)


def test_defaults_without_a_config_file(hermes_home: Path) -> None:
    assert ol.get_tool_output_limits() == ol.ToolOutputLimits(
        max_bytes=50_000, max_lines=2_000, max_line_length=2_000
    )
    assert (ol.get_max_bytes(), ol.get_max_lines(), ol.get_max_line_length()) == (50_000, 2_000, 2_000)


def test_configured_values_are_returned(hermes_home: Path) -> None:
    write_config(hermes_home, "tool_output:\n  max_bytes: 111\n  max_lines: 222\n  max_line_length: 333\n")
    assert (ol.get_max_bytes(), ol.get_max_lines(), ol.get_max_line_length()) == (111, 222, 333)


def test_partial_override_keeps_other_defaults(hermes_home: Path) -> None:
    write_config(hermes_home, "tool_output:\n  max_lines: 50\n")
    assert ol.get_tool_output_limits() == ol.ToolOutputLimits(max_lines=50)


@pytest.mark.parametrize("bad", ["null", '"not a number"', "-1", "0", "[]", "{}", "true"])
def test_bad_values_fall_back_to_the_default_with_a_warning(hermes_home: Path, bad: str) -> None:
    write_config(hermes_home, f"tool_output:\n  max_bytes: {bad}\n  max_lines: 7\n")
    with collecting() as bucket:
        limits = ol.get_tool_output_limits()
    assert limits == ol.ToolOutputLimits(max_lines=7)
    assert [w.details.get("key") for w in bucket] == ["tool_output.max_bytes"]


def test_numeric_strings_are_accepted(hermes_home: Path) -> None:
    write_config(hermes_home, 'tool_output:\n  max_bytes: "75000"\n')
    assert ol.get_max_bytes() == 75_000


@pytest.mark.parametrize("text", ["tool_output: 5\n", "tool_output: [1, 2]\n", "tool_output: {max_bytes: [\n"])
def test_unusable_section_or_file_means_defaults_and_a_warning(hermes_home: Path, text: str) -> None:
    write_config(hermes_home, text)
    with collecting() as bucket:
        limits = ol.get_tool_output_limits()
    assert limits == ol.DEFAULT_LIMITS
    assert [w.kind for w in bucket] == ["tool_output_config_unreadable"]


def test_values_are_read_once_per_host(hermes_home: Path) -> None:
    host = PluginHost.create(load_entry_points=False, env={})
    ctx = ToolCallContext(tool_name="read_file", home=hermes_home, host=host)
    write_config(hermes_home, "tool_output:\n  max_lines: 10\n")
    assert ol.limits_for(ctx).max_lines == 10
    write_config(hermes_home, "tool_output:\n  max_lines: 20\n")
    assert ol.limits_for(ctx).max_lines == 10  # this host read the file already
    fresh = ToolCallContext(tool_name="read_file", home=hermes_home, host=PluginHost.create(load_entry_points=False, env={}))
    assert ol.limits_for(fresh).max_lines == 20
    assert ol.get_max_lines() == 20  # the accessors have no host: they read the file now
    write_config(hermes_home, "tool_output:\n  max_lines: 30\n")
    assert ol.get_max_lines() == 30


def test_cache_is_keyed_by_home(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    write_config(a, "tool_output:\n  max_lines: 1\n")
    write_config(b, "tool_output:\n  max_lines: 2\n")
    assert (ol.get_max_lines(a), ol.get_max_lines(b)) == (1, 2)


def test_the_config_model_documents_the_section() -> None:
    declared = PluginHost.create(only=(), env={}).config_sections()
    assert {"tool_output.max_bytes", "tool_output.max_lines", "tool_output.max_line_length"} <= set(known_keys(declared))
    assert next(s for s in declared if s.name == "tool_output").plugin == "spill"
    assert ol.limits_from_config(Config()) == ol.DEFAULT_LIMITS


@pytest.mark.parametrize(
    "limit,cap,expected",
    [(1000, 50, 50), (10, 50, 10), (None, 50, 50), (0, 50, 50), (-3, 50, 50), ("20", 50, 20), ("x", 50, 50)],
)
def test_read_file_pagination_is_clamped(limit: Any, cap: int, expected: int) -> None:
    assert ol.clamp_read_limit(limit, cap) == expected


def test_read_file_clamp_uses_the_configured_max_lines(hermes_home: Path) -> None:
    write_config(hermes_home, "tool_output:\n  max_lines: 50\n")
    assert ol.clamp_read_limit(1000) == 50


def test_terminal_output_keeps_head_and_tail_and_says_what_was_cut() -> None:
    text = "".join(f"{i:05d}\n" for i in range(20_000))  # 120,000 chars
    clipped = ol.clip_terminal_output(text, 50_000)
    assert len(clipped) <= 50_000
    assert clipped.startswith("00000\n") and clipped.endswith("19999\n")
    assert "70,000 characters of output cut here" in clipped
    assert ol.clip_terminal_output("short", 50_000) == "short"


def test_long_lines_are_cut_with_a_note() -> None:
    text = "ok\n" + "y" * 2_500 + "\nend"
    clipped, count = ol.clip_long_lines(text, 2_000)
    assert count == 1
    lines = clipped.split("\n")
    assert lines[0] == "ok" and lines[2] == "end"
    assert lines[1] == "y" * 2_000 + " [... 500 more characters on this line]"


def test_pages_are_cut_at_max_lines_with_where_to_read_on() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101))
    page = ol.cap_page(text, 40, offset=11)
    assert page.split("\n")[:40] == [f"line {i}" for i in range(1, 41)]
    assert "read on with read_file offset=51" in page
    assert ol.cap_page("a\nb", 40) == "a\nb"


def test_the_pipeline_applies_read_file_limits_from_config(tmp_path: Path, plugin_host: PluginHost) -> None:
    (tmp_path / "config.yaml").write_text("tool_output:\n  max_lines: 3\n  max_line_length: 4\n")
    ctx = ToolCallContext(tool_name="read_file", home=tmp_path, arguments={"offset": 1})
    out = plugin_host.tool_result_process("abcdefgh\n2\n3\n4\n5", ctx)
    assert out.startswith("abcd [... 4 more characters on this line]\n2\n3\n")
    assert "offset=4" in out


def test_the_pipeline_caps_terminal_output_at_max_bytes(plugin_host: PluginHost, tmp_path: Path) -> None:
    config = Config().with_sections(ToolOutputSection(max_bytes=10_000))
    ctx = ToolCallContext(tool_name="terminal", tool_call_id="t1", home=tmp_path, config=config)
    out = plugin_host.tool_result_process("z" * 12_000, ctx)
    assert out.startswith("<persisted-output>")  # the full output is kept in a file
    assert (tmp_path / "cache" / "spillover" / "t1.txt").read_text() == "z" * 12_000
    assert plugin_host.tool_result_process("z" * 9_000, ctx) == "z" * 9_000


def attrs_evolve(obj: Any, **changes: Any) -> Any:
    import attrs

    return attrs.evolve(obj, **changes)
