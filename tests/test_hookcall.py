"""Hooks called through a ``hookcall.Plan`` answer exactly as pluggy's own caller does, and the
plan steps aside whenever pluggy's caller would see something different."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pluggy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, Session, hookimpl
from hermes_core.hookcall import Plan, plan_for, run

spec = pluggy.HookspecMarker("probe")
impl = pluggy.HookimplMarker("probe")


class Specs:
    @spec(firstresult=True)
    def probe_first(self, x: int, log: list[str]) -> Any:
        """firstresult"""

    @spec
    def probe_all(self, x: int, log: list[str]) -> Any:
        """collect"""


# What one implementation does: answer None, answer a value, raise; or a wrapper that passes
# the result on, replaces it, swallows an exception or raises one of its own.
KINDS = ("none", "value", "raise", "wrap", "wrap_replace", "wrap_swallow", "wrap_raise")


def _plugin(i: int, kind: str, hook: str) -> object:
    class P:
        pass

    if kind.startswith("wrap"):
        def fn(x: int, log: list[str]) -> Generator[None, Any, Any]:
            log.append(f"{i}:before")
            try:
                result = yield
            except ValueError as exc:
                log.append(f"{i}:caught {exc}")
                if kind == "wrap_swallow":
                    return f"swallowed by {i}"
                raise
            log.append(f"{i}:after {result!r}")
            if kind == "wrap_raise":
                raise ValueError(f"wrapper {i}")
            return [*result, i] if kind == "wrap_replace" and isinstance(result, list) else (
                f"replaced by {i}" if kind == "wrap_replace" else result)

        setattr(P, hook, staticmethod(impl(wrapper=True)(fn)))
    else:
        def fn2(x: int, log: list[str]) -> Any:
            log.append(f"{i}:{kind}")
            if kind == "raise":
                raise ValueError(f"impl {i}")
            return None if kind == "none" else x * 10 + i

        setattr(P, hook, staticmethod(impl(fn2)))
    return P()


def _outcome(fn: Any) -> tuple[str, Any, list[str]]:
    log: list[str] = []
    try:
        return "ok", fn(log), log
    except ValueError as exc:
        return "raised", str(exc), log


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6), st.sampled_from(["probe_first", "probe_all"]))
def test_a_plan_answers_like_pluggy(kinds: list[str], hook: str) -> None:
    pm = pluggy.PluginManager("probe")
    pm.add_hookspecs(Specs)
    for i, kind in enumerate(kinds):
        pm.register(_plugin(i, kind, hook), name=f"p{i}")
    caller = getattr(pm.hook, hook)
    plan = plan_for(caller)
    assert plan is not None and plan.fits(caller, {"x": 1, "log": []})
    expected = _outcome(lambda log: caller(x=3, log=log))
    assert _outcome(lambda log: run(plan, {"x": 3, "log": log})) == expected


def test_no_plan_for_what_pluggy_runs_specially() -> None:
    pm = pluggy.PluginManager("probe")
    pm.add_hookspecs(Specs)

    class Old:
        @impl(hookwrapper=True)
        def probe_first(self, x: int, log: list[str]) -> Generator[None, Any, None]:
            yield

    pm.register(Old())
    assert plan_for(pm.hook.probe_first) is None  # an old-style hookwrapper
    assert plan_for(pm.hook.probe_all) is not None
    assert not plan_for(pm.hook.probe_all).fits(pm.hook.probe_all, {"x": 1})  # type: ignore[union-attr]


# --- through the host --------------------------------------------------------------------


def _session(tmp_path: Path) -> Session:
    return Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                        context_length=200_000, persist=False, host=PluginHost.create())


def test_the_host_calls_a_turn_hook_without_pluggys_caller_once_planned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _session(tmp_path)
    session.handle_tool_call("context_search", {"query": "x"})  # builds the plan
    entered: list[str] = []
    real = pluggy.HookCaller.__call__

    def counting(self: Any, **kwargs: Any) -> Any:
        entered.append(self.name)
        return real(self, **kwargs)

    monkeypatch.setattr(pluggy.HookCaller, "__call__", counting)
    session.handle_tool_call("context_search", {"query": "x"})
    assert "hermes_tool_call" not in entered
    assert isinstance(session.host._plans["hermes_tool_call"], Plan)


def test_a_plugin_registered_after_the_plan_still_answers(tmp_path: Path) -> None:
    session = _session(tmp_path)
    with pytest.raises(KeyError):
        session.handle_tool_call("late_tool", {})  # nobody answers it; the plan is built

    class Late:
        @hookimpl
        def hermes_tool_call(self, name: str, arguments: Any, ctx: Any) -> Any:
            return "late answer" if name == "late_tool" else None

    session.host.register(Late(), "late")
    assert session.handle_tool_call("late_tool", {}) == "late answer"
    session.host.unregister("late")
    with pytest.raises(KeyError):
        session.handle_tool_call("late_tool", {})


def test_call_monitoring_installed_later_sees_every_call(tmp_path: Path) -> None:
    session = _session(tmp_path)
    session.handle_tool_call("context_search", {"query": "x"})  # planned
    seen: list[str] = []
    undo = session.host.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: seen.append(name), lambda outcome, name, impls, kwargs: None
    )
    try:
        session.handle_tool_call("context_search", {"query": "x"})
    finally:
        undo()
    assert "hermes_tool_call" in seen
