"""The benchmarks are left out of the default run, so a module they import can move without
anyone noticing until someone wants a figure (bench_compressor imported failures from the core
for a session after it moved to the built-in plugins). Importing each file here keeps them
runnable; it runs no benchmark."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from locations import BENCHMARKS

BENCH_DIR = BENCHMARKS
FILES = sorted(BENCH_DIR.glob("bench_*.py"))


def test_there_are_benchmarks() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_benchmark_module_imports(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The benchmarks import each other by bare name, as pytest's rootdir insertion allows.
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    spec = importlib.util.spec_from_file_location(f"_bench_import_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert any(name.startswith("test_") for name in vars(module))
