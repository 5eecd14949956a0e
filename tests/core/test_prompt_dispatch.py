"""The prompt hooks of one assembly run as one job on the host's workers, each hook still within
its own budget: a slow hook costs its block (and a warning naming its plugin), never the blocks
before or after it."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from hermes_core import HermesPluginError, PluginHost, PromptBlock, PromptContext, hookimpl, load_config
from hermes_core.assembler import assemble
from hermes_core.diagnostics import collecting
from hermes_core.prompt import PROMPT_TABLE

HOOKS = [slot.hook for slot in PROMPT_TABLE if slot.hook is not None]


class Every:
    """Answers every prompt hook with one block named for the hook, noting the thread."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        for slot in PROMPT_TABLE:
            if slot.hook is not None:
                setattr(self, slot.hook, self._impl(slot.blocks[0]))

    def _impl(self, name: str) -> Any:
        def impl(ctx: PromptContext) -> PromptBlock:
            self.threads.add(threading.get_ident())
            return PromptBlock(name=name, text=f"{name} text")

        return hookimpl(impl)


class Slow:
    """Holds ``hook`` until released (a third-party plugin waiting on a dead server)."""

    def __init__(self, hook: str, release: threading.Event, seconds: float = 30.0) -> None:
        def impl(ctx: PromptContext) -> PromptBlock:
            release.wait(seconds)
            return PromptBlock(name="platform", text="late")

        setattr(self, hook, hookimpl(tryfirst=True)(impl))


