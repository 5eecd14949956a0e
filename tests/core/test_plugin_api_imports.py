"""Plugins reach the core through ``hermes_core.plugin`` and the public ``hermes_core`` only.

Every import statement of every built-in plugin and contrib engine module counts: module level,
inside functions, under ``if TYPE_CHECKING:``. A name imported from either module must be in its
``__all__``. A contrib engine's tests may also use the conformance kit (``hermes_core.testing``)
and drive the ``hermes-ctx`` group (``hermes_core.cli``'s ``__all__``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hermes_core
import hermes_core.plugin
import hermes_plugins

PLUGINS = Path(hermes_plugins.__file__).parent
CONTRIB = Path(hermes_core.__file__).parents[1] / "contrib_engines"


def _public(module: str, *, test_code: bool) -> set[str] | None:
    """The names a plugin may import from ``module``, or None when the module is off limits."""
    if module in ("hermes_core", "hermes_core.plugin") or (test_code and module == "hermes_core.cli"):
        return set(importlib.import_module(module).__all__)
    return None


def violations(path: Path, source: str, *, test_code: bool = False) -> list[str]:
    """``file:line: why`` for each import of the core that is not the plugin API."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            pairs = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            pairs = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in pairs:
            if module.split(".")[0] != "hermes_core":
                continue
            if test_code and (module == "hermes_core.testing" or module.startswith("hermes_core.testing.")):
                continue
            allowed = _public(module, test_code=test_code)
            if name is None or allowed is None:
                found.append((node.lineno, f"imports {module}; use hermes_core.plugin"))
            elif name not in allowed:
                found.append((node.lineno, f"{name} is not in {module}.__all__"))
    return [f"{path}:{line}: {why}" for line, why in sorted(found)]


def _shipped() -> list[Path]:
    files = sorted(PLUGINS.rglob("*.py")) + sorted(CONTRIB.rglob("*.py"))
    return [p for p in files if not any(part.endswith(".egg-info") or part == "build" for part in p.parts)]


def test_plugins_and_contrib_engines_import_only_the_plugin_api() -> None:
    found = []
    for path in _shipped():
        found += violations(path, path.read_text(encoding="utf-8"), test_code="tests" in path.relative_to(CONTRIB.parent).parts)
    assert found == [], "\n".join(found)


def test_the_walk_sees_every_shipped_module() -> None:
    shipped = {p.relative_to(CONTRIB.parent).as_posix() for p in _shipped()}
    assert "plugins/hermes_plugins/compressor/engine.py" in shipped
    assert "contrib_engines/hermes-engine-window/hermes_engine_window/__init__.py" in shipped
    assert "contrib_engines/hermes-engine-window/tests/test_selection.py" in shipped


def test_function_level_type_checking_and_unlisted_imports_are_named_by_line() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from hermes_core.plugin import hookimpl, content_text\n"
        "from hermes_core import Session\n"
        "if TYPE_CHECKING:\n"
        "    from hermes_core.records import PromptBlock\n"
        "def f():\n"
        "    from hermes_core.tokens import count_tokens\n"
        "    import hermes_core.pairing\n"
        "    from hermes_core.plugin import _LAZY\n"
        "    from hermes_core import tokens\n"
        "from hermes_core.archive import query_words\n"
        "from hermes_core.testing.conformance import EngineConformance\n"
        "from hermes_core.cli import cli\n"
    )
    assert violations(Path("p.py"), source) == [
        "p.py:5: imports hermes_core.records; use hermes_core.plugin",
        "p.py:7: imports hermes_core.tokens; use hermes_core.plugin",
        "p.py:8: imports hermes_core.pairing; use hermes_core.plugin",
        "p.py:9: _LAZY is not in hermes_core.plugin.__all__",
        "p.py:10: tokens is not in hermes_core.__all__",
        "p.py:11: imports hermes_core.archive; use hermes_core.plugin",
        "p.py:12: imports hermes_core.testing.conformance; use hermes_core.plugin",
        "p.py:13: imports hermes_core.cli; use hermes_core.plugin",
    ]
    assert violations(Path("t.py"), source, test_code=True)[-1].startswith("t.py:11:")


@pytest.mark.parametrize("name", sorted(hermes_core.plugin.__all__))
def test_every_plugin_api_name_resolves(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from hermes_core.plugin import {name}", namespace)  # the statement plugins write
    assert namespace[name] is getattr(hermes_core.plugin, name)


def test_the_api_lists_each_name_once_and_hides_nothing_else() -> None:
    names = hermes_core.plugin.__all__
    assert len(names) == len(set(names))
    assert set(names) == {*hermes_core.plugin._LAZY, "bounded"}  # nothing loadable but unlisted
    with pytest.raises(AttributeError, match="no attribute 'Session'"):
        hermes_core.plugin.Session  # a host's name, not a plugin's: from hermes_core


def test_a_name_loads_only_its_own_module() -> None:
    probe = (
        "import sys, json\n"
        "from hermes_core.plugin import hookimpl\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hermes_core.') or m == 'click')))\n"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                                       text=True).stdout)
    assert "hermes_core.plugin" in loaded
    assert not {"hermes_core.transcripts", "hermes_core.cli.app", "hermes_core.payload", "click"} & set(loaded)


def test_the_core_never_imports_the_plugin_api() -> None:
    # plugin.py sits on top of the core; a core module importing it would close a loop.
    core = Path(hermes_core.__file__).parent
    users = [str(p) for p in core.rglob("*.py") if p.name != "plugin.py"
             and "hermes_core.plugin" in {getattr(n, "module", None) for n in ast.walk(ast.parse(p.read_text()))}]
    assert users == []
