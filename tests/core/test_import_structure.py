"""The core's import graph: no cycles (outside TYPE_CHECKING), never a built-in plugin."""

from __future__ import annotations

from pathlib import Path

import hermes_core

from import_graph import cycles, graph, imports_of, module_name

CORE = Path(hermes_core.__file__).parent


def test_no_import_cycle_among_core_modules() -> None:
    found = cycles(graph([CORE], module_level_only=True))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_a_cycle(tmp_path: Path) -> None:
    # The walker must find imports nested in try/if blocks but skip TYPE_CHECKING ones.
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "try:\n    import hermes_core.a\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    import hermes_core.b\n"
        "def f():\n    import hermes_core.c\n"
    )
    module_level = imports_of(source, "m", module_level_only=True)
    assert "hermes_core.a" in module_level and "hermes_core.b" not in module_level
    assert "hermes_core.c" not in module_level
    assert "hermes_core.c" in imports_of(source, "m", module_level_only=False)


def test_core_never_imports_the_builtin_plugins() -> None:
    offenders = {
        module_name(path, CORE): sorted(
            i for i in imports_of(path, module_name(path, CORE), module_level_only=False)
            if i.split(".")[0] == "hermes_plugins"
        )
        for path in CORE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}
