"""A hook's implementations called without pluggy's general caller, for the hooks of a turn.

pluggy's ``HookCaller.__call__`` checks the keyword arguments against the spec, copies the
implementation list and runs its general executor: eight Python frames per call, plus a
comprehension per implementation. A turn's tool side calls two hooks, and a cold turn pays for
every frame it enters (measured: ~35 us of a 150-190 us tool-side turn with a frozen catalog,
each sample starting after rank_bm25's rebuild and ``gc.collect()``).

A ``Plan`` is what that work resolves to for one hook: the implementations in call order and the
argument names each takes. The host keeps one per hook and reuses it while

* pluggy's own implementation list is unchanged: pluggy edits it in place when a plugin
  registers or unregisters, so every call compares it with the plan's copy (a C-level ``==``
  of two short lists of ``HookImpl`` objects, which compare by identity);
* no call monitoring is installed (``--trace-hooks`` replaces the manager's executor);
* the call passes every argument the spec declares (else pluggy's call warns, and runs).

Hooks that pluggy's executor treats specially never get a plan: historic hooks, old-style
``hookwrapper`` implementations, keyword-only implementation arguments, spec defaults. ``run``
follows pluggy's ``_multicall`` for the rest: implementations last-registered first, a
``firstresult`` hook stops at the first non-``None`` answer, new-style wrappers get the result
(or the exception) after their ``yield`` and may replace it.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

__all__ = ["Plan", "plan_for", "run"]


class Plan:
    """One hook's implementations resolved for calling (see the module docstring)."""

    __slots__ = ("caller", "impls", "steps", "firstresult", "needs")

    def __init__(self, caller: Any, impls: list[Any], firstresult: bool, needs: frozenset[str]) -> None:
        self.caller = caller
        #: a copy of pluggy's list, compared with it on every call
        self.impls = impls
        #: (implementation, its argument names, is a new-style wrapper), in call order
        self.steps = tuple((impl, tuple(impl.argnames), bool(impl.wrapper)) for impl in reversed(impls))
        self.firstresult = firstresult
        #: the argument names the spec declares
        self.needs = needs

    def fits(self, caller: Any, kwargs: Mapping[str, Any]) -> bool:
        """Whether the plan still answers ``caller(**kwargs)`` as pluggy would."""
        return (
            caller is self.caller
            and self.impls == caller._hookimpls
            and kwargs.keys() >= self.needs
        )


def plan_for(caller: Any) -> Plan | None:
    """A plan for ``caller`` (a pluggy ``HookCaller``), or ``None`` when pluggy's executor
    must run it."""
    spec = getattr(caller, "spec", None)
    impls = getattr(caller, "_hookimpls", None)
    if spec is None or impls is None or caller.is_historic() or spec.kwargdefaults:
        return None
    if any(impl.hookwrapper or impl.kwargnames for impl in impls):
        return None
    return Plan(caller, list(impls), bool(spec.opts.get("firstresult")), frozenset(spec.argnames))


def run(plan: Plan, kwargs: Mapping[str, Any]) -> Any:
    """``plan.caller(**kwargs)``, as pluggy's executor runs it, without its frames."""
    getitem = kwargs.__getitem__
    firstresult = plan.firstresult
    results: list[Any] = []
    teardowns: list[Generator[None, Any, Any]] = []
    exception: BaseException | None = None
    try:
        for impl, names, wrapper in plan.steps:
            if wrapper:
                gen = impl.function(*map(getitem, names))
                try:
                    next(gen)
                except StopIteration:
                    _wrapfail(gen, "did not yield")
                teardowns.append(gen)
            else:
                answer = impl.function(*map(getitem, names))
                if answer is not None:
                    results.append(answer)
                    if firstresult:
                        break
    except BaseException as exc:  # noqa: BLE001 - handed to the wrappers, then raised
        exception = exc
    result: Any = (results[0] if results else None) if firstresult else results
    for gen in reversed(teardowns):
        try:
            if exception is not None:
                try:
                    gen.throw(exception)
                except RuntimeError as error:
                    # a StopIteration thrown into a generator comes back as a RuntimeError
                    if isinstance(exception, StopIteration) and error.__cause__ is exception:
                        gen.close()
                        continue
                    raise
            else:
                gen.send(result)
            gen.close()
        except StopIteration as stop:
            result = stop.value
            exception = None
            continue
        except BaseException as exc:  # noqa: BLE001 - the next wrapper out gets it
            exception = exc
            continue
        _wrapfail(gen, "has second yield")
    if exception is not None:
        raise exception
    return result


def _wrapfail(gen: Any, what: str) -> None:
    code = gen.gi_code
    raise RuntimeError(f"wrap_controller at {code.co_name!r} {code.co_filename}:{code.co_firstlineno} {what}")
