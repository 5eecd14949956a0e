"""Run the prompt hooks of one assembly on the host's worker pool: one hand-off per assembly.

A prompt hook may hang and a thread cannot be preempted, so one job runs the assembly's hooks in
order while the caller waits with a per-hook deadline: a hook past ``budget`` loses its block
(naming the plugin) and the rest go to a fresh job; with no free worker the remaining blocks are
left out with one warning (a hand-off per hook cost a thread switch per block: docs/prompt.md).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError
from hermes_core.hookguard import CURRENT, CallLog
from hermes_core.records import PromptBlock, PromptContext

if TYPE_CHECKING:
    import pluggy


class DispatchingHost(Protocol):
    """What the dispatch uses of ``host.PluginHost`` (which is built on this module)."""

    @property
    def strict(self) -> bool: ...
    @property
    def pm(self) -> pluggy.PluginManager: ...
    @property
    def _running(self) -> list[CallLog]: ...
    def _workers(self) -> concurrent.futures.Executor: ...


#: One hook's answer: its name, its blocks (each naming its plugin) and the answering plugin.
HookBlocks = tuple[str, tuple[PromptBlock, ...], "str | None"]
#: Called after each hook with its blocks; returns the context the next hook sees.
After = Callable[[str, tuple[PromptBlock, ...], PromptContext], PromptContext]

#: Seconds a prompt hook may take before its block is left out (``plugins.prompt_hook_budget``).
DEFAULT_PROMPT_BUDGET = 5.0

# Set inside a worker so a nested prompt call runs inline instead of queueing behind itself.
IN_WORKER: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_in_prompt_worker", default=False)


class _Run:
    """The shared state of one job: what finished, what runs now, and whether it still counts."""

    __slots__ = ("abandoned", "ctx", "lock", "next", "record", "results", "since")

    def __init__(self, start: int, ctx: PromptContext) -> None:
        self.lock = threading.Lock()
        self.next = start  # index of the hook running now (or next to run)
        self.ctx = ctx  # the context that hook sees
        self.results: list[HookBlocks] = []
        self.record: CallLog | None = None
        self.since: float | None = None  # when the current hook started; None: job not started
        self.abandoned = False


def run_prompt_hooks(
    host: DispatchingHost, hooks: Sequence[str], ctx: PromptContext, *, after: After | None = None,
) -> list[HookBlocks]:
    """Every hook of ``hooks`` in order, each within the prompt budget; see the module doc.

    Returns the answers of the hooks that finished in time, in order; a hook left out (timed
    out, or never started) is absent and named in a ``prompt_hook_timed_out`` warning.
    """
    budget = prompt_budget(ctx)
    if budget is None or IN_WORKER.get():
        run = _Run(0, ctx)
        _work(host, hooks, run, after)
        return run.results
    out: list[HookBlocks] = []
    start = 0
    while start < len(hooks):
        run = _Run(start, ctx)
        future = host._workers().submit(contextvars.copy_context().run, _job, host, hooks, run, after)
        queued = time.monotonic()
        left_out = _wait(future, run, queued, budget)
        with run.lock:
            out.extend(run.results)
            index, record, ctx = run.next, run.record, run.ctx
        if left_out is None:
            return out
        if left_out == "busy":
            _busy(host, hooks[index:], budget)
            return out
        _timed_out(host, hooks[index], record, budget)
        start = index + 1
    return out


def _wait(future: concurrent.futures.Future[None], run: _Run, queued: float, budget: float) -> str | None:
    """Sleep until the job ends (``None``) or a hook runs past its budget ("slow"), or the job
    never starts ("busy"); in both latter cases the job is abandoned."""
    timeout = budget
    while True:
        try:
            future.result(timeout=timeout)
            return None
        except concurrent.futures.TimeoutError:
            pass
        now = time.monotonic()
        with run.lock:
            if future.done():
                continue  # it ended while we looked; result() re-raises a failure
            since = run.since
            deadline = (queued if since is None else since) + budget
            if now >= deadline:
                run.abandoned = True
                future.cancel()
                return "busy" if since is None else "slow"
            timeout = deadline - now


def _job(host: DispatchingHost, hooks: Sequence[str], run: _Run, after: After | None) -> None:
    IN_WORKER.set(True)
    with run.lock:
        if run.abandoned:
            return
        run.since = time.monotonic()
    _work(host, hooks, run, after)


def _work(host: DispatchingHost, hooks: Sequence[str], run: _Run, after: After | None) -> None:
    ctx = run.ctx
    for index in range(run.next, len(hooks)):
        hook = hooks[index]
        record = CallLog()
        with run.lock:
            if run.abandoned:
                return
            run.next, run.record, run.ctx, run.since = index, record, ctx, time.monotonic()
        token = CURRENT.set(record)
        host._running.append(record)
        try:
            result = getattr(host.pm.hook, hook)(ctx=ctx)
        finally:
            host._running.remove(record)
            CURRENT.reset(token)
        plugin = record.owner(result) if result is not None else None
        blocks = _named(result, plugin)
        if after is not None:
            ctx = after(hook, blocks, ctx)
        with run.lock:
            if run.abandoned:
                return  # too late: the caller has moved on without this block
            run.results.append((hook, blocks, plugin))
            run.next, run.record, run.ctx = index + 1, None, ctx


def _named(result: Any, plugin: str | None) -> tuple[PromptBlock, ...]:
    if result is None:
        return ()
    blocks = (result,) if isinstance(result, PromptBlock) else tuple(result)
    return tuple(b if b.plugin else _with_plugin(b, plugin) for b in blocks)


def _with_plugin(block: PromptBlock, plugin: str | None) -> PromptBlock:
    if type(block) is not PromptBlock:
        return attrs.evolve(block, plugin=plugin)  # a subclass keeps its type and fields
    # attrs.evolve introspects the class on every call; a dozen blocks per prompt notice
    return PromptBlock(name=block.name, text=block.text, source=block.source, plugin=plugin, meta=block.meta)


def _timed_out(host: DispatchingHost, hook: str, record: CallLog | None, budget: float) -> None:
    block = hook.removeprefix("hermes_prompt_")
    culprit = (record.current if record is not None else None) or "?"
    message = f"plugin {culprit!r} took longer than {budget:g}s in {hook}; the {block} block was left out"
    if host.strict:
        raise HermesPluginError(message)
    record_warning("prompt_hook_timed_out", message, plugin=culprit, hook=hook, seconds=budget)


def _busy(host: DispatchingHost, hooks: Sequence[str], budget: float) -> None:
    culprit = ", ".join(sorted({r.current or "?" for r in list(host._running)})) or "?"
    blocks = [hook.removeprefix("hermes_prompt_") for hook in hooks]
    what = f"the {blocks[0]} block was" if len(blocks) == 1 else f"the blocks {', '.join(blocks)} were"
    message = (
        f"{what} left out: the prompt-hook workers are still busy with plugin {culprit} "
        f"past the {budget:g}s budget"
    )
    if host.strict:
        raise HermesPluginError(message)
    named = {"hook": hooks[0]} if len(hooks) == 1 else {"hooks": list(hooks)}
    record_warning("prompt_hook_timed_out", message, plugin=culprit, seconds=budget, **named)


def prompt_budget(ctx: PromptContext) -> float | None:
    """Seconds one prompt hook may take (``plugins.prompt_hook_budget``); ``None``: no limit."""
    budget = getattr(getattr(ctx.config, "plugins", None), "prompt_hook_budget", DEFAULT_PROMPT_BUDGET)
    return float(budget) if budget else None
