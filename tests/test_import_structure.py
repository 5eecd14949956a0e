"""The core's import graph: no cycles (outside TYPE_CHECKING), never a built-in plugin."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core

CORE = Path(hermes_core.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, *, module_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = CORE in path.parents
    name = _module_name(path) if inside else path.stem
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            elif not module_level_only:
                visit([n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)])
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and isinstance(node, (ast.If, ast.Try, ast.With)):
                    visit([n for n in inner if isinstance(n, ast.stmt)])
            if not module_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(node.body)

    visit(tree.body)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in CORE.rglob("*.py")}
    return {
        name: {i for i in _imports(path, module_level_only=True) if i in modules and i != name}
        for name, path in modules.items()
    }


def test_no_import_cycle_among_core_modules() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def dfs(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                dfs(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            dfs(node)
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_a_cycle(tmp_path: Path) -> None:
    # The walker must find imports nested in try/if blocks but skip TYPE_CHECKING ones.
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "try:\n    import hermes_core.a\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    import hermes_core.b\n"
        "def f():\n    import hermes_core.c\n"
    )
    module_level = _imports(source, module_level_only=True)
    assert "hermes_core.a" in module_level and "hermes_core.b" not in module_level
    assert "hermes_core.c" not in module_level
    assert "hermes_core.c" in _imports(source, module_level_only=False)


def test_core_never_imports_the_builtin_plugins() -> None:
    offenders = {
        _module_name(path): sorted(i for i in _imports(path, module_level_only=False) if i.split(".")[0] == "hermes_plugins")
        for path in CORE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}
