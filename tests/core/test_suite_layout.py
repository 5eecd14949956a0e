"""The suite's layout holds wherever a test file sits: tests find paths through tests/support's
``locations`` (never by counting folders up from their own file), what tests share lives in
tests/support, and ruff sorts those helpers as the local folder they are."""

from __future__ import annotations

import ast
import functools
import re
import tomllib

from locations import BENCHMARKS, ROOT, SUPPORT, TESTS


def _test_files() -> list[str]:
    files = [p for p in TESTS.rglob("*.py") if SUPPORT not in p.parents and BENCHMARKS not in p.parents]
    return sorted(p.relative_to(ROOT).as_posix() for p in files)


@functools.cache
def _tree(rel: str) -> ast.Module:
    """Each file parsed once for the checks below (parsing the suite is most of their time)."""
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"))


def _reads_own_file(rel: str) -> bool:
    """The module reads its own ``__file__`` (whose depth changes when the file moves)."""
    tree = _tree(rel)
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


def _unbudgeted(rel: str) -> list[str]:
    """The @given tests of ``rel`` whose settings do not take their count from
    ``hypothesis_budget.examples`` (directly or through a module-level ``NAME = settings(...)``)."""
    tree = _tree(rel)
    named = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)}

    def budgeted(decorator: ast.expr) -> bool:
        call = named.get(decorator.id) if isinstance(decorator, ast.Name) else decorator
        if not (isinstance(call, ast.Call) and ast.unparse(call.func).endswith("settings")):
            return False
        count = next((kw.value for kw in call.keywords if kw.arg == "max_examples"), None)
        return isinstance(count, ast.Call) and ast.unparse(count.func) == "examples"

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            given = any(isinstance(d, ast.Call) and ast.unparse(d.func).endswith("given") for d in node.decorator_list)
            if given and not any(budgeted(d) for d in node.decorator_list):
                out.append(f"{rel}::{node.name}")
    return out


def test_every_property_test_has_a_budget() -> None:
    """A hypothesis test states its example count through ``examples(n)``: the default run stays
    bounded and ``--hypothesis-profile=soak`` raises every count at once."""
    engine_tests = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "contrib_engines").rglob("test_*.py"))
    offenders = [name for rel in _test_files() + engine_tests for name in _unbudgeted(rel)]
    assert offenders == [], f"use @settings(max_examples=examples(n), ...) from hypothesis_budget: {offenders}"


def test_every_test_file_sits_in_an_area_folder() -> None:
    # tests/core, tests/cli, tests/plugins/<area>, ... (docs/testing.md): none at the top.
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
