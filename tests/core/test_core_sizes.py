"""No shipped module over 800 lines, no shipped function over 80 (issue 33's quality bar):
the core, the built-in plugins and the contrib engines.

A module that grows past the limit holds more than one thing: split it into modules named for
what each holds. A function past the limit does more than one step: give the steps names.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core

from locations import ROOT

CORE = Path(hermes_core.__file__).parent
#: Everything shipped beside the core: the built-ins and the contrib engines (their tests aside).
SHIPPED = (ROOT / "plugins" / "hermes_plugins", ROOT / "contrib_engines")
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
#: Shipped modules exempt from both limits (paths from the repository root): none.
SPLIT_PENDING: set[str] = set()


def module_lines(path: Path) -> int:
    """Lines as ``wc -l`` counts them (newline characters)."""
    return path.read_bytes().count(b"\n")


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function or method (nested ones too) longer than ``limit``
    lines, from its ``def`` line to its last line (decorators aside)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((node.name, length))
    return found


def core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_no_core_module_over_800_lines() -> None:
    big = {p.relative_to(CORE).as_posix(): module_lines(p) for p in core_files()}
    assert {k: v for k, v in big.items() if v > MAX_MODULE_LINES} == {}


def test_no_core_function_over_80_lines() -> None:
    found = {
        f"{p.relative_to(CORE).as_posix()}:{name}": length
        for p in core_files() for name, length in long_functions(p.read_text(encoding="utf-8"))
    }
    assert found == {}


def shipped_files() -> list[Path]:
    return sorted(
        p for root in SHIPPED for p in root.rglob("*.py") if "tests" not in p.relative_to(root).parts
    )


def test_no_shipped_module_over_800_lines() -> None:
    big = {p.relative_to(ROOT).as_posix(): module_lines(p) for p in shipped_files()}
    assert {k: v for k, v in big.items() if v > MAX_MODULE_LINES and k not in SPLIT_PENDING} == {}


def test_no_shipped_function_over_80_lines() -> None:
    found = {
        f"{p.relative_to(ROOT).as_posix()}:{name}": length
        for p in shipped_files() if p.relative_to(ROOT).as_posix() not in SPLIT_PENDING
        for name, length in long_functions(p.read_text(encoding="utf-8"))
    }
    assert found == {}


def test_the_shipped_files_are_the_plugins_and_engines_without_their_tests() -> None:
    shipped = {p.relative_to(ROOT).as_posix() for p in shipped_files()}
    assert "plugins/hermes_plugins/compressor/engine.py" in shipped
    assert any(path.startswith("contrib_engines/") for path in shipped)
    assert not any("/tests/" in path for path in shipped)
    assert SPLIT_PENDING <= shipped  # an allow-list entry names a file that exists


def test_the_checks_measure_what_they_say(tmp_path: Path) -> None:
    def function(name: str, lines: int, indent: str = "") -> str:
        return f"{indent}def {name}():\n" + "".join(f"{indent}    x = {i}\n" for i in range(lines - 1))

    assert long_functions(function("f", 80)) == []
    assert long_functions(function("f", 81)) == [("f", 81)]
    method = "class C:\n" + function("m", 81, "    ")
    assert long_functions(method) == [("m", 81)]
    nested = "def outer():\n" + function("inner", 81, "    ") + "    return inner\n"
    assert sorted(long_functions(nested)) == [("inner", 81), ("outer", 83)]
    path = tmp_path / "m.py"
    path.write_text("a = 1\n" * 801)
    assert module_lines(path) == 801
