"""Building a session's system prompt, and replaying it, against a plain join of the same parts.

The reference is ``"\\n\\n".join`` of the finished blocks of the same prompt: the floor any
assembler has to pay. Three cases are timed against it in the same run:

* ``open + build``: ``Session.open`` (engine, session id, engine start hook) and the first
  ``system_prompt`` - every block hook, SOUL.md and memory reads, the environment facts - with
  a skills tool present and the skills caches already warm (a first session warmed them), the
  host and config shared as a gateway would share them, without the store write;
* ``open + build + store``: the same, plus the SQLite write of the built prompt;
* ``warm``: ``system_prompt`` again on an open session - what every later turn pays.

Run: python -m pytest tests/benchmarks/bench_prompt.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import logging
import statistics
import timeit
from collections.abc import Callable
from typing import Any

import attrs
import pytest
import structlog

from hermes_core import PluginHost, Session, load_config

TOOLS = ("terminal", "read_file", "memory", "session_search", "skill_view", "skills_list", "skill_manage")
RATIOS: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def quiet_logs() -> Any:
    # An application configures structlog; unconfigured, every debug event renders to stdout
    # (~15 µs each) and would be measured as if it were prompt assembly.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("bench-prompt")
    home = base / "home"
    (home / "memories").mkdir(parents=True)
    (home / "SOUL.md").write_text("You are Hermes, a careful engineer.\n" * 10)
    (home / "memories" / "MEMORY.md").write_text("\n§\n".join(f"Fact number {i} about the project." for i in range(40)))
    (home / "memories" / "USER.md").write_text("Prefers short answers.\n§\nWorks in UTC.")
    for i in range(60):
        skill = home / "skills" / f"category-{i % 6}" / f"skill-{i:02d}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: Does useful thing number {i} for the user.\n---\nBody.\n"
        )
    project = base / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use the project's Makefile targets.\n" * 30)
    config = load_config(home=home, env={})
    host = PluginHost.create(config=config, env={})
    env = {"HOME": str(base), "HERMES_TIMEZONE": "UTC"}
    kwargs = dict(home=home, cwd=project, env=env, config=config, host=host, model="gpt-4o",
                  provider="openai", platform="cli", tools=TOOLS, context_length=200_000)
    warm = Session.open(**kwargs, persist=False)  # warms the skills caches and the environment facts
    warm.system_prompt
    assert warm.built is not None
    parts = [text for _, _, _, text, _ in warm.built._parts]
    return {"kwargs": kwargs, "parts": parts, "prompt": warm.system_prompt, "blocks": warm.built.block_names}


def reference_median(parts: list[str]) -> float:
    timer = timeit.Timer(lambda: "\n\n".join(parts))
    loops, _ = timer.autorange()
    return statistics.median(t / loops for t in timer.repeat(repeat=15, number=loops))


def report(name: str, benchmark: Any, parts: list[str]) -> None:
    ref = reference_median(parts)
    median = benchmark.stats.stats.median
    RATIOS[name] = median / ref
    benchmark.extra_info["reference_join_median_s"] = ref
    benchmark.extra_info["ratio_vs_join"] = round(median / ref, 1)
    print(f"\n{name}: median {median * 1e6:,.2f} µs; join reference {ref * 1e9:,.0f} ns; "
          f"ratio {median / ref:,.2f}x")


def open_and_build(kwargs: dict[str, Any], *, persist: bool) -> Callable[[], str]:
    def run() -> str:
        session = Session.open(**kwargs, persist=persist)
        return session.system_prompt

    return run


def test_reference_join(benchmark: Any, world: dict[str, Any]) -> None:
    parts = world["parts"]
    assert benchmark(lambda: "\n\n".join(parts))
    print(f"\nprompt: {len(world['prompt']):,} chars, blocks: {', '.join(world['blocks'])}")


def test_open_and_build(benchmark: Any, world: dict[str, Any]) -> None:
    prompt = benchmark(open_and_build(world["kwargs"], persist=False))
    assert prompt.startswith("You are Hermes, a careful engineer.")
    report("open + build", benchmark, world["parts"])


def test_open_build_and_store(benchmark: Any, world: dict[str, Any]) -> None:
    benchmark(open_and_build(world["kwargs"], persist=True))
    report("open + build + store", benchmark, world["parts"])


def test_warm_replay(benchmark: Any, world: dict[str, Any]) -> None:
    session = Session.open(**world["kwargs"], persist=False)
    first = session.system_prompt
    assert benchmark(lambda: session.system_prompt) is first
    report("warm system_prompt", benchmark, world["parts"])


def test_exact_block_tokens(benchmark: Any, world: dict[str, Any]) -> None:
    # What ``hermes-ctx prompt --json`` adds on top of a build: exact counts per block.
    session = Session.open(**world["kwargs"], persist=False)
    session.system_prompt
    built = session.built

    def count() -> int:
        fresh = attrs.evolve(built)  # a new record: its lazily counted blocks start uncounted
        return sum(b.tokens for b in fresh.blocks)

    assert benchmark(count) > 0
    report("exact tokens of every block", benchmark, world["parts"])
