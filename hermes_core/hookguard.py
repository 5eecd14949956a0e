"""Per-implementation isolation: each hook implementation is wrapped once, at registration, so
pluggy keeps ordering and calling while a raising or ill-typed plugin costs only its own part.

The wrappers also feed the observers (``--trace-hooks``, ``hook_recorder``) and note in a
per-call ``CallLog`` which plugin produced which result (a block is credited to its writer).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Generator, Iterable, Mapping
from contextvars import ContextVar
from time import perf_counter
from typing import Any, Protocol

import attrs

from hermes_core.config import ConfigSection
from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError
from hermes_core.logging import get_logger
from hermes_core.records import ContextFileLoader, PromptBlock, SkillSource
from hermes_core.transcript_format import TranscriptFormat

log = get_logger("hermes_core.hookguard")

_summary = reprlib.Repr()
_summary.maxstring = 60
_summary.maxother = 60
_summary.maxlist = 4
_summary.maxdict = 4
_summary.maxlevel = 2


def summarize(value: Any) -> str:
    """A short, bounded ``repr`` for traces (never the whole history)."""
    try:
        return _summary.repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not break tracing
        return f"<{type(value).__name__}>"


@attrs.frozen(kw_only=True)
class HookCall:
    """One implementation's call, as observers see it.

    ``seconds`` of a wrapper includes the implementations it wraps.
    """

    hook: str
    plugin: str
    wrapper: bool
    args: Mapping[str, str]
    result: str
    seconds: float
    error: str | None = None


class CallLog:
    """What happened during one facade call: answers by plugin, failures, who runs now."""

    __slots__ = ("answers", "current", "failures", "quiet")

    def __init__(self, *, quiet: bool = False) -> None:
        self.answers: list[tuple[str, Any]] = []
        self.failures: list[tuple[str, BaseException]] = []
        self.current: str | None = None
        #: the caller reports failures itself (one warning per failure, not two)
        self.quiet = quiet

    def owner(self, value: Any) -> str | None:
        """The plugin that produced ``value`` (the outermost one that returned it)."""
        for plugin, answer in reversed(self.answers):
            if answer is value:
                return str(plugin)
        return None


# Plumbing, not a memo: pluggy calls the guard wrappers with the hook's arguments alone, so the
# call in progress reaches them through the context.
CURRENT: ContextVar[CallLog | None] = ContextVar("hermes_hook_call_log", default=None)


class GuardPolicy(Protocol):
    strict: bool
    observers: list[Callable[[HookCall], None]]


# --- result checks: each returns the (normalised) value or raises TypeError with the reason ---


def _one_or_many(kind: type, label: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, kind):
            return value
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise TypeError(f"expected a {label} or a sequence of them, got {type(value).__name__}")
        items = tuple(value)
        for item in items:
            if not isinstance(item, kind):
                raise TypeError(f"expected only {label} items, got a {type(item).__name__}")
        return items

    return check


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"expected a sequence of strings, got {type(value).__name__}")
    items = tuple(value)
    if not all(isinstance(item, str) for item in items):
        raise TypeError("expected a sequence of strings")
    return items


def _mapping_of(predicate: Callable[[Any], bool], label: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping of name to {label}, got {type(value).__name__}")
        for name, item in value.items():
            if not isinstance(name, str) or not predicate(item):
                raise TypeError(f"entry {name!r} is not a {label} ({type(item).__name__})")
        return value

    return check


def _instance(kind: type | tuple[type, ...], label: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, kind):
            raise TypeError(f"expected {label}, got {type(value).__name__}")
        return value

    return check


def _with_methods(*names: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, (str, bytes, int, float, Mapping)):
            raise TypeError(f"expected an object with {', '.join(names)}, got {type(value).__name__}")
        missing = [n for n in names if not callable(getattr(value, n, None))]
        if missing:
            raise TypeError(f"{type(value).__name__} has no {', '.join(missing)} method")
        return value

    return check


def _callable(value: Any) -> Any:
    if not callable(value):
        raise TypeError(f"expected a callable, got {type(value).__name__}")
    return value


def _decision(value: Any) -> Any:
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool)):
        raise TypeError(f"expected (bool, reason), got {summarize(value)}")
    return value


_PROMPT = _one_or_many(PromptBlock, "PromptBlock")


#: What each hook's (non-``None``) result must be, beyond "anything".
CHECKS: dict[str, Callable[[Any], Any]] = {
    "hermes_config_sections": _one_or_many(ConfigSection, "ConfigSection"),
    "hermes_context_file_loaders": _one_or_many(ContextFileLoader, "ContextFileLoader"),
    "hermes_context_scan": _strings,
    "hermes_skills_sources": _one_or_many(SkillSource, "SkillSource"),
    "hermes_context_engines": _mapping_of(lambda v: isinstance(v, type), "engine class"),
    "hermes_summarizers": _mapping_of(callable, "summariser factory"),
    "hermes_tokenizer": _with_methods("count"),
    "hermes_session_store": _with_methods("get_prompt", "put_prompt"),
    "hermes_environment_runner": _callable,
    "hermes_tool_result_writer": _callable,
    "hermes_engine_should_compress": _decision,
    "hermes_engine_compress": _instance(list, "a list of messages"),
    "hermes_tools_assemble": _instance(list, "a list of tool definitions"),
    "hermes_tool_results_turn_budget": _instance(list, "a list of tool results"),
    "hermes_payload_cache_layout": _instance(dict, "a payload dict"),
    "hermes_transcript_formats": _one_or_many(TranscriptFormat, "TranscriptFormat"),
}


def check_for(hook: str) -> Callable[[Any], Any] | None:
    if hook.startswith("hermes_prompt_"):
        return _PROMPT
    return CHECKS.get(hook)


# --- the wrappers -------------------------------------------------------------------------


def _failed(policy: GuardPolicy, plugin: str, hook: str, exc: BaseException, call: CallLog | None) -> None:
    if call is not None:
        call.failures.append((plugin, exc))
    if policy.strict:
        if isinstance(exc, HermesPluginError):
            raise exc
        raise HermesPluginError(f"plugin {plugin!r} raised in {hook}: {type(exc).__name__}: {exc}") from exc
    if call is not None and call.quiet:
        return
    record_warning(
        "plugin_hook_failed",
        f"plugin {plugin!r} failed in {hook}: {type(exc).__name__}: {exc}; "
        "its contribution was left out",
        plugin=plugin,
        hook=hook,
    )


def _checked(policy: GuardPolicy, check: Callable[[Any], Any] | None, value: Any, plugin: str, hook: str) -> Any:
    if value is None or check is None:
        return value
    try:
        return check(value)
    except TypeError as exc:
        message = f"plugin {plugin!r} returned the wrong type from {hook}: {exc}; its result was dropped"
        if policy.strict:
            raise HermesPluginError(message) from None
        record_warning("plugin_result_invalid", message, plugin=plugin, hook=hook)
        return None


def _observe(
    policy: GuardPolicy, hook: str, plugin: str, wrapper: bool, argnames: tuple[str, ...],
    args: tuple[Any, ...], result: Any, start: float, error: BaseException | None,
) -> None:
    call = HookCall(
        hook=hook, plugin=plugin, wrapper=wrapper,
        args={name: summarize(value) for name, value in zip(argnames, args)},
        result=summarize(result), seconds=perf_counter() - start,
        error=None if error is None else f"{type(error).__name__}: {error}",
    )
    for observer in list(policy.observers):
        observer(call)


def guard(policy: GuardPolicy, impl: Any, hook: str, *, firstresult: bool) -> Callable[..., Any]:
    """The isolating replacement for ``impl.function`` (a pluggy ``HookImpl``)."""
    function = impl.function
    plugin: str = impl.plugin_name
    argnames: tuple[str, ...] = tuple(impl.argnames)
    check = check_for(hook)
    if impl.hookwrapper:
        return _old_style(policy, function, plugin, hook, argnames, check if firstresult else _as_list)
    if impl.wrapper:
        return _new_style(policy, function, plugin, hook, argnames, check if firstresult else _as_list)

    def guarded(*args: Any) -> Any:
        call = CURRENT.get()
        if call is not None:
            call.current = plugin
        start = perf_counter() if policy.observers else 0.0
        error: BaseException | None = None
        try:
            result = function(*args)
            if result is not None and check is not None:  # most impls answer None: no call
                result = _checked(policy, check, result, plugin, hook)
        except Exception as exc:  # noqa: BLE001 - isolation is the point
            error, result = exc, None
            _failed(policy, plugin, hook, exc, call)
        if policy.observers:
            _observe(policy, hook, plugin, False, argnames, args, result, start, error)
        if call is not None and result is not None:
            call.answers.append((plugin, result))
        return result

    return guarded


def _as_list(value: Any) -> Any:
    if not isinstance(value, list):
        raise TypeError(f"a wrapper of a collect hook must return a list, got {type(value).__name__}")
    return value


def _started(
    policy: GuardPolicy, function: Callable[..., Any], args: tuple[Any, ...], plugin: str, hook: str,
    call: CallLog | None, what: str,
) -> Generator[None, Any, Any] | None:
    """Run a wrapper up to its ``yield``; ``None`` (the failure noted) when it never got there."""
    try:
        gen: Generator[None, Any, Any] = function(*args)
        next(gen)
    except StopIteration:
        _failed(policy, plugin, hook, RuntimeError(f"the {what} did not yield"), call)
        return None
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        _failed(policy, plugin, hook, exc, call)
        return None
    return gen


def _finished(
    policy: GuardPolicy, gen: Generator[None, Any, Any], sent: Any, plugin: str, hook: str,
    call: CallLog | None, what: str,
) -> tuple[StopIteration | None, BaseException | None]:
    """Resume a wrapper after its ``yield``: (how it returned, or the error it ended with)."""
    try:
        gen.send(sent)
    except StopIteration as stop:
        return stop, None
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        _failed(policy, plugin, hook, exc, call)
        return None, exc
    gen.close()
    error = RuntimeError(f"the {what} yielded twice")
    _failed(policy, plugin, hook, error, call)
    return None, error


def _new_style(
    policy: GuardPolicy, function: Callable[..., Any], plugin: str, hook: str,
    argnames: tuple[str, ...], check: Callable[[Any], Any] | None,
) -> Callable[..., Any]:
    def guarded(*args: Any) -> Generator[None, Any, Any]:
        call = CURRENT.get()
        start = perf_counter() if policy.observers else 0.0
        gen = _started(policy, function, args, plugin, hook, call, "wrapper")
        if gen is None:
            return (yield)
        try:
            inner = yield
        except BaseException as exc:  # the inner calls raised (strict mode): the wrapper may handle it
            try:
                gen.throw(exc)
            except StopIteration as stop:
                return stop.value
            gen.close()
            raise
        ended, error = _finished(policy, gen, inner, plugin, hook, call, "wrapper")
        value = inner
        if ended is not None:
            value = _checked(policy, check, ended.value, plugin, hook)
            if value is None and ended.value is not None:
                value = inner
        if call is not None and value is not inner and value is not None:
            call.answers.append((plugin, value))
        if policy.observers:
            _observe(policy, hook, plugin, True, argnames, args, value, start, error)
        return value

    return guarded


def _old_style(
    policy: GuardPolicy, function: Callable[..., Any], plugin: str, hook: str,
    argnames: tuple[str, ...], check: Callable[[Any], Any] | None,
) -> Callable[..., Any]:
    def guarded(*args: Any) -> Generator[None, Any, None]:
        call = CURRENT.get()
        start = perf_counter() if policy.observers else 0.0
        gen = _started(policy, function, args, plugin, hook, call, "hookwrapper")
        if gen is None:
            yield
            return
        outcome = yield
        before = outcome.get_result() if outcome.exception is None else None
        _, error = _finished(policy, gen, outcome, plugin, hook, call, "hookwrapper")
        if outcome.exception is None:
            after = outcome.get_result()
            if after is not before:
                checked = _checked(policy, check, after, plugin, hook)
                if checked is None and after is not None:
                    outcome.force_result(before)
                elif call is not None:
                    call.answers.append((plugin, checked))
        if policy.observers:
            result = outcome.get_result() if outcome.exception is None else None
            _observe(policy, hook, plugin, True, argnames, args, result, start, error)

    return guarded
