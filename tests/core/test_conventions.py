"""House conventions of the built-ins, checked against the installed metadata."""

from __future__ import annotations

import importlib.metadata
from collections import Counter

from hermes_core import PluginHost
from hermes_core.host import CORE_DISTRIBUTION, ENTRY_POINT_GROUP

from locations import ROOT


def _core_entry_points() -> list[importlib.metadata.EntryPoint]:
    return [
        ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        if ep.dist is not None and ep.dist.name == CORE_DISTRIBUTION
    ]


def test_entry_point_name_is_the_module_name() -> None:
    wrong = {}
    for ep in _core_entry_points():
        parts = ep.value.split(".")
        expected = parts[-2] if parts[-1] == "plugin" else parts[-1]
        if ep.name != expected:
            wrong[ep.name] = ep.value
    assert wrong == {}


def test_a_package_holding_one_plugin_enters_through_plugin_py() -> None:
    packages = Counter(ep.value.rsplit(".", 1)[0] for ep in _core_entry_points() if ep.value.count(".") >= 2)
    wrong = [
        ep.value for ep in _core_entry_points()
        if ep.value.count(".") >= 2 and packages[ep.value.rsplit(".", 1)[0]] == 1 and not ep.value.endswith(".plugin")
    ]
    assert wrong == []


def test_every_builtin_entry_point_implements_a_hook() -> None:
    # An entry point without hooks is a plugin name `--disable` accepts and ignores.
    host = PluginHost.create(only=())
    idle = [r.name for r in host.plugins() if r.distribution == CORE_DISTRIBUTION and not r.hooks]
    assert idle == []


def test_ci_runs_the_gates_after_the_tests() -> None:
    root = ROOT
    lines = [line.strip() for line in (root / ".ci" / "run").read_text().splitlines()]
    tests = next(i for i, line in enumerate(lines) if "python -m pytest" in line)
    assert lines[tests + 1:] == [
        "ruff check .",
        "mypy --strict hermes_core plugins/hermes_plugins contrib_engines/hermes-engine-window/hermes_engine_window",
    ]
    extra = (root / "pyproject.toml").read_text()
    for requirement in ('"ruff>=', '"mypy>=', '"types-PyYAML>='):
        assert requirement in extra
