"""The CLI behaves the same way everywhere: plugin commands in --help, global options after the
subcommand, warnings once, JSON keys = table columns = the --help shape, plain output off a TTY."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.cli.app import hoist_global_options

from fake_dists import make_dist

ANSI = re.compile(r"\x1b\[[0-9;]*m")

COMMAND_PLUGIN = """
import click
from hermes_core import hookimpl

@click.command("acme-report")
def acme_report():
    '''Print the Acme report.'''
    click.echo("acme")

@hookimpl
def hermes_cli_register_commands(cli):
    cli.add_command(acme_report)
"""


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_help_lists_plugin_commands_with_their_plugin(site_dir: Path) -> None:
    make_dist(site_dir, "acme-cli", {"acme_cli": "acme_cli_mod"}, {"acme_cli_mod": COMMAND_PLUGIN})
    text = run("--help").output
    line = next(line for line in text.splitlines() if line.strip().startswith("acme-report"))
    assert "[plugin: acme_cli]" in line and "Acme report" in line
    assert "[plugin: skills]" in text  # built-ins that add commands are plugins too
    assert run("acme-report").output == "acme\n"


def test_global_options_after_the_subcommand(tmp_path: Path) -> None:
    rows = json.loads(run("plugins", "--json", "--disable", "identity").stdout)
    assert next(r for r in rows if r["name"] == "identity")["status"] == "blocked"
    verbose = run("plugins", "-v")
    assert verbose.exit_code == 0 and "MODULE" in verbose.stdout.splitlines()[0]
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("compression:\n  threshold: 0.6\n")
    data = json.loads(run("config", "--json", f"--home={home}").stdout)
    assert data["path"] == str(home / "config.yaml")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["plugins", "-v", "--json"], ["-v", "plugins", "--json"]),
        (["--home", "h", "hooks", "--home", "x"], ["--home", "h", "--home", "x", "hooks"]),
        (["prompt", "--", "-v"], ["prompt", "--", "-v"]),
        (["mine", "-v"], ["mine", "-v"]),  # the subcommand's own -v stays its own
        (["nope", "-v"], ["nope", "-v"]),  # unknown command: left for click to report
    ],
)
def test_hoisting_rules(args: list[str], expected: list[str]) -> None:
    own = {"plugins": {"--json"}, "hooks": set(), "prompt": set(), "mine": {"-v"}}
    assert hoist_global_options(args, own.get) == expected


@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_prompt_prints_each_warning_once(mode: list[str], tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("timezone: Mars/Olympus\nmemroy: {}\n")
    result = run("--home", str(home), "prompt", "--cwd", str(tmp_path), *mode)
    assert result.exit_code == 0
    assert result.stderr.count("Mars/Olympus") == 1, result.stderr
    assert result.stderr.count("memroy") == 1, result.stderr


def test_listing_commands_print_config_warnings_once(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("memroy: {}\n")
    for command in ("hooks", "plugins", "engines", "config"):
        result = run("--home", str(home), command)
        assert result.stderr.count("memroy") == 1, (command, result.stderr)


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "[{"
        depth -= ch in "]}"
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def parse_shape(text: str) -> Any:
    """``[{a, b: [{c}]}]`` -> ``[{"a": None, "b": [{"c": None}]}]`` (keys and nesting only)."""
    text = text.strip()
    if text.startswith("["):
        return [parse_shape(text[1:-1])]
    if text.startswith("{"):
        out: dict[str, Any] = {}
        for part in _split(text[1:-1]):
            key, _, inner = part.partition(":")
            out[key.strip()] = parse_shape(inner) if inner.strip()[:1] in ("[", "{") else None
        return out
    return None


def matches(shape: Any, value: Any) -> bool:
    if isinstance(shape, list):
        return isinstance(value, list) and all(matches(shape[0], v) for v in value)
    if isinstance(shape, dict):
        return isinstance(value, dict) and set(value) == set(shape) and all(
            matches(s, value[k]) for k, s in shape.items() if s is not None
        )
    return True


def _help_shape(command: str) -> Any:
    text = run(command, "--help").output
    joined = " ".join(text.split())
    found = re.search(r"--json\s+JSON: (.*?\])\.|--json\s+JSON: (.*?\})\.", joined)
    assert found, text
    return parse_shape(found.group(1) or found.group(2))


@pytest.mark.parametrize("command", ["hooks", "plugins", "engines", "config", "prompt"])
def test_every_help_json_shape_matches_the_output(command: str, tmp_path: Path) -> None:
    args = [command, "--json"] + (["--cwd", str(tmp_path)] if command == "prompt" else [])
    output = json.loads(run(*args).stdout)
    shape = _help_shape(command)
    assert matches(shape, output), (shape, output if not isinstance(output, list) else output[:1])


def test_parse_shape_and_matches_have_teeth() -> None:
    shape = parse_shape("{path, values: [{key, value, source}]}")
    assert shape == {"path": None, "values": [{"key": None, "value": None, "source": None}]}
    assert matches(shape, {"path": None, "values": [{"key": 1, "value": 2, "source": 3}]})
    assert not matches(shape, {"path": None, "values": [{"key": 1, "value": 2}]})
    assert not matches(shape, [{"key": 1}])


@pytest.mark.parametrize("command", ["hooks", "plugins", "engines", "config"])
def test_table_columns_are_the_json_keys(command: str) -> None:
    table = run(command, "-v").stdout.splitlines()
    header = next(line for line in table if line and not line.startswith("#"))
    data = json.loads(run(command, "--json").stdout)
    rows = data["values"] if isinstance(data, dict) else data
    keys = set(rows[0])
    columns = {c.lower() for c in header.split()}
    assert columns <= keys, (columns - keys)


def test_plugin_hooks_are_named_alike_in_table_and_json() -> None:
    table = run("plugins").stdout
    row = next(line for line in table.splitlines() if line.startswith("identity "))
    assert "hermes_prompt_identity" in row


def test_output_is_plain_off_a_tty_and_with_no_color(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("memroy: {}\n")
    for extra in ([], ["--log-format", "console", "-v"]):
        result = run("--home", str(home), *extra, "plugins", env={"NO_COLOR": "1"})
        assert not ANSI.search(result.stdout) and not ANSI.search(result.stderr)


def test_trace_env_variable_alone_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_TRACE_HOOKS", "1")
    result = run("engines")
    assert "hook_called" in result.stderr and "hermes_context_engines" in result.stderr
