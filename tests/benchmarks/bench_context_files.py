"""Context files: building the block, measured against reading the same files plainly.

The block for an ordinary project (a 3-file AGENTS.md chain of ~2 KB each) is compared with a
bare ``read_bytes`` of those files; the block for a 64 MB AGENTS.md is compared with reading
that file whole, which is what the seek path avoids.
Run: python -m pytest tests/benchmarks/bench_context_files.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from hermes_core import Config, PluginHost, PromptContext
from hermes_core.diagnostics import collecting


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("bench")
    repo = base / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cwd = repo / "packages" / "app"
    cwd.mkdir(parents=True)
    for directory in (repo, repo / "packages", cwd):
        (directory / "AGENTS.md").write_text(f"{directory.name}: keep it tidy.\n" * 80)
    huge = base / "huge"
    huge.mkdir()
    line = "a rule that goes on and on, with an accent here: é\n"
    (huge / "AGENTS.md").write_text(line * (64 * 1024 * 1024 // len(line.encode())))
    return {"chain": cwd, "huge": huge}


@pytest.fixture(scope="module")
def host() -> Iterator[PluginHost]:
    # Measure the work, not debug lines printed by an unconfigured structlog.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield PluginHost.create(only=())
    structlog.reset_defaults()


def _build(host: PluginHost, cwd: Path) -> Callable[[], object]:
    ctx = PromptContext(cwd=cwd, home=cwd / "no-home", config=Config(), host=host)

    def run() -> object:
        with collecting():
            return host.prompt_block("hermes_prompt_context_files", ctx)

    return run


def _plain_read(cwd: Path) -> Callable[[], object]:
    paths = [p / "AGENTS.md" for p in (cwd, *cwd.parents) if (p / "AGENTS.md").exists()]
    return lambda: [p.read_bytes() for p in paths]


def test_block_for_a_chain(benchmark, host: PluginHost, trees: dict[str, Path]) -> None:
    benchmark(_build(host, trees["chain"]))


def test_block_for_a_64mb_file(benchmark, host: PluginHost, trees: dict[str, Path]) -> None:
    benchmark(_build(host, trees["huge"]))


def _ratio(subject: Callable[[], object], reference: Callable[[], object], rounds: int, inner: int) -> float:
    ratios = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            reference()
        t1 = time.perf_counter()
        for _ in range(inner):
            subject()
        t2 = time.perf_counter()
        ratios.append((t2 - t1) / (t1 - t0))
    return statistics.median(ratios)


def test_paired_ratios(host: PluginHost, trees: dict[str, Path]) -> None:
    chain = _ratio(_build(host, trees["chain"]), _plain_read(trees["chain"]), rounds=15, inner=50)
    huge = _ratio(_build(host, trees["huge"]), _plain_read(trees["huge"]), rounds=5, inner=3)
    print(f"\nblock for a 3-file AGENTS.md chain / plain read_bytes of the files: {chain:.1f}x")
    print(f"block for a 64 MB AGENTS.md / plain read_bytes of the file: {huge:.4f}x")
