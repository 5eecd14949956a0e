"""The HTML report in a real browser (issue 35): chromium through Playwright.

Each page loads with no console error and no network request (every request that is not a
``file:``/``data:`` URL is aborted and counted), every chart draws (a canvas with painted
pixels), the figures shown - table cells and the charts' series - equal the ``--json`` of the
same run, and the tables read without JavaScript. ``HERMES_REPORT_SCREENSHOT=path`` makes the
real-session test save its screenshot there (docs/report.png is made that way).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli

from browser_support import PageWatch, browser
from report_pages import resolve, same_figure, session

PAINTED = """el => {
  const canvas = el.querySelector('canvas');
  if (!canvas || !canvas.width || !canvas.height) return 0;
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < data.length; i += 4) if (data[i]) painted++;
  return painted;
}"""

SHOWN = """() => Array.from(document.querySelectorAll('[data-path]')).map(
  e => [e.getAttribute('data-path'), e.textContent.trim()])"""

SERIES = """id => echarts.getInstanceByDom(document.getElementById(id)).getOption().series.map(
  s => ({name: s.name, data: s.data}))"""


def run_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def chromium() -> Any:
    with browser() as instance:
        yield instance


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session(30)), encoding="utf-8")
    return path


def open_page(chromium: Any, path: Path, *, javascript: bool = True) -> tuple[Any, PageWatch]:
    page = chromium.new_page(viewport={"width": 1200, "height": 900}, java_script_enabled=javascript)
    watch = PageWatch(page)
    page.goto(path.as_uri())
    if javascript:
        page.wait_for_function("document.body.hasAttribute('data-charts')")
    return page, watch


def check_page(chromium: Any, path: Path, sections: dict[str, Any]) -> Any:
    """Loads clean, every chart painted, every figure shown under a key of ``sections`` equal
    to the same path of its data (the --json of the same run)."""
    page, watch = open_page(chromium, path)
    assert watch.errors == [] and watch.network == []
    plots = page.query_selector_all(".plot")
    assert plots and page.get_attribute("body", "data-charts") == str(len(plots))
    for plot in plots:
        assert plot.evaluate(PAINTED) > 1_000, plot.get_attribute("id")
    checked = dict.fromkeys(sections, 0)
    for where, shown in page.evaluate(SHOWN):
        section, _, rest = where.partition(".")
        if section in sections:
            value = resolve(sections[section], rest)
            assert same_figure(shown, value), (where, shown, value)
            checked[section] += 1
    assert all(checked.values()), checked
    return page


def test_compress_page(chromium: Any, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.html"
    report = run_json("compress", str(transcript), "--context-length", "16000", "--json", "--html", str(out))
    page = check_page(chromium, out, {"compress": report})
    series = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-timeline")}
    context = series["context (tokens in the window)"]
    assert context[-2][1] == report["before"]["tokens"] and context[-1][1] == report["after"]["tokens"]
    page.close()


def test_eval_page_puts_engines_side_by_side(chromium: Any, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.html"
    report = run_json("eval", str(transcript), "--engine", "compressor,window", "--context-length", "16000",
                      "--json", "--html", str(out))
    page = check_page(chromium, out, {"eval": report})
    runs = report["files"][0]["runs"]
    series = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-eval-tokens")}
    assert series["tokens after"] == [r["tokens_after"] for r in runs]
    probes = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-eval-probes")}
    assert probes["lost"] == [sum(c["lost"] for c in r["probes"].values()) for r in runs]
    # Every listed probe is a row on the page (its figures were compared above).
    listed = page.evaluate("() => document.querySelectorAll('[data-path$=\".verdict\"]').length")
    assert listed == sum(len(r["probe_detail"]) for r in runs) > 0
    page.close()


def test_cache_page(chromium: Any, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "cr.html"
    report = run_json("cache-report", str(transcript), "--json", "--html", str(out))
    page = check_page(chromium, out, {"cache": report})
    series = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-cache")}
    assert series["cache read"] == [t["cache_read_tokens"] for t in report["turns"]]
    assert series["cache write"] == [t["cache_write_tokens"] for t in report["turns"]]
    assert series["uncached"] == [t["uncached_tokens"] for t in report["turns"]]
    page.close()


def test_report_page_and_tables_without_javascript(chromium: Any, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    data = run_json("report", str(transcript), "--context-length", "16000", "--engine", "compressor,window",
                    "--json", "--html", str(out))
    check_page(chromium, out, {key: data[key] for key in ("timeline", "compactions", "eval", "probes", "cache")}).close()
    page, watch = open_page(chromium, out, javascript=False)
    assert watch.network == []
    text = page.inner_text("body")
    assert "Tokens by kind" in text and ("Prefix breaks" in text or "No prefix break" in text)
    assert f"{data['timeline']['tokens']:,}" in text
    assert len(page.query_selector_all("table")) >= 8
    page.close()


def test_ten_thousand_messages_load_aggregated(chromium: Any, tmp_path: Path) -> None:
    from hermes_plugins.report.data import MAX_POINTS, timeline
    from hermes_plugins.report.html import render_html

    from compressor_support import work_history

    messages = work_history(2_500, result_chars=400)
    page_path = tmp_path / "10k.html"
    page_path.write_text(render_html({"command": "compress", "source": "10k.json", "timeline": timeline(messages)}),
                         encoding="utf-8")
    page, watch = open_page(chromium, page_path)
    assert watch.errors == [] and watch.network == []
    assert page.query_selector("#chart-timeline").evaluate(PAINTED) > 1_000
    bars = page.evaluate(SERIES, "chart-timeline")[0]["data"]
    assert len(messages) > 10_000 and len(bars) <= MAX_POINTS
    page.close()


def test_real_session_report(chromium: Any, real_sessions_dir: Path, tmp_path: Path) -> None:
    source = real_sessions_dir / "claude-code_8463c716.jsonl"
    out = tmp_path / "real.html"
    data = run_json("report", str(source), "--context-length", "32000", "--json", "--html", str(out))
    assert data["compactions"], "a 137k-token session compacts in a 32k window"
    assert out.stat().st_size <= 5_000_000
    # The session names its model (claude-opus-4-6): the model data prices it in dollars.
    assert data["cache"]["prices"]["model"] and data["cache"]["total"]["saving_usd"] > 0
    assert sum(c["spilled"] for c in data["compactions"]) + data["tool_results"]["after_last_compaction"]["spilled"] \
        == data["tool_results"]["spilled"]
    page = check_page(chromium, out, {key: data[key] for key in ("timeline", "cache", "compactions", "probes")})
    shot = os.environ.get("HERMES_REPORT_SCREENSHOT")
    page.screenshot(path=shot or str(tmp_path / "report.png"))
    page.close()


def test_cache_page_in_dollars(chromium: Any, transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "cr-usd.html"
    report = run_json("cache-report", str(transcript), "--model", "claude-sonnet-4-5", "--json", "--html", str(out))
    page = check_page(chromium, out, {"cache": report})
    series = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-cache")}
    assert series["cumulative saving, USD"] == [t["cumulative_saving_usd"] for t in report["turns"]]
    shown = dict(page.evaluate(SHOWN))
    assert shown["cache.total.saving_usd"] == f"{report['total']['saving_usd']:,.6f}"
    page.close()


def test_report_page_shows_the_spills_per_compaction(chromium: Any, tmp_path: Path) -> None:
    from report_pages import big_session

    source = tmp_path / "big.json"
    source.write_text(json.dumps(big_session()), encoding="utf-8")
    out = tmp_path / "spills.html"
    data = run_json("report", str(source), "--context-length", "16000", "--json", "--html", str(out))
    page = check_page(chromium, out, {"compactions": data["compactions"], "timeline": data["timeline"]})
    series = {s["name"]: s["data"] for s in page.evaluate(SERIES, "chart-compactions")}
    assert series["spilled"] == [c["spilled"] for c in data["compactions"]] and sum(series["spilled"]) > 0
    page.close()
