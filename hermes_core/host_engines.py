"""The engine side of the plugin host: which engines the plugins register, building the one a
session selects, and running its lifecycle steps through their hooks.

``EngineDispatch`` is registered on every host as the ``trylast`` implementation of each
``hermes_engine_*`` step hook, so the selected engine's own method answers unless a plugin
does first; ``engine_step`` turns an engine's failure into a warning (strict mode: an error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError, UnknownEngineError
from hermes_core.hookspecs import hookimpl
from hermes_core.logging import get_logger
from hermes_core.records import EngineSpec, PluginRecord

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.engine import ContextEngine
    from hermes_core.hookguard import CallLog

__all__ = ["DEFAULT_ENGINE", "DISPATCH_PLUGIN", "EngineDispatch", "context_engines", "create_engine", "engine_step"]

log = get_logger("hermes_core.host")

DEFAULT_ENGINE = "compressor"
DISPATCH_PLUGIN = "hermes_core.engine_dispatch"


class DispatchingHost(Protocol):
    """What these steps use of ``host.PluginHost`` (which is built on this module)."""

    @property
    def strict(self) -> bool: ...
    @property
    def records(self) -> Mapping[str, PluginRecord]: ...
    def context_engines(self) -> dict[str, EngineSpec]: ...
    def _call(self, hook: str, kwargs: Mapping[str, Any], *, quiet: bool = False) -> tuple[Any, CallLog]: ...
    def _collect(self, hook: str, kwargs: Mapping[str, Any]) -> list[tuple[str, Any]]: ...

class EngineDispatch:
    """Runs the selected engine's own method as the ``trylast`` impl of each step hook."""

    @hookimpl(trylast=True)
    def hermes_engine_on_session_start(
        self, engine: ContextEngine, session_id: str, boundary_reason: str | None
    ) -> Any:
        if boundary_reason is None:
            engine.on_session_start(session_id)
        else:
            engine.on_session_start(session_id, boundary_reason=boundary_reason)
        return True

    @hookimpl(trylast=True)
    def hermes_engine_update_from_response(self, engine: ContextEngine, usage: Any) -> Any:
        engine.update_from_response(usage)
        return True

    @hookimpl(trylast=True)
    def hermes_engine_should_compress(
        self, engine: ContextEngine, prompt_tokens: int | None
    ) -> tuple[bool, str | None]:
        return engine.should_compress_info(prompt_tokens)

    @hookimpl(trylast=True)
    def hermes_engine_compress(
        self,
        engine: ContextEngine,
        messages: list[dict[str, Any]],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
    ) -> list[dict[str, Any]]:
        return engine.compress(
            messages, current_tokens=current_tokens, focus_topic=focus_topic, force=force
        )

    @hookimpl(trylast=True)
    def hermes_engine_on_session_end(
        self, engine: ContextEngine, session_id: str, messages: list[dict[str, Any]]
    ) -> Any:
        engine.on_session_end(session_id, messages)
        return True


def context_engines(host: DispatchingHost) -> dict[str, EngineSpec]:
    """Engine name -> spec, from every plugin. A name registered twice is an error."""
    engines: dict[str, EngineSpec] = {}
    for plugin, mapping in host._collect("hermes_context_engines", {}):
        record = host.records.get(plugin)
        dist = record.distribution if record else plugin
        version = record.version if record else ""
        for name, engine_class in dict(mapping).items():
            if name in engines:
                other = engines[name]
                raise HermesPluginError(
                    f"engine name {name!r} is registered by two plugins: {other.plugin!r} "
                    f"({other.distribution}) and {plugin!r} ({dist}); uninstall or disable one "
                    "of them and report the clash to the plugin authors"
                )
            engines[name] = EngineSpec(
                name=name, engine_class=engine_class, plugin=plugin, distribution=dist,
                version=version,
            )
    return engines

def create_engine(host: DispatchingHost, name: str, config: Config) -> ContextEngine:
    """Instantiate the engine registered as ``name`` for one session.

    An engine whose constructor raises is reported and replaced by the default engine
    (``DEFAULT_ENGINE``); if the default itself fails, the error propagates.
    """
    engines = host.context_engines()
    if name not in engines:
        raise UnknownEngineError(name, list(engines), path=config.path)
    spec = engines[name]
    try:
        engine = spec.engine_class(config=config, host=host)
    except Exception as exc:
        if host.strict or name == DEFAULT_ENGINE or DEFAULT_ENGINE not in engines:
            raise HermesPluginError(
                f"engine {name!r} (plugin {spec.plugin!r}, {spec.distribution}) failed to start: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        record_warning(
            "engine_construction_failed",
            f"engine {name!r} (plugin {spec.plugin!r}, {spec.distribution}) failed to start: "
            f"{type(exc).__name__}: {exc}; using the {DEFAULT_ENGINE!r} engine instead",
            plugin=spec.plugin,
            engine=name,
        )
        engine = engines[DEFAULT_ENGINE].engine_class(config=config, host=host)
        name = DEFAULT_ENGINE
    log.debug("engine_selected", engine=name)
    return engine  # type: ignore[no-any-return]

def engine_step(host: DispatchingHost, step: str, engine: ContextEngine, **kwargs: Any) -> Any:
    """Run one lifecycle step through its hook; an error is reported, never fatal.

    A raising observer loses only its own part (the engine's step still runs); when no
    implementation answers because the engine itself failed, ``compress`` answers the
    messages unchanged and ``should_compress`` answers ``(False, "error")``. Either way
    ``hermes_engine_on_error`` observers hear of it. Strict mode re-raises.
    """
    hook = f"hermes_engine_{step}"
    try:
        result, record = host._call(hook, {"engine": engine, **kwargs}, quiet=True)
    except HermesPluginError as exc:
        # strict mode: observers still hear of it before the error propagates
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        host._call("hermes_engine_on_error", {"engine": engine, "step": step, "error": cause})
        raise
    for plugin, error in record.failures:
        host._call("hermes_engine_on_error", {"engine": engine, "step": step, "error": error})
        record_warning(
            "engine_step_failed",
            f"engine {engine.name!r} step {step} failed in plugin {plugin!r}: "
            f"{type(error).__name__}: {error}",
            plugin=plugin,
            engine=engine.name,
            step=step,
        )
    if result is None and record.failures:
        if step == "compress":
            return kwargs.get("messages")
        if step == "should_compress":
            return (False, "error")
    return result