class CountingPool(concurrent.futures.ThreadPoolExecutor):
    def __init__(self) -> None:
        super().__init__(max_workers=2, thread_name_prefix="test-prompt-hook")
        self.submits = 0

    def submit(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        self.submits += 1
        return super().submit(*args, **kwargs)


def host_with(*plugins: tuple[object, str], strict: bool = False) -> PluginHost:
    return PluginHost.create(load_entry_points=False, plugins=plugins, strict=strict, env={})


def make_ctx(tmp_path: Path, budget: float | None = 5.0) -> PromptContext:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    config = load_config(data={}, env={})
    config = attrs.evolve(config, plugins=attrs.evolve(config.plugins, prompt_hook_budget=budget))
    return PromptContext(cwd=tmp_path, home=home, config=config)


def test_one_assembly_is_one_job_on_the_workers(tmp_path: Path) -> None:
    every = Every()
    host = host_with((every, "every"))
    pool = CountingPool()
    host._pool = pool
    try:
        built = assemble(host, make_ctx(tmp_path))
    finally:
        pool.shutdown(wait=False)
    assert pool.submits == 1  # was one per hook: a thread hand-off per block
    assert len(every.threads) == 1 and threading.get_ident() not in every.threads
    assert built.block_names == tuple(slot.blocks[0] for slot in PROMPT_TABLE if slot.hook)
    assert built.warnings == ()


def test_without_a_budget_the_hooks_run_on_the_callers_thread(tmp_path: Path) -> None:
    every = Every()
    host = host_with((every, "every"))
    assemble(host, make_ctx(tmp_path, budget=None))
    assert every.threads == {threading.get_ident()}
    assert host._pool is None


def test_a_slow_hook_costs_only_its_block_and_is_named(tmp_path: Path) -> None:
    release = threading.Event()
    host = host_with((Every(), "every"), (Slow("hermes_prompt_platform_hint", release), "slowpoke"))
    try:
        built = assemble(host, make_ctx(tmp_path, budget=0.3))
    finally:
        release.set()
    expected = [slot.blocks[0] for slot in PROMPT_TABLE if slot.hook and slot.blocks[0] != "platform"]
    assert list(built.block_names) == expected  # before and after the slow one: all kept
    assert [(w.kind, w.plugin, w.details["hook"]) for w in built.warnings] == [
        ("prompt_hook_timed_out", "slowpoke", "hermes_prompt_platform_hint")
    ]
    assert built.warnings[0].message.endswith("(blocks left out: platform)")


def test_a_late_answer_never_reaches_the_prompt(tmp_path: Path) -> None:
    release = threading.Event()
    host = host_with((Every(), "every"), (Slow("hermes_prompt_identity", release), "slowpoke"))
    answers = []
    try:
        answers = host.prompt_blocks(HOOKS, make_ctx(tmp_path, budget=0.2))
    finally:
        release.set()
    snapshot = list(answers)
    time.sleep(0.05)  # the abandoned job wakes up and must not touch what was returned
    assert answers == snapshot
    assert [hook for hook, _, _ in answers] == HOOKS[1:]


def test_the_budget_is_per_hook_not_per_assembly(tmp_path: Path) -> None:
    class Steady:
        @hookimpl(tryfirst=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            time.sleep(0.3)
            return PromptBlock(name="identity", text="first")

        @hookimpl(tryfirst=True)
        def hermes_prompt_environment(self, ctx: PromptContext) -> PromptBlock:
            time.sleep(0.3)
            return PromptBlock(name="environment", text="second")

    built = assemble(host_with((Every(), "every"), (Steady(), "steady")), make_ctx(tmp_path, budget=0.6))
    assert built.warnings == ()
    assert built.block_text("identity") == "first" and built.block_text("environment") == "second"


def test_busy_workers_leave_the_rest_out_with_one_warning(tmp_path: Path) -> None:
    release = threading.Event()
    host = host_with((Every(), "every"), (Slow("hermes_prompt_identity", release), "slowpoke"))
    ctx = make_ctx(tmp_path, budget=0.2)
    try:
        assemble(host, ctx)  # holds worker 1; the rest runs on worker 2
        second = assemble(host, ctx)  # holds worker 2; the rest cannot start
        third = assemble(host, ctx)
    finally:
        release.set()
    assert [w.kind for w in second.warnings] == ["prompt_hook_timed_out"] * 2
    assert second.block_names == ()
    assert len(third.warnings) == 1
    warning = third.warnings[0]
    assert warning.plugin == "slowpoke" and "workers are still busy" in warning.message
    assert warning.details["hooks"] == HOOKS
    assert third.prompt == ""


def test_strict_host_raises_on_a_slow_hook(tmp_path: Path) -> None:
    release = threading.Event()
    host = host_with((Every(), "every"), (Slow("hermes_prompt_memory", release), "slowpoke"), strict=True)
    try:
        with collecting(), pytest.raises(HermesPluginError, match="slowpoke"):
            assemble(host, make_ctx(tmp_path, budget=0.2))
    finally:
        release.set()


def test_a_failure_on_the_worker_reaches_the_caller_in_strict_mode(tmp_path: Path) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_environment(self, ctx: PromptContext) -> PromptBlock:
            raise RuntimeError("boom")

    host = host_with((Every(), "every"), (Broken(), "broken"), strict=True)
    with pytest.raises(HermesPluginError, match="broken"):
        assemble(host, make_ctx(tmp_path))


def test_naming_the_plugin_keeps_every_field_of_the_block() -> None:
    from hermes_core.prompt_dispatch import _named

    block = PromptBlock(name="identity", text="t", source="/s", meta={"k": 1})
    (named,) = _named(block, "acme")
    assert named == attrs.evolve(block, plugin="acme")
    # The fast path names the fields; a new field must be carried there too.
    assert [f.name for f in attrs.fields(PromptBlock)] == ["name", "text", "source", "plugin", "meta"]

    class Tagged(PromptBlock):
        pass

    (tagged,) = _named(Tagged(name="identity", text="t"), "acme")
    assert type(tagged) is Tagged and tagged.plugin == "acme"
    assert _named(PromptBlock(name="x", text="y", plugin="own"), "acme")[0].plugin == "own"


HANGING_HOST = r"""
import os, sys, threading
from pathlib import Path
import attrs
from hermes_core import PluginHost, PromptBlock, PromptContext, hookimpl, load_config
from hermes_core.assembler import assemble

class Hangs:
    @hookimpl(tryfirst=True)
    def hermes_prompt_platform_hint(self, ctx):
        threading.Event().wait()  # never returns

class Other:
    @hookimpl
    def hermes_prompt_identity(self, ctx):
        return PromptBlock(name="identity", text="still here")

host = PluginHost.create(load_entry_points=False, plugins=[(Hangs(), "hangs"), (Other(), "other")], env={})
config = load_config(data={}, env={})
config = attrs.evolve(config, plugins=attrs.evolve(config.plugins, prompt_hook_budget=0.2))
ctx = PromptContext(cwd=Path(sys.argv[1]), home=Path(sys.argv[1]), config=config)
built = assemble(host, ctx)
assert [w.plugin for w in built.warnings] == ["hangs"] and "still here" in built.prompt, built
pid = os.fork()
if pid == 0:  # the child has none of the parent's workers: it must start its own
    child = assemble(host, ctx)
    os._exit(0 if "still here" in child.prompt else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
print("done", flush=True)
"""


def test_a_hook_that_never_returns_never_holds_up_exit_or_a_forked_child(tmp_path: Path) -> None:
    import subprocess
    import sys

    # A ThreadPoolExecutor joins its threads at exit: this process would never end (the
    # timeout below is only a guard for the test run itself).
    done = subprocess.run([sys.executable, "-c", HANGING_HOST, str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"


def test_the_worker_pool_is_bounded_daemonic_and_carries_results_and_errors() -> None:
    from hermes_core.daemon_pool import DaemonPool

    pool = DaemonPool(2, thread_name_prefix="test-daemon-pool")
    assert pool.submit(lambda x: x * 2, 21).result(timeout=10) == 42
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(timeout=10)
    release = threading.Event()
    held = [pool.submit(release.wait, 30) for _ in range(2)]
    queued = pool.submit(lambda: "ran")
    assert not queued.done()  # both workers are held: no third thread
    workers = [t for t in threading.enumerate() if t.name.startswith("test-daemon-pool")]
    assert len(workers) == 2 and all(t.daemon for t in workers)
    late = pool.submit(lambda: "never")
    assert late.cancel()
    release.set()
    assert queued.result(timeout=10) == "ran" and all(f.result(timeout=10) for f in held)
    assert late.cancelled()


def test_an_identity_block_with_odd_fields_costs_nothing(tmp_path: Path) -> None:
    class Odd:
        @hookimpl(tryfirst=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="identity", text="me", source=7, meta=None)  # type: ignore[arg-type]

    built = assemble(host_with((Every(), "every"), (Odd(), "odd")), make_ctx(tmp_path))
    assert built.block_text("identity") == "me" and "context_files" in built.block_names
