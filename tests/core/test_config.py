"""The configuration model: defaults, provenance, clear errors, lenient sections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.config import Config, known_keys, load_config, resolve_home
from hermes_core.diagnostics import collecting
from hermes_core.errors import ConfigError
from hermes_core.host import PluginHost


@pytest.fixture(scope="module")
def builtins() -> list:
    """The built-in plugins' declared sections (plugins own their keys)."""
    return PluginHost.create(only=(), env={}).config_sections()


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    path.write_text(text)
    return path


def test_missing_file_means_every_default(tmp_path: Path, builtins: list) -> None:
    assert load_config(home=tmp_path / "nowhere", env={}) == Config()
    config = load_config(home=tmp_path / "nowhere", env={}, sections=builtins)
    assert config.path is None
    assert (config.context.engine, config.get("context.file_max_chars")) == ("compressor", None)
    c = config.compression
    assert (c.enabled, c.threshold, c.protect_first_n, c.protect_last_n) == (True, 0.5, 3, 20)
    assert c.summary.provider == "extractive"
    assert (config.get("agent.tool_use_enforcement"), config.get("agent.execution_guidance")) == ("auto", "auto")
    t = config.tool_output
    assert (t.max_bytes, t.max_lines, t.max_line_length) == (50_000, 2_000, 2_000)
    assert config.tools.search.listing_max_tokens == 4_000
    assert config.plugins.disabled == () and config.timezone is None
    assert all(source == "default" for _, _, source in config.items())


def test_home_resolution(tmp_path: Path) -> None:
    assert resolve_home(tmp_path, env={"HERMES_HOME": "/elsewhere"}) == tmp_path
    assert resolve_home(None, env={"HERMES_HOME": str(tmp_path)}) == tmp_path
    assert resolve_home(None, env={}) == Path("~/.hermes").expanduser()


def test_file_values_and_their_sources(tmp_path: Path, builtins: list) -> None:
    write(tmp_path, "compression:\n  threshold: 0.7\n  summary:\n    provider: openai\ntimezone: Europe/Paris\n")
    config = load_config(
        home=tmp_path, env={"HERMES_TIMEZONE": "Asia/Tokyo"}, flags={"plugins.disabled": ("x",)}, sections=builtins
    )
    assert config.compression.threshold == 0.7
    assert config.compression.summary.provider == "openai"
    assert config.timezone == "Asia/Tokyo"
    sources = {key: source for key, _, source in config.items()}
    assert sources["compression.threshold"] == "file"
    assert sources["timezone"] == "env"
    assert sources["plugins.disabled"] == "flag"
    assert sources["compression.enabled"] == "default"


def test_disabled_plugins_accumulate_from_every_source(tmp_path: Path) -> None:
    write(tmp_path, "plugins:\n  disabled: [a]\n")
    config = load_config(home=tmp_path, env={"HERMES_DISABLE_PLUGINS": "b,c"}, flags={"plugins.disabled": ("d",)})
    assert config.plugins.disabled == ("a", "b", "c", "d")


