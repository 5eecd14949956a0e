"""The import graph of a package read from its source (``ast``), for the import-structure tests.

An edge A -> B means module A names module B in an import statement. Imports under
``if TYPE_CHECKING:`` are left out (annotations only, never run) unless ``type_checking`` is
true (a picture of the code draws them too); imports inside functions and classes count when
``module_level_only`` is false, since they run the first time the function is called and close
a loop just as well, only later.
"""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    """The dotted name of ``path`` in the package at ``root`` (a package is its ``__init__``)."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, name: str, *, module_level_only: bool, type_checking: bool = False) -> set[str]:
    """Every dotted name module ``name`` (source at ``path``) imports, relative ones resolved:
    ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a module or a name in ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                if type_checking:
                    visit(node.body)
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


def graph(roots: list[Path], *, module_level_only: bool, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the same packages it imports (itself aside)."""
    modules = {module_name(p, root): p for root in roots for p in root.rglob("*.py")}
    return {
        name: {i for i in imports_of(path, name, module_level_only=module_level_only, type_checking=type_checking)
               if i in modules and i != name}
        for name, path in modules.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import loops: each strongly connected component of more than one module, sorted
    (Tarjan's algorithm; a module importing itself is not an edge here)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(found)
