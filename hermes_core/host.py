"""The PluginHost: owns one pluggy PluginManager, loads plugins resiliently, and is the typed
facade every hook call site goes through.

There is no module-global manager: ``PluginHost.create()`` builds a fresh host (tests build their
own). Plugins come from the ``hermes.plugins`` entry-point group - the built-ins are declared
there in hermes-core's own ``pyproject.toml`` exactly like a third party's. A plugin that fails
to import or register is recorded as ``failed`` and everything else keeps working, unless strict
mode (``--strict-plugins`` / ``HERMES_STRICT_PLUGINS=1``) turns that into an error.

Hooks are called through ``_run``: it follows pluggy's call order (``reversed(get_hookimpls())``,
new-style wrappers outermost) but calls each implementation itself, so a result or a failure
can be attributed to the plugin that produced it. That attribution is what lets a raising
plugin cost one block and a warning naming it, instead of the whole prompt.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError, UnknownEngineError
from hermes_core.hookspecs import PROJECT, SPEC_CLASSES, hookimpl
from hermes_core.logging import get_logger
from hermes_core.records import (
    ContextFileLoader,
    EngineSpec,
    HookImplInfo,
    HookInfo,
    PluginRecord,
    PromptBlock,
    PromptContext,
    SkillSource,
)

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.engine import ContextEngine
    from hermes_core.tokens import Tokenizer

log = get_logger("hermes_core.host")

ENTRY_POINT_GROUP = "hermes.plugins"
CORE_DISTRIBUTION = "hermes-core"
#: Built-ins that must be *declared* by the installed metadata; missing means the package is not
#: installed (only imported from a checkout). They can still be blocked: DESIGN.md promises that
#: every built-in can be blocked and replaced.
ESSENTIAL_PLUGINS = frozenset({"identity", "compressor"})
DISPATCH_PLUGIN = "hermes_core.engine_dispatch"


class _PluginCallError(Exception):
    def __init__(self, plugin: str, hook: str, error: BaseException) -> None:
        super().__init__(f"plugin {plugin!r} raised in {hook}: {type(error).__name__}: {error}")
        self.plugin = plugin
        self.hook = hook
        self.error = error


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


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return (env.get(name) or "").strip().lower() in {"1", "true", "yes", "on"}


@attrs.define(kw_only=True, eq=False)
class PluginHost:
    """One plugin manager and the records of what it loaded. Build with ``create``."""

    pm: pluggy.PluginManager
    strict: bool = False
    trace: bool = False
    records: dict[str, PluginRecord] = attrs.field(factory=dict)
    _engines: dict[str, EngineSpec] | None = None
    _tokenizers: dict[str, Any] = attrs.field(factory=dict)
    _undo_trace: Callable[[], None] | None = None

    # --- construction -------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        *,
        load_entry_points: bool = True,
        only: Iterable[str] | None = None,
        blocked: Iterable[str] = (),
        strict: bool | None = None,
        trace: bool | None = None,
        config: Config | None = None,
        env: Mapping[str, str] | None = None,
        plugins: Iterable[tuple[object, str]] = (),
    ) -> PluginHost:
        """Build a fresh host.

        ``blocked`` names plugins never to register (plus ``plugins.disabled`` of ``config``
        and ``HERMES_DISABLE_PLUGINS``); ``only`` restricts third-party plugins to a set of
        names (``HERMES_LOAD_PLUGINS``: empty = built-ins only); ``plugins`` registers extra
        ``(object, name)`` pairs directly (tests, embedders).
        """
        env = os.environ if env is None else env
        pm = pluggy.PluginManager(PROJECT)
        for spec_class in SPEC_CLASSES:
            pm.add_hookspecs(spec_class)
        host = cls(
            pm=pm,
            strict=_env_flag(env, "HERMES_STRICT_PLUGINS") if strict is None else strict,
            trace=_env_flag(env, "HERMES_TRACE_HOOKS") if trace is None else trace,
        )
        if host.trace:
            host._install_tracing()
        pm.register(EngineDispatch(), name=DISPATCH_PLUGIN)
        block = set(blocked)
        if config is not None:
            block.update(config.plugins.disabled)
        block.update(p.strip() for p in (env.get("HERMES_DISABLE_PLUGINS") or "").split(",") if p.strip())
        if only is None and "HERMES_LOAD_PLUGINS" in env:
            only = [p.strip() for p in env["HERMES_LOAD_PLUGINS"].split(",") if p.strip()]
        if load_entry_points:
            host._load_entry_points(block, None if only is None else set(only))
        for obj, name in plugins:
            host.register(obj, name)
        host._check_pending()
        pm.hook.hermes_plugin_host_ready.call_historic(kwargs={"host": host})
        return host

    def _load_entry_points(self, blocked: set[str], only: set[str] | None) -> None:
        seen: dict[str, str] = {}
        declared: set[str] = set()
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=_ep_key):
            dist = ep.dist.name if ep.dist is not None else "unknown"
            version = ep.dist.version if ep.dist is not None else "?"
            if dist == CORE_DISTRIBUTION:
                declared.add(ep.name)
            bound = log.bind(plugin=ep.name, dist=dist, version=version)
            if ep.name in seen and seen[ep.name] != dist:
                self._fail(
                    ep.name, dist, version, ep.value,
                    f"plugin name {ep.name!r} is declared by both {seen[ep.name]} and {dist}; "
                    "please report this to the plugin authors",
                )
                continue
            seen[ep.name] = dist
            if ep.name in blocked:
                self.pm.set_blocked(ep.name)
                self.records[ep.name] = PluginRecord(
                    name=ep.name, distribution=dist, version=version, module=ep.value,
                    status="blocked",
                )
                bound.info("plugin_blocked")
                continue
            if only is not None and dist != CORE_DISTRIBUTION and ep.name not in only:
                continue
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the host
                self._fail(ep.name, dist, version, ep.value, f"{type(exc).__name__}: {exc}", exc)
                continue
            self._register_record(obj, ep.name, dist, version, ep.value)
        missing = ESSENTIAL_PLUGINS - declared
        if missing:
            raise HermesPluginError(
                "hermes-core is not installed (its entry points "
                + ", ".join(sorted(missing))
                + " are missing); run `pip install -e .` in the checkout"
            )

    def register(self, obj: object, name: str, *, distribution: str = "<registered>") -> None:
        """Register a plugin object directly (tests, embedders); recorded like any other."""
        module = getattr(obj, "__name__", None) or type(obj).__module__
        self._register_record(obj, name, distribution, "", module)
        self._engines = None

    def unregister(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin, name=name)
        self.records.pop(name, None)
        self._engines = None

    def _register_record(self, obj: object, name: str, dist: str, version: str, module: str) -> None:
        try:
            self.pm.register(obj, name=name)
        except Exception as exc:  # noqa: BLE001
            self._fail(name, dist, version, module, f"{type(exc).__name__}: {exc}", exc)
            return
        hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(obj) or ()))
        self.records[name] = PluginRecord(
            name=name, distribution=dist, version=version, module=module, status="active",
            hooks=hooks,
        )
        log.debug("plugin_loaded", plugin=name, dist=dist, version=version)

    def _fail(
        self, name: str, dist: str, version: str, module: str, error: str,
        exc: BaseException | None = None,
    ) -> None:
        self.records[name] = PluginRecord(
            name=name, distribution=dist, version=version, module=module, status="failed",
            error=error,
        )
        record_warning(
            "plugin_load_failed",
            f"plugin {name!r} ({dist}) failed to load: {error}",
            plugin=name,
            dist=dist,
        )
        if self.strict:
            raise HermesPluginError(f"plugin {name!r} from {dist} failed to load: {error}") from exc

    def _check_pending(self) -> None:
        # check_pending reports one offender at a time: drop it, record it, look again.
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                plugin = exc.plugin
                name = self.pm.get_name(plugin) or repr(plugin)
                record = self.records.get(name)
                dist = record.distribution if record else "unknown"
                message = f"{exc} (plugin {name!r} from {dist})"
                self.pm.unregister(plugin)
                self._fail(
                    name, dist, record.version if record else "?",
                    record.module if record else "", message, exc,
                )

    def _install_tracing(self) -> None:
        def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            log.debug("hook_called", hook=hook_name, impls=[i.plugin_name for i in impls])

        def after(outcome: Any, hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            log.debug("hook_returned", hook=hook_name, failed=outcome.exception is not None)

        self._undo_trace = self.pm.add_hookcall_monitoring(before, after)

    # --- introspection ------------------------------------------------------------------

    def plugins(self) -> list[PluginRecord]:
        """Every plugin the host knows, active, blocked or failed, by name."""
        return [self.records[name] for name in sorted(self.records)]

    def hooks(self) -> list[HookInfo]:
        """Every hook spec in declaration order, with its implementations in call order."""
        out: list[HookInfo] = []
        for spec_class in SPEC_CLASSES:
            area = spec_class.__module__.rsplit(".", 1)[-1]
            for attr in vars(spec_class):
                if not attr.startswith("hermes_"):
                    continue
                caller = getattr(self.pm.hook, attr)
                opts = caller.spec.opts if caller.spec else {}
                mode = (
                    "historic" if opts.get("historic")
                    else "firstresult" if opts.get("firstresult") else "collect"
                )
                impls = tuple(
                    HookImplInfo(
                        plugin=impl.plugin_name,
                        wrapper=bool(impl.wrapper or impl.hookwrapper),
                        tryfirst=bool(impl.tryfirst),
                        trylast=bool(impl.trylast),
                    )
                    for impl in reversed(caller.get_hookimpls())
                )
                doc = (caller.spec.function.__doc__ or "").strip() if caller.spec else ""
                out.append(
                    HookInfo(
                        name=attr,
                        area=area,
                        mode=mode,  # type: ignore[arg-type]
                        args=tuple(caller.spec.argnames) if caller.spec else (),
                        doc=doc,
                        impls=impls,
                    )
                )
        return out

    # --- the attributed runner ----------------------------------------------------------

    def _run(
        self, hook: str, kwargs: Mapping[str, Any], *, firstresult: bool
    ) -> list[tuple[str, Any]]:
        """Call ``hook`` like pluggy does, but per implementation, attributing results.

        Returns ``[(plugin, result), ...]`` of non-``None`` results (at most one when
        ``firstresult``). A raising implementation raises ``_PluginCallError`` naming it.
        """
        caller = getattr(self.pm.hook, hook)
        impls = list(reversed(caller.get_hookimpls()))
        if self.trace:
            log.debug("hook_called", hook=hook, impls=[i.plugin_name for i in impls])
        wrappers = [i for i in impls if i.wrapper or i.hookwrapper]
        plain = [i for i in impls if not (i.wrapper or i.hookwrapper)]
        results: list[tuple[str, Any]] = []
        generators = []
        for impl in wrappers:
            try:
                gen = impl.function(*[kwargs[a] for a in impl.argnames])
                next(gen)
            except Exception as exc:  # noqa: BLE001
                raise _PluginCallError(impl.plugin_name, hook, exc) from exc
            generators.append((impl, gen))
        error: BaseException | None = None
        try:
            for impl in plain:
                try:
                    result = impl.function(*[kwargs[a] for a in impl.argnames])
                except Exception as exc:  # noqa: BLE001
                    raise _PluginCallError(impl.plugin_name, hook, exc) from exc
                if result is not None:
                    results.append((impl.plugin_name, result))
                    if firstresult:
                        break
        except BaseException as exc:  # noqa: BLE001
            error = exc
        # New-style wrappers see the inner result and may replace it (last one outermost).
        value: Any = (results[0][1] if results else None) if firstresult else [r for _, r in results]
        for impl, gen in reversed(generators):
            try:
                if error is not None:
                    gen.throw(error)
                else:
                    gen.send(value)
            except StopIteration as stop:
                value, error = stop.value, None
            except _PluginCallError as exc:
                error = exc
            except Exception as exc:  # noqa: BLE001
                error = _PluginCallError(impl.plugin_name, hook, exc)
            else:
                error = _PluginCallError(impl.plugin_name, hook, RuntimeError("wrapper yielded twice"))
        if self.trace:
            log.debug("hook_returned", hook=hook, failed=error is not None)
        if error is not None:
            raise error
        if firstresult:
            if value is None:
                return []
            answered = results[0][0] if results and results[0][1] is value else (
                generators[0][0].plugin_name if generators else results[0][0] if results else "?"
            )
            return [(answered, value)]
        if generators:
            return [("?", v) for v in value]
        return results

    def _guarded(
        self, hook: str, kwargs: Mapping[str, Any], *, firstresult: bool, what: str
    ) -> list[tuple[str, Any]]:
        try:
            return self._run(hook, kwargs, firstresult=firstresult)
        except _PluginCallError as exc:
            record_warning(
                "plugin_hook_failed",
                f"plugin {exc.plugin!r} failed while producing {what}: "
                f"{type(exc.error).__name__}: {exc.error}; {what} was left out",
                plugin=exc.plugin,
                hook=hook,
            )
            if self.strict:
                raise HermesPluginError(str(exc)) from exc.error
            return []

    def _collect_each(self, hook: str, kwargs: Mapping[str, Any], what: str) -> list[tuple[str, Any]]:
        """Collect hook, one implementation at a time: a raising plugin loses only its part."""
        caller = getattr(self.pm.hook, hook)
        out: list[tuple[str, Any]] = []
        for impl in reversed(caller.get_hookimpls()):
            if impl.wrapper or impl.hookwrapper:
                continue
            try:
                result = impl.function(*[kwargs[a] for a in impl.argnames])
            except Exception as exc:  # noqa: BLE001
                record_warning(
                    "plugin_hook_failed",
                    f"plugin {impl.plugin_name!r} failed while declaring {what}: "
                    f"{type(exc).__name__}: {exc}",
                    plugin=impl.plugin_name,
                    hook=hook,
                )
                if self.strict:
                    raise HermesPluginError(f"plugin {impl.plugin_name!r} raised in {hook}: {exc}") from exc
                continue
            if result is not None:
                out.append((impl.plugin_name, result))
        return out

    # --- facade: prompt -----------------------------------------------------------------

    def prompt_block(self, hook: str, ctx: PromptContext) -> tuple[tuple[PromptBlock, ...], str | None]:
        """Call one ``hermes_prompt_*`` hook; returns its blocks and the answering plugin."""
        answers = self._guarded(hook, {"ctx": ctx}, firstresult=True, what=f"the {hook[14:]} block")
        if not answers:
            return (), None
        plugin, result = answers[0]
        blocks = (result,) if isinstance(result, PromptBlock) else tuple(result)
        return tuple(
            b if b.plugin else attrs.evolve(b, plugin=plugin) for b in blocks if isinstance(b, PromptBlock)
        ), plugin

    def context_file_loaders(self, ctx: PromptContext) -> list[ContextFileLoader]:
        """Every declared loader by ascending rank; a name already taken is dropped."""
        seen: dict[str, ContextFileLoader] = {}
        for _plugin, result in self._collect_each(
            "hermes_context_file_loaders", {"ctx": ctx}, "context-file loaders"
        ):
            items = (result,) if isinstance(result, ContextFileLoader) else tuple(result)
            for loader in items:
                seen.setdefault(loader.name, loader)
        return sorted(seen.values(), key=lambda loader: (loader.rank, loader.name))

    def scan_content(self, text: str, *, source: str, scope: str) -> tuple[str, ...]:
        """Every scanner's findings for ``text`` (sorted, no duplicates); ``()`` when clean."""
        found: set[str] = set()
        kwargs = {"text": text.removeprefix("\ufeff"), "source": source, "scope": scope}
        for _plugin, result in self._collect_each("hermes_context_scan", kwargs, "a content scan"):
            found.update(str(r) for r in ((result,) if isinstance(result, str) else result))
        return tuple(sorted(found))

    def skill_sources(self, ctx: PromptContext) -> list[SkillSource]:
        """Every declared skill directory, by precedence then path."""
        out: list[SkillSource] = []
        for _plugin, result in self._collect_each("hermes_skills_sources", {"ctx": ctx}, "skill sources"):
            out.extend((result,) if isinstance(result, SkillSource) else tuple(result))
        return sorted(out, key=lambda s: (s.precedence, str(s.path)))

    # --- facade: engines ----------------------------------------------------------------

    def context_engines(self) -> dict[str, EngineSpec]:
        """Engine name -> spec, from every plugin. A name registered twice is an error."""
        if self._engines is not None:
            return self._engines
        engines: dict[str, EngineSpec] = {}
        for plugin, mapping in self._collect_each("hermes_context_engines", {}, "context engines"):
            record = self.records.get(plugin)
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
        self._engines = engines
        return engines

    def create_engine(self, name: str, config: Config) -> ContextEngine:
        """Instantiate the engine registered as ``name`` for one session."""
        engines = self.context_engines()
        if name not in engines:
            raise UnknownEngineError(name, list(engines), path=config.path)
        engine = engines[name].engine_class(config=config, host=self)
        log.debug("engine_selected", engine=name)
        return engine  # type: ignore[no-any-return]

    def engine_step(self, step: str, engine: ContextEngine, **kwargs: Any) -> Any:
        """Run one lifecycle step through its hook; an error is reported, never fatal.

        On failure ``compress`` answers the messages unchanged and ``should_compress``
        answers ``(False, "error")``; strict mode re-raises.
        """
        hook = f"hermes_engine_{step}"
        try:
            answers = self._run(hook, {"engine": engine, **kwargs}, firstresult=True)
        except _PluginCallError as exc:
            self._collect_each(
                "hermes_engine_on_error", {"engine": engine, "step": step, "error": exc.error},
                "engine error observers",
            )
            record_warning(
                "engine_step_failed",
                f"engine {engine.name!r} step {step} failed in plugin {exc.plugin!r}: "
                f"{type(exc.error).__name__}: {exc.error}",
                plugin=exc.plugin,
                engine=engine.name,
                step=step,
            )
            if self.strict:
                raise exc.error from exc
            if step == "compress":
                return kwargs.get("messages")
            if step == "should_compress":
                return (False, "error")
            return None
        return answers[0][1] if answers else None

    # --- facade: services ---------------------------------------------------------------

    def session_store(self, home: Any, config: Config) -> Any:
        answers = self._guarded(
            "hermes_session_store", {"home": home, "config": config}, firstresult=True,
            what="the session store",
        )
        return answers[0][1] if answers else None

    def summarizers(self) -> dict[str, Any]:
        """Summariser provider name -> factory; a name registered twice is an error."""
        out: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for plugin, mapping in self._collect_each("hermes_summarizers", {}, "summarisers"):
            for name, factory in dict(mapping).items():
                if name in out:
                    raise HermesPluginError(
                        f"summariser {name!r} is registered by both {owners[name]!r} and {plugin!r}"
                    )
                out[name] = factory
                owners[name] = plugin
        return out

    def tokenizer(self, model: str) -> Tokenizer:
        """The exact tokenizer for ``model`` (a plugin's, else cl100k_base), cached per model."""
        key = model or ""
        if key not in self._tokenizers:
            answers = self._guarded(
                "hermes_tokenizer", {"model": key}, firstresult=True, what="the tokenizer"
            )
            if answers:
                self._tokenizers[key] = answers[0][1]
            else:
                from hermes_core.tokens import exact_tokenizer

                self._tokenizers[key] = exact_tokenizer()
        return self._tokenizers[key]  # type: ignore[no-any-return]

    def environment_runner(self, backend: str) -> Any:
        answers = self._guarded(
            "hermes_environment_runner", {"backend": backend}, firstresult=True,
            what="the environment runner",
        )
        return answers[0][1] if answers else None

    def tools_assemble(self, tools: Sequence[dict[str, Any]], ctx: Any) -> list[dict[str, Any]]:
        answers = self._guarded(
            "hermes_tools_assemble", {"tools": tools, "ctx": ctx}, firstresult=True,
            what="the tool definitions",
        )
        return list(answers[0][1]) if answers else list(tools)

    def tool_result_process(self, content: Any, ctx: Any) -> Any:
        answers = self._guarded(
            "hermes_tool_result_process", {"content": content, "ctx": ctx}, firstresult=True,
            what="the tool result",
        )
        return answers[0][1] if answers else content

    def tool_call(self, name: str, arguments: Mapping[str, Any], ctx: Any) -> Any:
        """The answer of the plugin that provides tool ``name``, or ``None``."""
        answers = self._guarded(
            "hermes_tool_call", {"name": name, "arguments": arguments, "ctx": ctx},
            firstresult=True, what=f"the answer to {name}",
        )
        return answers[0][1] if answers else None

    def provides_tools(self, names: Sequence[str]) -> bool:
        """Whether the plugins answering ``hermes_tool_call`` declare every tool of ``names``
        (a plugin lists its tools in a module-level ``HERMES_TOOLS`` tuple)."""
        declared: set[str] = set()
        for impl in self.pm.hook.hermes_tool_call.get_hookimpls():
            declared.update(getattr(impl.plugin, "HERMES_TOOLS", ()) or ())
        return all(name in declared for name in names)

    def tool_results_turn_budget(self, results: list[dict[str, Any]], ctx: Any) -> list[dict[str, Any]]:
        answers = self._guarded(
            "hermes_tool_results_turn_budget", {"results": results, "ctx": ctx}, firstresult=True,
            what="the turn budget",
        )
        return answers[0][1] if answers else results

    def tool_result_writer(self, environment: Any) -> Any:
        answers = self._guarded(
            "hermes_tool_result_writer", {"environment": environment}, firstresult=True,
            what="the tool-result writer",
        )
        return answers[0][1] if answers else None

    def payload_cache_layout(self, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        answers = self._guarded(
            "hermes_payload_cache_layout", {"payload": payload, "ctx": ctx}, firstresult=True,
            what="the cache layout",
        )
        return answers[0][1] if answers else payload

    def cli_commands(self, cli: Any) -> None:
        self._collect_each("hermes_cli_register_commands", {"cli": cli}, "CLI commands")


def _ep_key(ep: importlib.metadata.EntryPoint) -> tuple[int, str, str]:
    # Discovery order is filesystem order; sort so records and failures are reproducible.
    # Ordering of behaviour never depends on this (ranks, positions and trylast do).
    dist = ep.dist.name if ep.dist is not None else ""
    return (0 if dist == CORE_DISTRIBUTION else 1, dist, ep.name)
