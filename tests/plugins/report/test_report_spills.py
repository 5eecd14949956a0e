"""'Spilled' in what each compaction did (issue 35): the report's replay runs each tool result
through the tool-result pipeline as it arrives (output limits, spill to file, turn budget),
with the spill files in a temporary folder it removes - never the user's home - and counts
per compaction the results spilled or limited since the previous one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.report.replay import replay_session
from hermes_plugins.report.spills import ReplaySpills, is_spilled
from hermes_plugins.tools.persist import extract_persisted_path

from compressor_support import assistant, call, system, tool, user
from report_pages import BIG, BIG_AT, assert_figures_match, big_session, page_data


def expected_spills(compactions: list[dict[str, Any]]) -> list[int]:
    """The big results between the previous compaction and each one (where it fired)."""
    out, previous = [], -1
    for c in compactions:
        out.append(sum(1 for i in BIG_AT if previous < i <= c["message"]))
        previous = c["message"]
    return out


def test_spills_are_counted_per_compaction_and_in_total(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    lived = replay_session(big_session(), engine="compressor", context_length=16_000, config=load_config(),
                           host=PluginHost.create(), home=home)
    totals = lived["tool_results"]
    assert totals["spilled"] == 6 and totals["limited"] == 0
    assert lived["compactions"]
    per_compaction = sum(c["spilled"] for c in lived["compactions"])
    assert per_compaction + totals["after_last_compaction"]["spilled"] == 6
    assert [c["spilled"] for c in lived["compactions"]] == expected_spills(lived["compactions"])
    assert lived["compactions"][0]["spilled"] >= 4
    # Nothing was written into the user's home.
    assert list(home.rglob("*")) == []


def test_a_spill_file_lives_in_a_temporary_folder_until_close(tmp_path: Path) -> None:
    messages = [system("s"), user("build"), assistant("", call("c1", "bash", command="make")), tool("c1", BIG)]
    spills = ReplaySpills(messages, config=load_config(), host=PluginHost.create(), context_length=16_000)
    try:
        out = spills.process(1, [dict(m) for m in messages[1:]])
        assert out[0] == messages[1] and out[1] == messages[2]
        assert is_spilled(out[2]["content"]) and not is_spilled(BIG)
        path = Path(extract_persisted_path(out[2]["content"]) or "")
        assert path.read_text(encoding="utf-8") == BIG
        assert not path.is_relative_to(Path.home())
    finally:
        spills.close()
    assert not path.exists() and not path.parent.exists()
    assert (spills.spilled, spills.limited) == (1, 0)


def test_the_turn_budget_spills_results_each_under_the_threshold() -> None:
    results = [tool(f"c{i}", f"{i}" * 9_000) for i in range(3)]  # 9,000 < 9,600 each; 27,000 > 19,200 a turn
    messages = [user("go"), assistant("", *[call(f"c{i}", "bash", command="x") for i in range(3)]), *results]
    spills = ReplaySpills(messages, config=load_config(), host=PluginHost.create(), context_length=16_000)
    try:
        out = spills.process(0, [dict(m) for m in messages])
    finally:
        spills.close()
    assert spills.spilled >= 1 and spills.spilled == sum(is_spilled(m["content"]) for m in out[2:])


def test_a_read_page_is_limited_not_spilled() -> None:
    long_line = "x" * 5_000  # over tool_output.max_line_length (2,000)
    messages = [user("read it"), assistant("", call("r1", "read_file", path="a.txt")), tool("r1", long_line)]
    spills = ReplaySpills(messages, config=load_config(), host=PluginHost.create(), context_length=16_000)
    try:
        out = spills.process(0, [dict(m) for m in messages])
    finally:
        spills.close()
    assert (spills.spilled, spills.limited) == (0, 1)
    assert len(out[2]["content"]) < len(long_line) and not is_spilled(out[2]["content"])


def test_report_json_and_page_show_the_spills(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(big_session()), encoding="utf-8")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(path), "--context-length", "16000", "--json", "--html", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["tool_results"]["spilled"] == 6
    assert [c["spilled"] for c in data["compactions"]] == expected_spills(data["compactions"])
    page = out.read_text(encoding="utf-8")
    assert page_data(page) == data
    assert "spilled before it" in page and "6 spilled to a file" in page
    assert assert_figures_match(page, data["compactions"], "compactions") > 0
    assert all(f'data-path="compactions.{i}.spilled"' in page for i in range(len(data["compactions"])))
