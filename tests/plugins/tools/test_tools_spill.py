"""Spilling big tool results: budgets, previews, the persisted block, writers, the turn budget."""

from __future__ import annotations

import copy
import math
import os
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, ToolCallContext, ToolsContext, hookimpl
from hermes_core.config import Config
from hermes_core.diagnostics import collecting
from hermes_plugins.tools import spill as spill_plugin
from hermes_plugins.tools.budget import (
    DEFAULT_BUDGET,
    PINNED_THRESHOLDS,
    BudgetConfig,
    budget_for_context_window,
)
from hermes_plugins.tools.persist import (
    extract_persisted_path,
    generate_preview,
    persisted_block,
    spill,
)
from hermes_plugins.tools.settings import ToolBudgetSection
from hermes_plugins.tools.spill import enforce_turn_budget, process_tool_result
from hermes_plugins.tools.writers import LocalWriter, RemoteWriter, safe_result_filename

from hypothesis_budget import examples


def spill_dir(home: Path) -> Path:
    return home / "cache" / "spillover"


def ctx_for(tool: str, home: Path, call_id: str = "call_1", **kw: Any) -> ToolCallContext:
    return ToolCallContext(tool_name=tool, tool_call_id=call_id, home=home, config=Config(), **kw)


# --- budgets (§18.1) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "window,result,turn",
    [(200_000, 100_000, 200_000), (65_536, 39_321, 78_643), (16_384, 9_830, 19_660),
     (8_000, 8_000, 16_000), (1_000_000, 100_000, 200_000)],
)
def test_budget_scales_with_the_window(window: int, result: int, turn: int) -> None:
    budget = budget_for_context_window(window)
    assert (budget.default_result_size, budget.turn_budget, budget.preview_size) == (result, turn, 1_500)


@pytest.mark.parametrize("window", [None, 0, -5])
def test_unknown_window_uses_the_default_budget_object(window: int | None) -> None:
    assert budget_for_context_window(window) is DEFAULT_BUDGET
    assert DEFAULT_BUDGET == BudgetConfig()
    custom = budget_for_context_window(window, mcp_result_size=1234)
    assert custom.mcp_result_size == 1234 and custom.default_result_size == 100_000


def test_threshold_resolution() -> None:
    budget = BudgetConfig(tool_overrides={"read_file": 1, "web_extract": 42})
    assert budget.resolve_threshold("read_file") == math.inf == PINNED_THRESHOLDS["read_file"]
    assert budget.resolve_threshold("web_extract") == 42
    assert budget.resolve_threshold("mcp_github_list") == 50_000
    assert budget_for_context_window(65_536).resolve_threshold("mcp_x") == 39_321
    assert budget.resolve_threshold("terminal") == 100_000


def test_budget_is_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        DEFAULT_BUDGET.turn_budget = 1  # type: ignore[misc]


# --- preview and block (§18.2) -------------------------------------------------------------


def test_preview_rules() -> None:
    assert generate_preview("short") == ("short", False)
    exact = "x" * 1_500
    assert generate_preview(exact) == (exact, False)
    text = "a" * 1_000 + "\n" + "b" * 1_000
    assert generate_preview(text) == ("a" * 1_000 + "\n", True)  # newline past half: kept
    early = "a" * 100 + "\n" + "b" * 3_000
    assert generate_preview(early) == (early[:1_500], True)  # newline too early: hard cut


def test_persisted_block_contents() -> None:
    original = "q" * 50_000
    block = persisted_block(original=original, path="/x/tc_1.txt", preview="q" * 10, has_more=True)
    assert block.startswith("<persisted-output>") and block.endswith("</persisted-output>")
    assert "50,000 characters (48.8 KB)" in block
    assert "Full output saved to: /x/tc_1.txt" in block
    assert "read_file" in block and "offset" in block and "limit" in block
    assert "Preview (first 10 chars):\n" + "q" * 10 + "\n..." in block
    assert extract_persisted_path(block) == "/x/tc_1.txt"
    assert extract_persisted_path("plain text") is None
    huge = persisted_block(original="m" * 2_000_000, path="/p", preview="m", has_more=True)
    assert "MB)" in huge


# --- file names -----------------------------------------------------------------------------


