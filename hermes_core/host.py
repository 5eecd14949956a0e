"""The PluginHost: owns one pluggy PluginManager, loads plugins resiliently, and is the typed
facade every hook call site goes through.

No module-global manager (``PluginHost.create()``); plugins come from the ``hermes.plugins``
entry points, built-ins as any third party. A plugin that fails is recorded as ``failed`` (an
error in strict mode); each implementation is wrapped (``hookguard``) so a bad one loses only
its own part, and tracing sees every call.
"""

from __future__ import annotations

import concurrent.futures
import difflib
import importlib
import importlib.metadata
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import pluggy

from hermes_core.config import ConfigSection
from hermes_core.daemon_pool import DaemonPool
from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError
from hermes_core.hookguard import CURRENT, CallLog, HookCall, guard, summarize
from hermes_core.hookspecs import PROJECT, SPEC_CLASSES
from hermes_core.host_engines import (
    DISPATCH_PLUGIN,
    EngineDispatch,
    context_engines,
    create_engine,
    engine_step,
)
from hermes_core.logging import get_logger
from hermes_core.prompt_dispatch import run_prompt_hooks
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
from hermes_core.transcript_format import TranscriptFormat

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.engine import ContextEngine
    from hermes_core.tokens import Tokenizer

log = get_logger("hermes_core.host")

_T = TypeVar("_T")

ENTRY_POINT_GROUP = "hermes.plugins"
CORE_DISTRIBUTION = "hermes-core"
#: Built-ins that must be *declared* by the installed metadata; missing means the package is not
#: installed (only imported from a checkout). They can still be blocked: DESIGN.md promises that
#: every built-in can be blocked and replaced.
ESSENTIAL_PLUGINS = frozenset({"identity", "compressor"})

#: Workers shared by the budgeted prompt-hook calls of one host.
PROMPT_WORKERS = 2



class _Manager(pluggy.PluginManager):
    """pluggy's manager with two hermes rules applied as implementations are registered."""

    def __init__(self, host: PluginHost | None = None) -> None:
        super().__init__(PROJECT)
        self.host = host
        self.registering: str = "?"

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            return None
        hook = opts.get("specname") or name
        if hook.startswith(PROJECT + "_") and self.host is not None:
            caller = getattr(self.hook, hook, None)
            if caller is None or caller.spec is None:
                # Only this implementation is dropped; the plugin's other hooks still load.
                self.host._unknown_hook(self.registering, hook)
                return None
        return opts

    def _verify_hook(self, hook: Any, hookimpl: Any) -> None:
        # The one place every implementation passes before pluggy uses it (historic replay
        # included), so the isolating wrapper is installed here.
        super()._verify_hook(hook, hookimpl)
        if self.host is not None and not getattr(hookimpl.function, "_hermes_guarded", False):
            firstresult = bool(hook.spec.opts.get("firstresult")) if hook.spec else False
            guarded = guard(self.host, hookimpl, hook.name, firstresult=firstresult)
            guarded._hermes_guarded = True  # type: ignore[attr-defined]
            hookimpl.function = guarded


_MISSING: Any = object()


def host_state(host: PluginHost | None, factory: Callable[[], _T], *, key: Any = None) -> _T:
    """``host.state(factory)``, or a fresh ``factory()`` when there is no host (a context built
    by hand, e.g. in a test): without an owner nothing is remembered between calls."""
    if host is None:
        return factory()
    return host.state(factory, key=key)


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return (env.get(name) or "").strip().lower() in {"1", "true", "yes", "on"}


_SHARED: dict[tuple[Any, ...], PluginHost] = {}
_SHARED_LOCK = threading.Lock()


def _shared_key(config: Config | None, env: Mapping[str, str]) -> tuple[Any, ...]:
    blocked = set(config.plugins.disabled) if config is not None else set()
    blocked.update(p.strip() for p in (env.get("HERMES_DISABLE_PLUGINS") or "").split(",") if p.strip())
    only = env.get("HERMES_LOAD_PLUGINS")
    return (
        tuple(sorted(blocked)),
        None if only is None else tuple(sorted(p.strip() for p in only.split(",") if p.strip())),
        _env_flag(env, "HERMES_STRICT_PLUGINS"),
        _env_flag(env, "HERMES_TRACE_HOOKS"),
        tuple(sys.path),
    )


