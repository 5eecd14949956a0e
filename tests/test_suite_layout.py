"""The suite's layout holds wherever a test file sits: tests find paths through tests/support's
``locations`` (never by counting folders up from their own file), what tests share lives in
tests/support, and ruff sorts those helpers as the local folder they are."""

from __future__ import annotations

import ast
import re
import tomllib

from locations import BENCHMARKS, ROOT, SUPPORT, TESTS


def _test_files() -> list[str]:
    files = [p for p in TESTS.rglob("*.py") if SUPPORT not in p.parents and BENCHMARKS not in p.parents]
    return sorted(p.relative_to(ROOT).as_posix() for p in files)


def _reads_own_file(rel: str) -> bool:
    """The module reads its own ``__file__`` (whose depth changes when the file moves)."""
    tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Name) and node.id == "__file__" for node in ast.walk(tree))


def test_no_test_finds_paths_from_its_own_file() -> None:
    offenders = [rel for rel in _test_files() if _reads_own_file(rel)]
    assert offenders == [], f"use `from locations import ROOT, DATA, ...` instead: {offenders}"


def test_shared_helpers_live_in_support() -> None:
    stray = [rel for rel in _test_files()
             if not rel.rsplit("/", 1)[-1].startswith("test_") and not rel.endswith("/conftest.py")]
    assert stray == [], f"move helper modules to tests/support/: {stray}"


def test_no_test_imports_another_test_file() -> None:
    imports = re.compile(r"^\s*(?:from|import)\s+test_\w+", re.M)
    offenders = [rel for rel in _test_files() if imports.search((ROOT / rel).read_text(encoding="utf-8"))]
    assert offenders == [], f"put what tests share in tests/support/: {offenders}"


def test_ruff_knows_every_support_module_as_local() -> None:
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]["isort"]
    modules = sorted(p.stem for p in SUPPORT.glob("*.py"))
    assert sorted(ruff["known-local-folder"]) == modules