def test_safe_file_names() -> None:
    assert safe_result_filename("tc_456") == "tc_456.txt"
    odd = safe_result_filename("../outside/$(whoami);x")
    assert odd.startswith("outside_whoami_x_") and odd.endswith(".txt")
    assert not set("/$;") & set(odd)
    passwd = safe_result_filename("../../etc/passwd")
    assert passwd.startswith("etc_passwd_") and "/" not in passwd and ".." not in passwd
    nul = safe_result_filename("abc\0def")
    assert "\0" not in nul and nul.startswith("abc_def_")
    assert safe_result_filename("a/b") != safe_result_filename("a_b")  # no collision
    assert len(safe_result_filename("z" * 500)) <= 120 + 1 + 12 + 4
    assert safe_result_filename("", "some content").startswith("tool_result_")


@settings(max_examples=examples(150), deadline=None)
@given(st.text())
def test_any_id_gives_a_plain_file_name(call_id: str) -> None:
    name = safe_result_filename(call_id)
    assert name.endswith(".txt") and "/" not in name and "\0" not in name
    assert not name.startswith(".") and not name.startswith("-")
    assert name == os.path.basename(name)


@pytest.mark.parametrize("call_id", ["../../etc/passwd", "a\0b", "..", "/abs/path", "x/../../y"])
def test_hostile_ids_stay_inside_the_spill_directory(tmp_path: Path, call_id: str) -> None:
    out = process_tool_result("w" * 120_000, ctx_for("web_extract", tmp_path, call_id))
    path = Path(extract_persisted_path(out) or "")
    assert path.parent == spill_dir(tmp_path)
    assert path.read_text() == "w" * 120_000


# --- the per-result pipeline ------------------------------------------------------------------


def test_small_results_are_unchanged(tmp_path: Path) -> None:
    assert process_tool_result("small", ctx_for("web_extract", tmp_path)) == "small"
    assert process_tool_result("", ctx_for("web_extract", tmp_path)) == ""
    assert not spill_dir(tmp_path).exists()


def test_big_result_is_spilled_with_size_path_and_preview(tmp_path: Path) -> None:
    content = "".join(f"row {i}\n" for i in range(12_000))  # ~100 KB
    out = process_tool_result(content, ctx_for("web_extract", tmp_path, "tc_456", context_length=32_000))
    assert out.startswith("<persisted-output>") and len(out) < 2_500
    assert f"{len(content):,} characters" in out
    path = extract_persisted_path(out)
    assert path == str(spill_dir(tmp_path) / "tc_456.txt")
    assert Path(path).read_text() == content
    preview = out.split("chars):\n", 1)[1]
    assert preview.startswith("row 0\n") and "\n...\n</persisted-output>" in out


def test_threshold_follows_the_window(tmp_path: Path) -> None:
    content = "k" * 20_000
    assert process_tool_result(content, ctx_for("web_extract", tmp_path, context_length=200_000)) == content
    small = process_tool_result(content, ctx_for("web_extract", tmp_path, context_length=16_384))
    assert small.startswith("<persisted-output>")


def test_read_file_never_spills(tmp_path: Path) -> None:
    content = "\n".join("r" * 100 for _ in range(1_500))  # 151,499 chars, under max_lines
    assert process_tool_result(content, ctx_for("read_file", tmp_path, context_length=8_000)) == content
    assert not spill_dir(tmp_path).exists()


def test_mcp_tools_use_the_mcp_size(tmp_path: Path) -> None:
    config = Config().with_sections(ToolBudgetSection(mcp_result_size_chars=10_000))
    ctx = ToolCallContext(tool_name="mcp_github_list", tool_call_id="m1", home=tmp_path, config=config)
    assert process_tool_result("a" * 9_000, ctx) == "a" * 9_000
    assert process_tool_result("a" * 11_000, ctx).startswith("<persisted-output>")
    assert process_tool_result("a" * 11_000, attrs.evolve(ctx, tool_name="web_extract")) == "a" * 11_000


def test_mcp_envelopes_are_stored_as_pageable_text(tmp_path: Path) -> None:
    import json

    body = "\n".join(f"item {i}" for i in range(20_000))
    envelope = json.dumps({"result": body, "isError": False})
    out = process_tool_result(envelope, ctx_for("web_extract", tmp_path, "env1"))
    stored = Path(extract_persisted_path(out) or "").read_text()
    assert stored.startswith("item 0\nitem 1\n") and stored.endswith('[metadata]\n{"isError": false}')
    assert "Preview (first" in out and "item 0\n" in out


def test_unicode_survives_in_file_and_preview(tmp_path: Path) -> None:
    content = "héllo wörld ✓ 汉字\n" * 8_000
    out = process_tool_result(content, ctx_for("web_extract", tmp_path, "u1"))
    assert "héllo wörld ✓ 汉字" in out
    assert Path(extract_persisted_path(out) or "").read_text(encoding="utf-8") == content


