"""The built-in plugins' and the contrib engine's import graph has no loop.

Imports inside functions count (they run on the first call and close a loop just as well);
imports under ``if TYPE_CHECKING:`` do not (annotations only). A loop is broken by moving the
shared piece down into its own module, never by hiding an import in a function.
"""

from __future__ import annotations

from pathlib import Path

import hermes_plugins

from import_graph import cycles, graph
from locations import ROOT

PLUGINS = Path(hermes_plugins.__file__).parent
ENGINE = ROOT / "contrib_engines" / "hermes-engine-window" / "hermes_engine_window"


def test_no_import_loop_among_plugin_modules() -> None:
    # Every import counts, those made for annotations only (under TYPE_CHECKING) too.
    found = cycles(graph([PLUGINS, ENGINE], module_level_only=False, type_checking=True))
    assert found == [], "import loops: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_plugin_graph_is_read() -> None:
    # The check is only as good as the graph: the walk must see the plugins and their edges.
    edges = graph([PLUGINS, ENGINE], module_level_only=False)
    assert "hermes_engine_window" in edges
    assert "hermes_plugins.tools.sources" in edges["hermes_plugins.tools.search_index"]
    assert "hermes_plugins.cache_report_cli" in edges["hermes_plugins.caching"]  # inside a hook function


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_loop_through_a_function_level_import_is_caught(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "from pkg.b import thing\n",
        "b.py": "def thing():\n    from pkg import a\n    return a\n",
        "c.py": "from . import a\n",
    })
    assert cycles(graph([pkg], module_level_only=False)) == [["pkg.a", "pkg.b"]]
    assert cycles(graph([pkg], module_level_only=True)) == []  # what the core's own test counts


def test_a_type_checking_import_is_no_loop_and_a_three_module_loop_is_one(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\nimport pkg.c\n",
        "b.py": "from pkg import a\n",
        "c.py": "class C:\n    def m(self):\n        from .sub.d import x\n",
        "sub/__init__.py": "",
        "sub/d.py": "from ..a import y\n",
    })
    assert cycles(graph([pkg], module_level_only=False)) == [["pkg.a", "pkg.c", "pkg.sub.d"]]
