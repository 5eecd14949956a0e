"""The cache economy in dollars (issue 35): the model's prices from the model data price each
request, its cumulative cost and the saving against no caching; the page shows the figures of
the same run's --json, and an unknown model stays in relative units (no price made up)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.payload import assemble_payload
from hermes_plugins.cache_report import CacheSimulator, usd_prices
from hermes_plugins.caching import anthropic_layout
from hermes_plugins.report.html import cache_view, money

from hypothesis_budget import examples
from report_pages import page_data, resolve, session, shown_figures


def run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session(12)), encoding="utf-8")
    return path


def test_prices_come_from_the_model_data() -> None:
    sonnet = usd_prices("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    assert (sonnet["input"], sonnet["cache_read"], sonnet["cache_write_5m"], sonnet["cache_write_1h"]) == (
        3.0, 0.3, 3.75, 6.0)
    # The model's own write price wins over the 1.25x multiplier (claude-3-haiku: 0.30, not 0.3125).
    haiku = usd_prices("anthropic", "claude-3-haiku-20240307")
    assert haiku is not None and haiku["cache_write_5m"] == 0.3 and haiku["cache_write_1h"] == 0.5
    gpt = usd_prices("openai", "gpt-5")
    assert gpt is not None and gpt["cache_read"] == 0.125 and gpt["cache_write_5m"] == gpt["cache_write_1h"] == 0
    # No cached-input price known, or no model: no dollars rather than a guessed price.
    assert usd_prices("openai", "gpt-5-pro") is None
    assert usd_prices("anthropic", "no-such-model") is None and usd_prices("anthropic", "") is None


def test_each_request_is_priced_by_what_it_read_wrote_and_paid_in_full() -> None:
    prices = usd_prices("anthropic", "claude-sonnet-4-5")
    assert prices is not None
    sim = CacheSimulator("anthropic", count=len, read_price=0.1, usd=prices)
    messages: list[dict[str, Any]] = []
    for i in range(6):
        messages = [*messages, {"role": "user", "content": f"question {i} " + "x" * 3_000},
                    {"role": "assistant", "content": f"answer {i}"}]
        # One-hour marks on odd turns: the write of those is priced at the 1 h price.
        sim.add(anthropic_layout(assemble_payload("s" * 2_000, messages, []), ttl="1h" if i % 2 else "5m"))
    report = sim.report()
    assert report["prices"] == prices
    written = 0
    for i, turn in enumerate(report["turns"]):
        write = prices["cache_write_1h"] if i % 2 else prices["cache_write_5m"]
        want = (turn["uncached_tokens"] * 3.0 + turn["cache_read_tokens"] * 0.3 + turn["cache_write_tokens"] * write) / 1e6
        assert turn["cost_usd"] == pytest.approx(want, abs=1e-6)
        written += turn["cache_write_tokens"]
    assert written > 0 and any(t["cache_read_tokens"] for t in report["turns"])
    total = report["total"]
    assert total["cost_usd_without_caching"] == pytest.approx(total["input_tokens"] * 3.0 / 1e6, abs=1e-6)
    assert total["saving_usd"] == pytest.approx(total["cost_usd_without_caching"] - total["cost_usd"], abs=2e-6)
    last = report["turns"][-1]
    assert last["cumulative_cost_usd"] == total["cost_usd"] and last["cumulative_saving_usd"] == total["saving_usd"]
    assert last["cumulative_cost_usd"] == pytest.approx(sum(t["cost_usd"] for t in report["turns"]), abs=1e-5)


def money_cells(page: str, key: str) -> dict[str, str]:
    return {path: shown for path, shown in shown_figures(page).items()
            if path.startswith(f"{key}.") and "usd" in path.rsplit(".", 1)[1]}


def test_cache_report_page_shows_the_dollars_of_its_json(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "cr.html"
    report = json.loads(run("cache-report", str(transcript), "--model", "claude-sonnet-4-5", "--json",
                            "--html", str(out)).stdout)
    assert report["prices"]["model"] == "claude-sonnet-4-5" and report["total"]["saving_usd"] > 0
    page = out.read_text(encoding="utf-8")
    assert page_data(page)["cache"] == report
    cells = money_cells(page, "cache")
    # Three per request plus the three totals, each exactly the JSON's figure.
    assert len(cells) == 3 * len(report["turns"]) + 3
    for path, shown in cells.items():
        assert shown == money(resolve(report, path.split(".", 1)[1])), path
    assert "cached read $0.3" in page and "anthropic/claude-sonnet-4-5" in page


def test_an_unknown_model_stays_in_relative_units(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "cr.html"
    report = json.loads(run("cache-report", str(transcript), "--model", "no-such-model", "--json",
                            "--html", str(out)).stdout)
    assert "prices" not in report and all("cost_usd" not in t for t in report["turns"])
    page = out.read_text(encoding="utf-8")
    assert money_cells(page, "cache") == {} and "uncached-token equivalents" in page
    assert "not in the model data" in page


def test_report_prices_its_replay_at_the_models_rates(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    data = json.loads(run("report", str(transcript), "--context-length", "16000", "--model", "gpt-5",
                          "--provider", "openai", "--json", "--html", str(out)).stdout)
    cache = data["cache"]
    # The model's cached-read rate (gpt-5: 0.1x), not the provider's default (0.5x).
    assert cache["rates"]["read"] == 0.1 and cache["prices"]["cache_read"] == 0.125
    assert cache["total"]["cost_usd"] < cache["total"]["cost_usd_without_caching"]
    page = out.read_text(encoding="utf-8")
    assert page_data(page) == data
    cells = money_cells(page, "cache")
    assert len(cells) == 3 * len(cache["turns"]) + 3
    for path, shown in cells.items():
        assert shown == money(resolve(cache, path.split(".", 1)[1])), path


@settings(max_examples=examples(30), deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["append", "rewrite"]), st.integers(1, 4_000),
                                st.sampled_from(["5m", "1h"])), min_size=1, max_size=12),
       provider=st.sampled_from(["anthropic", "openai"]))
def test_dollar_figures_add_up(steps: list[tuple[str, int, str]], provider: str) -> None:
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gpt-5"
    prices = usd_prices(provider, model)
    assert prices is not None
    sim = CacheSimulator(provider, count=len, min_tokens=200, usd=prices)
    messages: list[dict[str, Any]] = []
    for op, size, ttl in steps:
        if op == "rewrite" and messages:
            messages = [{"role": "user", "content": f"summary {size}"}, *messages[len(messages) // 2:]]
        messages = [*messages, {"role": "user", "content": "q" * size}]
        payload = assemble_payload("s" * 1_500, messages, [])
        sim.add(anthropic_layout(payload, ttl=ttl) if provider == "anthropic" else payload)
    report = sim.report()
    cheapest = min(prices["cache_read"], prices["input"])
    dearest = max(prices["input"], prices["cache_write_1h"])
    spent = plain = 0.0
    for turn in report["turns"]:
        assert turn["input_tokens"] * cheapest / 1e6 - 1e-6 <= turn["cost_usd"] <= turn["input_tokens"] * dearest / 1e6 + 1e-6
        spent += turn["cost_usd"]
        plain += turn["input_tokens"] * prices["input"] / 1e6
        assert turn["cumulative_cost_usd"] == pytest.approx(spent, abs=1e-5)
        assert turn["cumulative_saving_usd"] == pytest.approx(plain - spent, abs=1e-5)
    total = report["total"]
    assert total["cost_usd_without_caching"] == pytest.approx(plain, abs=1e-5)
    assert total["saving_usd"] == report["turns"][-1]["cumulative_saving_usd"]


def test_long_sessions_sum_dollars_per_bucket() -> None:
    turns = [{"index": i, "messages": i + 1, "input_tokens": 1_000, "cache_read_tokens": 900, "cache_write_tokens": 0,
              "uncached_tokens": 100, "cost_ratio": 0.19, "break": None, "cost_usd": 0.00057,
              "cumulative_cost_usd": round(0.00057 * (i + 1), 6), "cumulative_saving_usd": round(0.00243 * (i + 1), 6)}
             for i in range(1_500)]
    view = cache_view(turns)
    assert view["bucket_size"] > 1 and len(view["cost_usd"]) == len(view["labels"])
    assert sum(view["cost_usd"]) == pytest.approx(0.00057 * 1_500, abs=1e-5)
    assert view["cumulative_saving_usd"][-1] == turns[-1]["cumulative_saving_usd"]


def test_cache_report_text_names_the_dollars(transcript: Path) -> None:
    out = run("cache-report", str(transcript), "--model", "claude-sonnet-4-5").stdout
    report = json.loads(run("cache-report", str(transcript), "--model", "claude-sonnet-4-5", "--json").stdout)
    assert f"${report['total']['saving_usd']:,.6f}" in out and "anthropic/claude-sonnet-4-5" in out
    assert "in dollars" not in run("cache-report", str(transcript)).stdout
