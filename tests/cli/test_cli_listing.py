"""The documented JSON schemas of ``hooks``, ``plugins`` and ``engines``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.hookspecs import SPEC_CLASSES


def run(*args: str) -> object:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_hooks_json_schema_and_order() -> None:
    rows = run("hooks", "--json")
    declared = [name for cls in SPEC_CLASSES for name in vars(cls) if name.startswith("hermes_")]
    assert [r["name"] for r in rows] == declared
    for row in rows:
        assert set(row) == {"name", "area", "mode", "args", "doc", "impls"}
        assert row["mode"] in {"firstresult", "collect", "historic"}
        assert row["doc"] and isinstance(row["args"], list)
        for impl in row["impls"]:
            assert set(impl) == {"plugin", "wrapper", "tryfirst", "trylast"}
    identity = next(r for r in rows if r["name"] == "hermes_prompt_identity")
    assert identity["mode"] == "firstresult" and identity["args"] == ["ctx"]
    assert {"plugin": "identity", "wrapper": False, "tryfirst": False, "trylast": True} in identity["impls"]
    assert next(r for r in rows if r["name"] == "hermes_plugin_host_ready")["mode"] == "historic"
    assert next(r for r in rows if r["name"] == "hermes_context_engines")["mode"] == "collect"


def test_hooks_table_shows_every_spec_with_its_summary() -> None:
    out = CliRunner().invoke(cli, ["hooks"]).stdout
    for cls in SPEC_CLASSES:
        for name, fn in vars(cls).items():
            if name.startswith("hermes_"):
                assert name in out
                assert fn.__doc__.strip().splitlines()[0] in out


def test_plugins_json_schema() -> None:
    rows = run("plugins", "--json")
    for row in rows:
        assert set(row) == {"name", "distribution", "version", "status", "module", "hooks", "error"}
        assert row["status"] in {"active", "blocked", "failed"}
    identity = next(r for r in rows if r["name"] == "identity")
    assert identity["distribution"] == "hermes-core" and "hermes_prompt_identity" in identity["hooks"]
    assert identity["error"] is None


def test_plugins_third_party_filter_hides_builtins() -> None:
    assert all(r["distribution"] != "hermes-core" for r in run("plugins", "--json", "--third-party"))


def test_engines_json_schema() -> None:
    rows = run("engines", "--json")
    compressor = next(r for r in rows if r["name"] == "compressor")
    assert compressor == {"name": "compressor", "plugin": "compressor", "distribution": "hermes-core", "version": compressor["version"], "selected": True, "default": True}
    assert compressor["version"]  # engines --json keeps the version the table shows
    for row in rows:
        assert set(row) == {"name", "plugin", "distribution", "version", "selected", "default"}


def test_version_option() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and "hermes-ctx" in result.output
