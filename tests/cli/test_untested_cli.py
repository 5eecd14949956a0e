"""CLI paths the rest of the suite never reached: ``python -m hermes_core.cli``, counted
verbosity after the subcommand, a broken config while resolving plugin commands, hidden plugin
commands, every ``compress`` report line and fault, ``convert``'s output faults, listing flags."""

from __future__ import annotations

import json
import runpy
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli, listing, transcripts_cmd
from hermes_core.cli.app import print_warnings
from hermes_core.diagnostics import HostWarning

from fake_dists import make_dist


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(MESSAGES), encoding="utf-8")
    return path


# --- the entry points and the group ----------------------------------------------------------


def test_python_dash_m_runs_the_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["hermes-ctx", "--version"])
    sys.modules.pop("hermes_core.cli.__main__", None)
    with pytest.raises(SystemExit) as done:
        runpy.run_module("hermes_core.cli", run_name="__main__")
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("hermes-ctx, version ")


def test_counted_verbosity_may_follow_the_subcommand() -> None:
    result = run("formats", "-vv")
    assert result.exit_code == 0, result.output
    assert "openai" in result.stdout


def test_an_unknown_command_with_a_broken_config_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "config.yaml"
    bad.write_text("agent: [not, a, mapping]\n")
    result = CliRunner().invoke(cli, ["--config", str(bad), "no-such-command"])
    assert result.exit_code == 2
    assert "No such command 'no-such-command'" in result.output
    assert "Traceback" not in result.output


HIDDEN_PLUGIN = """
import click
from hermes_core import hookimpl

@click.command("acme-secret", hidden=True)
def acme_secret():
    click.echo("secret ran")

@hookimpl
def hermes_cli_register_commands(cli):
    cli.add_command(acme_secret)
"""


def test_a_hidden_plugin_command_runs_but_is_not_listed(site_dir: Path) -> None:
    make_dist(site_dir, "acme-hidden", {"acme_hidden": "acme_hidden_mod"}, {"acme_hidden_mod": HIDDEN_PLUGIN})
    assert "acme-secret" not in run("--help").stdout
    assert run("acme-secret").stdout == "secret ran\n"


def test_each_warning_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    twice = HostWarning(kind="k", message="the same thing")
    print_warnings([twice, twice, HostWarning(kind="k", message="another")])
    assert capsys.readouterr().err == "warning: the same thing\nwarning: another\n"


# --- compress ------------------------------------------------------------------------------


ENGINES = """
from hermes_core import ContextEngine, hookimpl
from hermes_core.plugin import record_warning

class Silent(ContextEngine):
    name = "acme_silent"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        record_warning("acme_note", "acme looked at the transcript")
        return None

class Refusing(ContextEngine):
    name = "acme_refusing"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        self.last_compression_report = {
            "status": "aborted", "aborted": True, "error": "the summariser refused",
            "before": {"messages": len(messages), "tokens": 10},
        }
        return messages

class Exploding(ContextEngine):
    name = "acme_exploding"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        raise RuntimeError("engine exploded")

@hookimpl
def hermes_context_engines():
    return {"acme_silent": Silent, "acme_refusing": Refusing, "acme_exploding": Exploding}

@hookimpl
def hermes_tokenizer(model):
    if model == "acme-broken-tokenizer":
        raise RuntimeError("tokenizer download failed")
    return None
"""


@pytest.fixture
def engines(site_dir: Path) -> Path:
    return make_dist(site_dir, "acme-engines", {"acme_engines": "acme_engines_mod"}, {"acme_engines_mod": ENGINES})


def test_an_engine_answering_nothing_leaves_the_transcript_and_its_warning_is_reported(engines: Path, transcript: Path) -> None:
    result = run("compress", str(transcript), "--engine", "acme_silent")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Nothing to compress (engine acme_silent)")
    assert "  warning   acme looked at the transcript" in result.stdout
    report = json.loads(run("compress", str(transcript), "--engine", "acme_silent", "--json").stdout)
    assert report["status"] == "nothing_to_compress" and "acme looked at the transcript" in report["warnings"]


def test_an_aborted_compression_prints_its_reason(engines: Path, transcript: Path) -> None:
    result = run("compress", str(transcript), "--engine", "acme_refusing")
    assert result.exit_code == 1
    assert "Compression aborted" in result.stdout
    assert "  reason    the summariser refused" in result.stdout


def test_a_raising_engine_in_strict_mode_is_one_error_line(engines: Path, transcript: Path) -> None:
    result = CliRunner().invoke(cli, ["--strict-plugins", "compress", str(transcript), "--engine", "acme_exploding"])
    assert result.exit_code == 2
    assert "engine exploded" in result.stderr and "Traceback" not in result.output


def test_a_raising_tokenizer_in_strict_mode_counts_with_ours(engines: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(MESSAGES * 3), encoding="utf-8")
    result = run("--strict-plugins", "compress", str(path), "--model", "acme-broken-tokenizer",
                 "--context-length", "64000", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["fit"]["counted_by"].startswith("estimate:cl100k_base")


def test_compress_cannot_write_its_output(transcript: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["compress", str(transcript), "-o", str(tmp_path / "no" / "dir" / "out.json")])
    assert result.exit_code == 2
    assert "out.json: cannot write the output" in result.stderr


# --- convert, formats, listing ----------------------------------------------------------------


def test_convert_json_report_needs_an_output_file(transcript: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", str(transcript), "--json"])
    assert result.exit_code == 2
    assert "--json prints the report on stdout: give -o FILE" in result.stderr


def test_convert_cannot_write_its_output(transcript: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", str(transcript), "-o", str(tmp_path / "missing" / "out.json")])
    assert result.exit_code == 2
    assert "out.json: cannot write the output" in result.stderr


def test_convert_names_unaccounted_records(capsys: pytest.CaptureFixture[str]) -> None:
    report = {"source": "t.json", "format": "openai", "records": 3, "messages": 2, "tool_calls": 0,
              "merged": {}, "absorbed": {}, "dropped": {}, "relabelled": {}, "changed": {},
              "unaccounted": 1, "warnings": [], "written": {"changed": {}, "relabelled": {}, "dropped": {}}}
    transcripts_cmd._print_report(report)
    assert "  UNACCOUNTED 1 records" in capsys.readouterr().err


def test_a_stderr_without_isatty_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", object())
    assert transcripts_cmd._stderr_is_tty() is False


def test_hooks_unimplemented_lists_only_hooks_nobody_implements() -> None:
    rows = json.loads(run("hooks", "--json", "--unimplemented").stdout)
    everything = json.loads(run("hooks", "--json").stdout)
    assert all(not r["impls"] for r in rows)
    assert {r["name"] for r in rows} == {r["name"] for r in everything if not r["impls"]}


def test_a_tryfirst_implementation_is_flagged() -> None:
    impl = types.SimpleNamespace(wrapper=False, tryfirst=True, trylast=False)
    assert listing._impl_flag(impl) == " [tryfirst]"


def test_config_json_turns_a_read_only_mapping_into_an_object() -> None:
    assert listing._plain(types.MappingProxyType({"a": 1})) == {"a": 1}