def test_list_content_spills_its_largest_text_part_and_keeps_images(tmp_path: Path) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    parts = [{"type": "text", "text": "caption"}, image, {"type": "text", "text": "d" * 150_000}]
    snapshot = copy.deepcopy(parts)
    out = process_tool_result(parts, ctx_for("web_extract", tmp_path, "l1"))
    assert parts == snapshot  # input untouched
    assert out[0] == parts[0] and out[1] is image
    assert out[2]["text"].startswith("<persisted-output>")


def test_failed_writes_keep_a_preview_and_say_what_was_cut(tmp_path: Path) -> None:
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home directory should be")
    with collecting() as bucket:
        out = process_tool_result("f" * 120_000, ctx_for("web_extract", blocker, "c1"))
    assert out.startswith("f" * 1_500)
    assert "[Truncated: this tool result was 120,000 characters and only the first 1,500 are shown" in out
    assert [w.kind for w in bucket] == ["tool_result_spill_failed"]


# --- writers ----------------------------------------------------------------------------------


def test_local_writer_prunes_old_files_once(tmp_path: Path) -> None:
    directory = spill_dir(tmp_path)
    directory.mkdir(parents=True)
    old, fresh = directory / "old.txt", directory / "fresh.txt"
    old.write_text("o")
    fresh.write_text("f")
    day_ago = time.time() - 25 * 3600
    os.utime(old, (day_ago, day_ago))
    writer = LocalWriter.for_home(tmp_path)
    assert writer("new", "n1.txt") == str(directory / "n1.txt")
    assert not old.exists() and fresh.exists()
    stale = directory / "stale.txt"
    stale.write_text("s")
    os.utime(stale, (day_ago, day_ago))
    writer("again", "n2.txt")
    assert stale.exists()  # pruned once per writer only
    LocalWriter.for_home(tmp_path)("third", "n3.txt")
    assert not stale.exists()  # a writer of its own prunes again


def test_spills_through_a_host_prune_once_per_host(tmp_path: Path) -> None:
    directory = spill_dir(tmp_path)
    directory.mkdir(parents=True)
    day_ago = time.time() - 25 * 3600

    def stale(name: str) -> Path:
        path = directory / name
        path.write_text("s")
        os.utime(path, (day_ago, day_ago))
        return path

    def spill_once(host: PluginHost, call_id: str) -> None:
        spill("x" * 100, tool_name="t", call_id=call_id, preview_size=10, home=tmp_path, host=host)

    host = PluginHost.create(load_entry_points=False, plugins=[(spill_plugin, "spill")])
    first = stale("first.txt")
    spill_once(host, "c1")
    assert not first.exists()
    second = stale("second.txt")
    spill_once(host, "c2")
    assert second.exists()  # this host pruned the directory already
    spill_once(PluginHost.create(load_entry_points=False, plugins=[(spill_plugin, "spill")]), "c3")
    assert not second.exists()  # a fresh host starts with nothing pruned


def test_local_writer_refuses_unsafe_names(tmp_path: Path) -> None:
    writer = LocalWriter.for_home(tmp_path)
    for name in ("../x.txt", "a/b.txt", "..", "", "a\0b"):
        assert writer("data", name) is None
    assert not (tmp_path / "cache" / "x.txt").exists()


class FakeSandbox:
    """A remote executor: runs commands against a dict 'filesystem', records every call."""

    def __init__(self, *, write_rc: int = 0, size_delta: int = 0, probe_rc: int = 0) -> None:
        self.files: dict[str, bytes] = {}
        self.calls: list[tuple[str, str | None, float]] = []
        self.write_rc, self.size_delta, self.probe_rc = write_rc, size_delta, probe_rc
        self.temp_dir = "/sandbox/tmp"

    def run(self, command: str, stdin_data: str | None, timeout: float) -> tuple[int, str]:
        import shlex

        self.calls.append((command, stdin_data, timeout))
        words = shlex.split(command)
        if "cat" in words:
            if "-C" in words and words[-1] in self.files:  # noclobber
                return 1, "cannot overwrite existing file"
            if self.write_rc == 0:
                self.files[words[-1]] = (stdin_data or "").encode()
            return self.write_rc, ""
        if words[:2] == ["test", "-e"]:
            return (0 if words[-1] in self.files else 1), ""
        if words[:2] == ["wc", "-c"]:
            data = self.files.get(words[-1], b"")
            return self.probe_rc, f"{len(data) + self.size_delta}\n"
        if words[:2] == ["rm", "-f"]:
            self.files.pop(words[-1], None)
            return 0, ""
        return 127, "unknown command"