def test_explicit_config_file(tmp_path: Path) -> None:
    path = tmp_path / "custom.yaml"
    path.write_text("context:\n  engine: window\n")
    assert load_config(path=path, env={}).context.engine == "window"
    with pytest.raises(ConfigError, match="not found"):
        load_config(path=tmp_path / "missing.yaml", env={})


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  threshold: 0.5\n  summary: [unclosed\nother: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(home=tmp_path, env={})
    assert str(path) in str(info.value) and info.value.line is not None
    assert f"line {info.value.line}" in str(info.value)


@pytest.mark.parametrize(
    "text,key,bad",
    [
        ("compression:\n  threshold: 1.5\n", "compression.threshold", "1.5"),
        ("compression:\n  threshold: 0\n", "compression.threshold", "0"),
        ("compression:\n  enabled: maybe\n", "compression.enabled", "maybe"),
        ("compression:\n  protect_last_n: many\n", "compression.protect_last_n", "many"),
        ("context:\n  file_max_chars: -3\n", "context.file_max_chars", "-3"),
        ("compression: 12\n", "compression", "12"),
        ("prompt_caching:\n  cache_ttl: 2h\n", "prompt_caching.cache_ttl", "2h"),
    ],
)
def test_bad_values_name_key_value_and_file(tmp_path: Path, text: str, key: str, bad: str, builtins: list) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(home=tmp_path, env={}, sections=builtins)
    message = str(info.value)
    assert key in message and bad in message and str(path) in message
    assert info.value.key == key


def test_unknown_key_warns_with_the_closest_known_key(tmp_path: Path, builtins: list) -> None:
    write(tmp_path, "compression:\n  treshold: 0.6\nskils: {}\n")
    with collecting() as warnings:
        config = load_config(home=tmp_path, env={}, sections=builtins)
    assert config.compression.threshold == 0.5
    messages = [w.message for w in warnings]
    assert any("compression.treshold" in m and "compression.threshold" in m for m in messages)
    assert any("'skils'" in m and "'skills'" in m for m in messages)


def test_lenient_sections_fall_back_with_a_warning(tmp_path: Path, builtins: list) -> None:
    write(tmp_path, "tool_output:\n  max_bytes: lots\n  max_lines: '75'\ntools:\n  search:\n    defer: terminal\n    max_search_limit: 999\n")
    with collecting() as warnings:
        config = load_config(home=tmp_path, env={}, sections=builtins)
    assert config.tool_output.max_bytes == 50_000
    assert config.tool_output.max_lines == 75
    assert config.tools.search.defer is None
    assert config.tools.search.max_search_limit == 50
    kinds = [(w.kind, w.details.get("key")) for w in warnings]
    assert ("config_value_ignored", "tool_output.max_bytes") in kinds
    assert ("config_value_ignored", "tools.search.defer") in kinds


def test_cli_config_error_exits_2_without_traceback(tmp_path: Path) -> None:
    write(tmp_path, "compression:\n  threshold: 7\n")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config"])
    assert result.exit_code == 2
    assert "compression.threshold" in result.output and "Traceback" not in result.output


def test_cli_config_yaml_error_names_the_line(tmp_path: Path) -> None:
    write(tmp_path, "a: [\n")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "hooks"])
    assert result.exit_code == 2 and "line" in result.output and "invalid YAML" in result.output


def test_cli_config_shows_sources(tmp_path: Path, builtins: list) -> None:
    write(tmp_path, "compression:\n  threshold: 0.6\n")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "--disable", "guidance", "config", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    values = {v["key"]: v for v in data["values"]}
    assert values["compression.threshold"] == {
        "key": "compression.threshold", "value": 0.6, "source": "file", "owner": "hermes-core"
    }
    assert values["plugins.disabled"]["source"] == "flag"
    assert values["context.engine"]["source"] == "default"
    # Every key of the core and of each loaded plugin; the disabled guidance plugin's are not shown.
    active = [s for s in builtins if s.plugin != "guidance"]
    assert {v["key"] for v in data["values"]} == set(known_keys(active))
    assert "agent.tool_use_enforcement" in known_keys(builtins)
    assert values["skills.external_dirs"]["owner"] == "skills" and values["compression.threshold"]["owner"] == "hermes-core"
    table = CliRunner().invoke(cli, ["--home", str(tmp_path), "config"]).stdout
    assert "compression.threshold" in table and "file" in table
    header, *rows = table.splitlines()[1:]
    assert header.split() == ["KEY", "VALUE", "SOURCE", "OWNER"]
    assert next(r for r in rows if r.startswith("skills.external_dirs ")).split()[-1] == "skills"


def test_unknown_engine_is_an_error_after_the_listing(tmp_path: Path) -> None:
    write(tmp_path, "context:\n  engine: warp\n")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "engines"])
    assert result.exit_code == 2
    assert "compressor" in result.stdout  # the list is still printed
    assert "warp" in result.output and "available engines" in result.output