def refresh_plugins() -> None:
    """Forget the shared plugin hosts (``PluginHost.shared``): the next ``Session.open`` reads
    the entry points again. Call it after installing or removing a plugin distribution while
    the process runs; sessions already open keep the host they have."""
    with _SHARED_LOCK:
        _SHARED.clear()
    importlib.invalidate_caches()


@attrs.define(kw_only=True, eq=False)
class PluginHost:
    """One plugin manager and the records of what it loaded. Build with ``create``."""

    pm: pluggy.PluginManager
    strict: bool = False
    trace: bool = False
    records: dict[str, PluginRecord] = attrs.field(factory=dict)
    _engines: dict[str, EngineSpec] | None = None
    _sections: list[ConfigSection[Any]] | None = None
    _tokenizers: dict[str, Any] = attrs.field(factory=dict)
    #: called with a ``HookCall`` after every implementation call (see ``observe``)
    observers: list[Callable[[HookCall], None]] = attrs.field(factory=list)
    _pool: concurrent.futures.Executor | None = None
    _running: list[CallLog] = attrs.field(factory=list)
    #: implementations dropped at registration (unknown hook names), by plugin
    _dropped: dict[str, list[str]] = attrs.field(factory=dict)
    #: plugins' mutable state (caches, memos, their locks), by key (see ``state``)
    _state: dict[Any, Any] = attrs.field(factory=dict)
    _state_lock: threading.Lock = attrs.field(factory=threading.Lock)
    _pool_lock: threading.Lock = attrs.field(factory=threading.Lock)

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
        pm = _Manager()
        for spec_class in SPEC_CLASSES:
            pm.add_hookspecs(spec_class)
        host = cls(
            pm=pm,
            strict=_env_flag(env, "HERMES_STRICT_PLUGINS") if strict is None else strict,
            trace=_env_flag(env, "HERMES_TRACE_HOOKS") if trace is None else trace,
        )
        pm.host = host
        if host.trace:
            host._install_tracing()
        pm.registering = DISPATCH_PLUGIN
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

    @classmethod
    def shared(cls, *, config: Config | None = None, env: Mapping[str, str] | None = None) -> PluginHost:
        """The process's host for this plugin configuration, built once and reused.

        ``Session.open`` without a ``host`` uses it, so entry points are read and plugins
        imported once per process, not per session. One host per distinct configuration:
        blocked plugins (``plugins.disabled``, ``HERMES_DISABLE_PLUGINS``), the
        ``HERMES_LOAD_PLUGINS`` allow-list, the strict and trace switches, and ``sys.path``
        (a new site directory means new distributions). A plugin installed while the process
        runs is seen after ``refresh_plugins()``. Sessions share the host read-only: a host
        that registers plugins of its own for one session builds it with ``create``.
        """
        env = os.environ if env is None else env
        key = _shared_key(config, env)
        host = _SHARED.get(key)
        if host is not None:
            return host
        with _SHARED_LOCK:
            host = _SHARED.get(key)
            if host is None:
                host = cls.create(config=config, env=env)
                _SHARED[key] = host
                log.debug("plugin_host_shared", hosts=len(_SHARED))
        return host

    def _load_entry_points(self, blocked: set[str], only: set[str] | None) -> None:
        seen: dict[str, str] = {}
        declared: set[str] = set()
        # Each ``dist.name`` / ``dist.version`` parses the distribution's whole METADATA file
        # (README included): read them once per distribution, not twice or thrice per entry
        # point: 23 -> 9 ms of CPU per host with 23 built-ins in one distribution.
        entry_points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        about: dict[int, tuple[str, str]] = {}
        for ep in entry_points:
            if id(ep.dist) not in about:
                about[id(ep.dist)] = _dist_name_version(ep.dist)
        for ep in sorted(entry_points, key=lambda ep: _ep_key(ep, about[id(ep.dist)][0])):
            # A distribution with broken metadata has no name or version: still load it.
            dist, version = about[id(ep.dist)]
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
            # SystemExit/KeyboardInterrupt raised by a module body are that plugin's failure too:
            # the CLI must keep running.
            except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001
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
        self._sections = None

    def unregister(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin, name=name)
        self.records.pop(name, None)
        self._engines = None
        self._sections = None

    def _register_record(self, obj: object, name: str, dist: str, version: str, module: str) -> None:
        self._dropped.pop(name, None)
        try:
            if isinstance(self.pm, _Manager):
                self.pm.registering = name
            self.pm.register(obj, name=name)
        except Exception as exc:  # noqa: BLE001
            if self.pm.is_registered(obj):
                self.pm.unregister(obj)
            self._fail(name, dist, version, module, f"{type(exc).__name__}: {exc}", exc)
            return
        hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(obj) or ()))
        dropped = self._dropped.get(name)
        self.records[name] = PluginRecord(
            name=name, distribution=dist, version=version, module=module, status="active",
            hooks=hooks,
            error=("unknown hooks dropped: " + ", ".join(dropped)) if dropped else None,
        )
        log.debug("plugin_loaded", plugin=name, dist=dist, version=version)

    def _unknown_hook(self, plugin: str, hook: str) -> None:
        """A ``hermes_*`` implementation matching no spec: warn with the closest real name."""
        names = [attr for spec in SPEC_CLASSES for attr in vars(spec) if attr.startswith(PROJECT + "_")]
        close = difflib.get_close_matches(hook, names, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        message = f"plugin {plugin!r} implements unknown hook {hook!r}{hint} (that implementation was dropped)"
        self._dropped.setdefault(plugin, []).append(hook + (f" (did you mean {close[0]}?)" if close else ""))
        if self.strict:
            raise HermesPluginError(message)
        record_warning(
            "plugin_hook_unknown", message, plugin=plugin, hook=hook,
            suggestion=close[0] if close else None,
        )

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
        # pluggy's own monitoring sees each whole hook call; the guard's observer each
        # implementation with its plugin, arguments, result and time.
        def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            log.debug(
                "hook_called", hook=hook_name, impls=[i.plugin_name for i in reversed(impls)],
                args={k: summarize(v) for k, v in kwargs.items()},
            )

        def after(outcome: Any, hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
            failed = outcome.exception is not None
            log.debug(
                "hook_returned", hook=hook_name, failed=failed,
                result=None if failed else summarize(outcome.get_result()),
            )

        def each(call: HookCall) -> None:
            log.debug(
                "hook_impl_returned", hook=call.hook, plugin=call.plugin, wrapper=call.wrapper,
                args=dict(call.args), result=call.result, ms=round(call.seconds * 1000, 3),
                error=call.error,
            )

        self.pm.add_hookcall_monitoring(before, after)
        self.observe(each)

    # --- plugin state -------------------------------------------------------------------

    def state(self, factory: Callable[[], _T], *, key: Any = None) -> _T:
        """This host's instance of a plugin's mutable state, built by ``factory()`` on first use.

        A plugin module is shared by every host of the process, so whatever it caches or
        remembers lives here instead of in module globals: a fresh host starts clean (tests
        need no reset helpers) and two hosts never see each other's entries. The key is
        ``factory`` itself unless ``key`` is given; use a class of your own module as the
        factory, so keys of two plugins never collide. Building is thread-safe (``factory``
        runs once per host and key); the object's own methods must be too when hooks of
        several sessions use it at once. Look it up once per hook call, never per message.
        """
        slot = factory if key is None else key
        found = self._state.get(slot, _MISSING)
        if found is _MISSING:
            with self._state_lock:
                found = self._state.get(slot, _MISSING)
                if found is _MISSING:
                    found = self._state[slot] = factory()
        return found  # type: ignore[no-any-return]

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

    # --- calling through pluggy -----------------------------------------------------------

    def observe(self, observer: Callable[[HookCall], None]) -> Callable[[], None]:
        """Call ``observer`` with a ``HookCall`` after every implementation call; returns undo."""
        self.observers.append(observer)

        def undo() -> None:
            if observer in self.observers:
                self.observers.remove(observer)

        return undo

    def _call(self, hook: str, kwargs: Mapping[str, Any], *, quiet: bool = False) -> tuple[Any, CallLog]:
        """Call ``hook`` through pluggy; the log says which plugin produced what."""
        record = CallLog(quiet=quiet)
        token = CURRENT.set(record)
        try:
            result = getattr(self.pm.hook, hook)(**kwargs)
        finally:
            CURRENT.reset(token)
        return result, record

    def _first(self, hook: str, kwargs: Mapping[str, Any]) -> tuple[Any, str | None]:
        result, record = self._call(hook, kwargs)
        return result, (record.owner(result) if result is not None else None)

    def _collect(self, hook: str, kwargs: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """Collect hook results with the plugin that produced each (``?`` if a wrapper made it)."""
        results, record = self._call(hook, kwargs)
        return [(record.owner(value) or "?", value) for value in results or () if value is not None]

    # --- facade: prompt -----------------------------------------------------------------

    def prompt_block(self, hook: str, ctx: PromptContext) -> tuple[tuple[PromptBlock, ...], str | None]:
        """Call one ``hermes_prompt_*`` hook; returns its blocks and the answering plugin.

        The call runs within ``plugins.prompt_hook_budget`` seconds (on a small worker pool the
        host owns); past it the block is left out with a warning naming the plugin still running.
        """
        for _hook, blocks, plugin in self.prompt_blocks((hook,), ctx):
            return blocks, plugin
        return (), None

    def prompt_blocks(
        self, hooks: Sequence[str], ctx: PromptContext, *,
        after: Callable[[str, tuple[PromptBlock, ...], PromptContext], PromptContext] | None = None,
    ) -> list[tuple[str, tuple[PromptBlock, ...], str | None]]:
        """Call ``hooks`` in order as one job on the worker pool (one thread hand-off in all).

        Each hook keeps its own ``plugins.prompt_hook_budget``; one that runs past it is left
        out with a warning naming the plugin, and the hooks after it still run. ``after`` (run
        on the worker after each hook) returns the context the next hook sees. Returns
        ``(hook, blocks, plugin)`` for every hook that finished in time, in order.
        """
        return run_prompt_hooks(self, hooks, ctx, after=after)

    def _workers(self) -> concurrent.futures.Executor:
        # Shared and bounded: a hook that never returns holds one worker, never one per call;
        # daemon threads, so it never holds up the interpreter's exit either.
        if self._pool is None:
            with self._pool_lock:
                if self._pool is None:
                    self._pool = DaemonPool(PROMPT_WORKERS, thread_name_prefix="hermes-prompt-hook")
        return self._pool

    def join_idle_workers(self) -> None:
        """Wait for the prompt-hook workers that finished their jobs to return (``Session.close``)."""
        pool = self._pool
        if isinstance(pool, DaemonPool):
            pool.join_idle()

    def context_file_loaders(self, ctx: PromptContext) -> list[ContextFileLoader]:
        """Every declared loader by ascending rank; a name already taken is dropped."""
        seen: dict[str, ContextFileLoader] = {}
        for _plugin, result in self._collect("hermes_context_file_loaders", {"ctx": ctx}):
            items = (result,) if isinstance(result, ContextFileLoader) else tuple(result)
            for loader in items:
                seen.setdefault(loader.name, loader)
        return sorted(seen.values(), key=lambda loader: (loader.rank, loader.name))

    def scan_content(self, text: str, *, source: str, scope: str) -> tuple[str, ...]:
        """Every scanner's findings for ``text`` (sorted, no duplicates); ``()`` when clean."""
        found: set[str] = set()
        kwargs = {"text": text.removeprefix("\ufeff"), "source": source, "scope": scope}
        for _plugin, result in self._collect("hermes_context_scan", kwargs):
            found.update(str(r) for r in ((result,) if isinstance(result, str) else result))
        return tuple(sorted(found))

    def skill_sources(self, ctx: PromptContext) -> list[SkillSource]:
        """Every declared skill directory, by precedence then path."""
        out: list[SkillSource] = []
        for _plugin, result in self._collect("hermes_skills_sources", {"ctx": ctx}):
            out.extend((result,) if isinstance(result, SkillSource) else tuple(result))
        return sorted(out, key=lambda s: (s.precedence, str(s.path)))

    # --- facade: configuration ----------------------------------------------------------

    def config_sections(self) -> list[ConfigSection[Any]]:
        """Every plugin's declared config section (a name already taken is refused)."""
        if self._sections is not None:
            return self._sections
        from hermes_core.config import claim_problem, core_claims

        claimed = core_claims()
        out: list[ConfigSection[Any]] = []
        for plugin, result in self._collect("hermes_config_sections", {}):
            for section in (result,) if isinstance(result, ConfigSection) else tuple(result):
                reason = claim_problem(section, claimed)
                if reason is not None:
                    record_warning(
                        "config_section_refused",
                        f"plugin {plugin!r} declares config section {section.name!r}: {reason}; "
                        "the section was ignored",
                        plugin=plugin, section=section.name,
                    )
                    continue
                claimed.update(dict.fromkeys(section.keys(), plugin))
                out.append(attrs.evolve(section, plugin=plugin))
        self._sections = out
        return out

    def bind_config(self, config: Config, *, env: Mapping[str, str] | None = None) -> Config:
        """``config`` with every loaded plugin's declared keys read (see ``bind_sections``)."""
        from hermes_core.config import bind_sections

        return bind_sections(config, self.config_sections(), env=env, disabled=self.disabled_config_sections)

    def disabled_config_sections(self) -> list[ConfigSection[Any]]:
        """What the blocked plugins would declare, so that their keys are not "unknown".

        Asked only when a key is unknown. The plugin's module is imported but never registered;
        one that fails to import or declare is skipped (its keys stay unknown).
        """
        out: list[ConfigSection[Any]] = []
        for record in self.records.values():
            if record.status != "blocked":
                continue
            module, _, attr = record.module.partition(":")
            try:
                obj: Any = importlib.import_module(module)
                for part in filter(None, attr.split(".")):
                    obj = getattr(obj, part)
                declare = getattr(obj, "hermes_config_sections", None)
                result = declare() if callable(declare) else None
                found = (result,) if isinstance(result, ConfigSection) else tuple(result or ())
            except Exception as exc:  # noqa: BLE001 - a disabled plugin may be broken; that is why
                log.debug("disabled_plugin_sections_unread", plugin=record.name, error=str(exc))
                continue
            out.extend(attrs.evolve(s, plugin=record.name) for s in found if isinstance(s, ConfigSection))
        return out

    # --- facade: engines (hermes_core.host_engines) -------------------------------------

    def context_engines(self) -> dict[str, EngineSpec]:
        """Engine name -> spec, from every plugin. A name registered twice is an error."""
        if self._engines is None:
            self._engines = context_engines(self)
        return self._engines

    def create_engine(self, name: str, config: Config) -> ContextEngine:
        """Instantiate the engine registered as ``name`` for one session (see ``host_engines``)."""
        return create_engine(self, name, config)

    def engine_step(self, step: str, engine: ContextEngine, **kwargs: Any) -> Any:
        """Run one lifecycle step through its hook; an error is reported, never fatal (see
        ``host_engines.engine_step``)."""
        return engine_step(self, step, engine, **kwargs)

    # --- facade: services ---------------------------------------------------------------

    def session_store(self, home: Any, config: Config) -> Any:
        return self._first("hermes_session_store", {"home": home, "config": config})[0]

    def session_compacted(self, session: Any, before: list[Any], after: list[Any], phase: str) -> list[Any]:
        """The kept history after a compaction, as the ``hermes_session_compacted`` plugins mark it."""
        kwargs = {"session": session, "before": before, "after": after, "phase": phase}
        answer = self._first("hermes_session_compacted", kwargs)[0]
        return after if answer is None else answer if isinstance(answer, list) else list(answer)

    def summarizers(self) -> dict[str, Any]:
        """Summariser provider name -> factory; a name registered twice is an error."""
        out: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for plugin, mapping in self._collect("hermes_summarizers", {}):
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
            answer = self._first("hermes_tokenizer", {"model": key})[0]
            if answer is None:
                from hermes_core.tokens import exact_tokenizer

                answer = exact_tokenizer()
            self._tokenizers[key] = answer
        return self._tokenizers[key]  # type: ignore[no-any-return]

    def environment_runner(self, backend: str) -> Any:
        return self._first("hermes_environment_runner", {"backend": backend})[0]

    def tools_assemble(self, tools: Sequence[dict[str, Any]], ctx: Any) -> list[dict[str, Any]]:
        answer = self._first("hermes_tools_assemble", {"tools": tools, "ctx": ctx})[0]
        return list(answer) if answer is not None else list(tools)

    def tool_result_process(self, content: Any, ctx: Any) -> Any:
        answer = self._first("hermes_tool_result_process", {"content": content, "ctx": ctx})[0]
        return content if answer is None else answer

    def tool_call(self, name: str, arguments: Mapping[str, Any], ctx: Any) -> Any:
        """The answer of the plugin that provides tool ``name``, or ``None``."""
        return self._first("hermes_tool_call", {"name": name, "arguments": arguments, "ctx": ctx})[0]

    def provides_tools(self, names: Sequence[str]) -> bool:
        """Whether the plugins answering ``hermes_tool_call`` declare every tool of ``names``
        (a plugin lists its tools in a module-level ``HERMES_TOOLS`` tuple)."""
        declared: set[str] = set()
        for impl in self.pm.hook.hermes_tool_call.get_hookimpls():
            declared.update(getattr(impl.plugin, "HERMES_TOOLS", ()) or ())
        return all(name in declared for name in names)

    def tool_results_turn_budget(self, results: list[dict[str, Any]], ctx: Any) -> list[dict[str, Any]]:
        answer = self._first("hermes_tool_results_turn_budget", {"results": results, "ctx": ctx})[0]
        return results if answer is None else answer

    def tool_result_writer(self, environment: Any) -> Any:
        return self._first("hermes_tool_result_writer", {"environment": environment})[0]

    def payload_cache_layout(self, payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
        answer = self._first("hermes_payload_cache_layout", {"payload": payload, "ctx": ctx})[0]
        return payload if answer is None else answer

    def report_html(self, request: Any) -> str | None:
        """The HTML page of a command's report (``hermes_report_html``), or ``None``."""
        answer = self._first("hermes_report_html", {"request": request})[0]
        return None if answer is None else str(answer)

    def transcript_formats(self) -> dict[str, Any]:
        """Transcript format name -> ``TranscriptFormat``; a name declared twice is an error."""
        out: dict[str, Any] = {}
        for plugin, result in self._collect("hermes_transcript_formats", {}):
            # the guard checked each plugin's own answer; a wrapper's additions it did not
            for fmt in result if isinstance(result, (list, tuple)) else (result,):
                if not isinstance(fmt, TranscriptFormat):
                    record_warning("plugin_result_invalid", f"hermes_transcript_formats answered "
                                   f"{summarize(fmt)} (by {plugin}), not a TranscriptFormat; left out",
                                   plugin=plugin, hook="hermes_transcript_formats")
                    continue
                if fmt.name in out:
                    raise HermesPluginError(
                        f"transcript format {fmt.name!r} is declared by both "
                        f"{out[fmt.name].plugin!r} and {plugin!r}; please report it to their authors"
                    )
                out[fmt.name] = attrs.evolve(fmt, plugin=fmt.plugin or plugin)
        return out

    def cli_commands(self, cli: Any) -> dict[str, str]:
        """Let plugins add subcommands to ``cli``; returns command name -> providing plugin."""
        provided: dict[str, str] = {}
        add = cli.add_command

        def add_command(cmd: Any, name: str | None = None) -> None:
            call = CURRENT.get()
            provided[name or cmd.name] = (call.current if call is not None else None) or "?"
            add(cmd, name)

        cli.add_command = add_command
        try:
            self._call("hermes_cli_register_commands", {"cli": cli})
        finally:
            del cli.add_command
        return provided


def _dist_name_version(dist: importlib.metadata.Distribution | None) -> tuple[str, str]:
    """A distribution's name and version, ``unknown`` / ``?`` where its metadata lacks them;
    the metadata file is parsed once."""
    if dist is None:
        return "unknown", "?"
    meta = dist.metadata
    if meta is None:  # Python 3.13+: a distribution without a metadata file
        return "unknown", "?"
    return meta["Name"] or "unknown", meta["Version"] or "?"


def _ep_key(ep: importlib.metadata.EntryPoint, dist: str) -> tuple[int, str, str]:
    # Discovery order is filesystem order; sort so records and failures are reproducible.
    # Ordering of behaviour never depends on this (ranks, positions and trylast do).
    return (0 if dist == CORE_DISTRIBUTION else 1, dist, ep.name)