def test_remote_writer_passes_content_on_stdin_never_in_the_command() -> None:
    sandbox = FakeSandbox()
    content = "B" * 1_000_000
    path = RemoteWriter(executor=sandbox, directory="/sandbox/tmp/hermes-results")(content, "call_1.txt")
    assert path == "/sandbox/tmp/hermes-results/call_1.txt"
    command, stdin, timeout = sandbox.calls[0]
    assert stdin == content and timeout == 30
    assert len(command) < 200 and "B" * 10 not in command
    assert command.startswith("mkdir -p -m 700 /sandbox/tmp/hermes-results && umask 077 && set -C && cat > ")
    assert sandbox.files[path] == content.encode()
    assert sandbox.calls[1][0].startswith("wc -c < ") and sandbox.calls[1][2] == 15


def test_remote_writer_quotes_odd_directories() -> None:
    sandbox = FakeSandbox()
    directory = "/tmp/my dir/$(reboot);x"
    path = RemoteWriter(executor=sandbox, directory=directory)("data", "c.txt")
    command = sandbox.calls[0][0]
    assert "'/tmp/my dir/$(reboot);x'" in command
    assert path in sandbox.files


def test_remote_writer_failures() -> None:
    assert RemoteWriter(executor=FakeSandbox(write_rc=1))("data", "c.txt") is None
    mismatch = FakeSandbox(size_delta=-1)
    assert RemoteWriter(executor=mismatch)("data", "c.txt") is None
    assert mismatch.files == {}  # the partial file was removed
    assert RemoteWriter(executor=FakeSandbox(probe_rc=1))("data", "c.txt") is not None  # unprobeable

    class Broken:
        def run(self, command: str, stdin_data: str | None, timeout: float) -> Any:
            raise TimeoutError("sandbox gone")

    assert RemoteWriter(executor=Broken())("data", "c.txt") is None


def test_remote_session_spills_into_the_sandbox(tmp_path: Path, plugin_host: PluginHost) -> None:
    sandbox = FakeSandbox()
    ctx = ctx_for("web_extract", tmp_path, "r1", environment=sandbox, host=plugin_host)
    out = plugin_host.tool_result_process("s" * 120_000, ctx)
    assert extract_persisted_path(out) == "/sandbox/tmp/hermes-results/r1.txt"
    assert not spill_dir(tmp_path).exists()


def test_failed_remote_write_keeps_a_host_copy_and_says_so(tmp_path: Path) -> None:
    ctx = ctx_for("web_extract", tmp_path, "r2", environment=FakeSandbox(write_rc=1))
    with collecting() as bucket:
        out = process_tool_result("s" * 120_000, ctx)
    host_copy = spill_dir(tmp_path) / "r2.txt"
    assert "[Truncated:" in out and str(host_copy) in out
    assert host_copy.read_text() == "s" * 120_000
    assert bucket[0].path == str(host_copy)


def test_unknown_environment_without_executor_falls_back_honestly(tmp_path: Path) -> None:
    out = process_tool_result("s" * 120_000, ctx_for("web_extract", tmp_path, "r3", environment=object()))
    assert "[Truncated:" in out and "could not be saved where the tools can read it" in out


def test_a_third_party_writer_wins(tmp_path: Path, plugin_host: PluginHost, register_plugin: Any) -> None:
    stored: dict[str, str] = {}

    class Bucket:
        @hookimpl
        def hermes_tool_result_writer(self, environment: Any) -> Any:
            def write(content: str, name: str) -> str:
                stored[name] = content
                return f"s3://bucket/{name}"

            return write

    register_plugin(Bucket(), "bucket")
    ctx = ctx_for("web_extract", tmp_path, "b1", host=plugin_host)
    out = plugin_host.tool_result_process("x" * 120_000, ctx)
    assert extract_persisted_path(out) == "s3://bucket/b1.txt"
    assert stored == {"b1.txt": "x" * 120_000}


def test_a_raising_writer_costs_only_the_file(tmp_path: Path, plugin_host: PluginHost, register_plugin: Any) -> None:
    class Broken:
        @hookimpl
        def hermes_tool_result_writer(self, environment: Any) -> Any:
            def write(content: str, name: str) -> str:
                raise OSError("bucket full")

            return write

    register_plugin(Broken(), "broken")
    out = plugin_host.tool_result_process("x" * 120_000, ctx_for("web_extract", tmp_path, host=plugin_host))
    assert "[Truncated:" in out and "a copy was kept on the host" in out.lower()


# --- the turn budget -------------------------------------------------------------------------


def tool_message(call_id: str, content: Any, name: str = "web_extract") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def turn_ctx(home: Path, window: int | None = 16_384, **kw: Any) -> ToolsContext:
    return ToolsContext(context_length=window, config=Config(), home=home, **kw)


def test_turn_within_budget_is_left_alone(tmp_path: Path) -> None:
    results = [tool_message("a", "x" * 5_000), tool_message("b", "y" * 5_000)]
    assert enforce_turn_budget(results, turn_ctx(tmp_path)) is None


def test_largest_results_spill_first_until_the_turn_fits(tmp_path: Path) -> None:
    results = [
        tool_message("small", "s" * 6_000),
        tool_message("big", "b" * 9_000),
        tool_message("mid", "m" * 8_000),
    ]  # 23,000 > 19,660
    snapshot = copy.deepcopy(results)
    out = enforce_turn_budget(results, turn_ctx(tmp_path))
    assert results == snapshot  # never mutated
    assert out is not None and out is not results
    assert out[1]["content"].startswith("<persisted-output>")
    assert out[0] is results[0] and out[2] is results[2]  # the rest was enough
    assert sum(len(m["content"]) for m in out) <= 19_660
    assert (spill_dir(tmp_path) / "big.txt").read_text() == "b" * 9_000


def test_turn_budget_skips_read_file_and_already_spilled_results(tmp_path: Path) -> None:
    spilled = persisted_block(original="p" * 50_000, path="/x", preview="p", has_more=True)
    results = [
        tool_message("r", "r" * 30_000, name="read_file"),
        tool_message("p", spilled),
        tool_message("w", "w" * 4_000),
    ]
    with collecting() as bucket:
        out = enforce_turn_budget(results, turn_ctx(tmp_path))
    assert out is not None
    assert out[0]["content"] == "r" * 30_000 and out[1]["content"] == spilled
    assert out[2]["content"].startswith("<persisted-output>")
    assert [w.kind for w in bucket] == ["tool_turn_budget_exceeded"]


def test_turn_budget_spills_only_the_largest_part_of_a_list(tmp_path: Path) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    parts = [{"type": "text", "text": "t" * 8_000}, image, {"type": "text", "text": "u" * 12_000}]
    out = enforce_turn_budget([tool_message("l", parts)], turn_ctx(tmp_path))
    assert out is not None
    new = out[0]["content"]
    assert new[0] == parts[0] and new[1] is image and new[2]["text"].startswith("<persisted-output>")


def test_turn_budget_through_the_host_uses_the_writer_hook(
    tmp_path: Path, plugin_host: PluginHost, register_plugin: Any
) -> None:
    stored: list[str] = []

    class Bucket:
        @hookimpl
        def hermes_tool_result_writer(self, environment: Any) -> Any:
            return lambda content, name: stored.append(name) or f"mem://{name}"

    register_plugin(Bucket(), "bucket")
    results = [tool_message("a", "a" * 30_000)]
    out = plugin_host.tool_results_turn_budget(results, turn_ctx(tmp_path, host=plugin_host))
    assert stored == ["a.txt"] and extract_persisted_path(out[0]["content"]) == "mem://a.txt"
    assert plugin_host.tool_results_turn_budget(results[:0], turn_ctx(tmp_path)) == []


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=40_000), max_size=6))
def test_turn_budget_invariants(tmp_path_factory: pytest.TempPathFactory, sizes: list[int]) -> None:
    home = tmp_path_factory.mktemp("turn")
    results = [tool_message(f"c{i}", "z" * n) for i, n in enumerate(sizes)]
    snapshot = copy.deepcopy(results)
    out = enforce_turn_budget(results, turn_ctx(home))
    assert results == snapshot
    if sum(sizes) <= 19_660:
        assert out is None
    else:
        assert out is not None and len(out) == len(results)
        assert sum(len(m["content"]) for m in out) <= max(19_660, sum(sizes))
        for before, after in zip(results, out):
            if after["content"] != before["content"]:
                path = extract_persisted_path(after["content"])
                assert path is not None and Path(path).read_text() == before["content"]
