"""The configuration model: ``$HERMES_HOME/config.yaml`` read into frozen attrs sections.

The core declares only the keys it reads; every other key belongs to the plugin that reads it,
declared through ``hermes_config_sections`` as a ``ConfigSection`` (one owner per key). A bad
value is a ``ConfigError`` naming key, value and file (lenient fields: default plus a warning);
``Config.sources`` says where each value came from. Docs: docs/plugin-guide.md.
"""

from __future__ import annotations

import difflib
import os
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import attrs
import yaml

from hermes_core.config_fields import (
    _any,
    _model_thresholds,
    boolean,
    field,
    free_mapping,
    integer,
    number,
    section,
    string,
    string_list,
)
from hermes_core.diagnostics import record_warning
from hermes_core.errors import ConfigError
from hermes_core.files import DEFAULT_MAX_BYTES, FileRefused, dangling_target, read_bytes_bounded
from hermes_core.logging import get_logger
from hermes_core.safeyaml import YAMLLimitError, load_yaml

log = get_logger(__name__)

T = TypeVar("T")

#: The owner shown for the core's own keys.
CORE_OWNER = "hermes-core"


@attrs.frozen(kw_only=True)
class ConfigSection(Generic[T]):
    """Config keys a plugin owns (see ``hermes_config_sections``).

    ``name`` is where the keys of ``model`` live: a top-level name of the plugin's own
    (``skills`` -> ``skills.<field>``, also reached as ``config.skills``), the name of a core
    section the plugin adds keys to (``agent`` -> ``agent.<field>``), or ``""`` for top-level
    keys (``timezone``, also reached as ``config.timezone``). ``env`` maps environment
    variables to the dotted keys they override. Read the values with ``config.section(self)``.
    """

    name: str
    model: type[T]
    doc: str = ""
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: the declaring plugin (filled in by the host)
    plugin: str = ""

    @property
    def prefix(self) -> str:
        return f"{self.name}." if self.name else ""

    @property
    def extends_core(self) -> bool:
        """Whether the keys go into a core section (or the top level) rather than one of its own."""
        return self.name == "" or self.name in _core_names()

    def keys(self) -> tuple[str, ...]:
        """The dotted keys this declaration claims (a section of its own claims its name)."""
        if not self.extends_core:
            return (self.name,)
        return tuple(self.prefix + name for name in _field_names(self.model))

    def owns(self, dotted: str) -> bool:
        """Whether ``dotted`` is one of this declaration's keys or lies below one."""
        return any(dotted == key or dotted.startswith(key + ".") for key in self.keys())


# --- the core's model ---


@attrs.frozen(kw_only=True)
class ContextSection:
    engine: str = field("compressor", string(), doc="the context engine, by name")


@attrs.frozen(kw_only=True)
class SummarySection:
    provider: str = field("extractive", string(), doc="extractive (offline), openai or anthropic")
    model: str | None = field(None, string(optional=True))
    base_url: str | None = field(None, string(optional=True))
    api_key_env: str | None = field(None, string(optional=True))
    timeout: float = field(120.0, number(0.0, low_open=True))


@attrs.frozen(kw_only=True)
class CompressionSection:
    enabled: bool = field(True, boolean)
    threshold: float = field(0.50, number(0.0, 1.0, low_open=True), doc="ratio of the window")
    threshold_tokens: int | None = field(None, integer(1, optional=True), doc="absolute cap")
    target_ratio: float = field(0.20, number(0.0, 1.0, low_open=True), doc="tail budget ratio")
    protect_first_n: int = field(3, integer(0))
    protect_last_n: int = field(20, integer(0))
    max_attempts: int = field(3, integer(1, 10))
    abort_on_summary_failure: bool = field(False, boolean)
    model_thresholds: Mapping[str, float] = field({}, _model_thresholds)
    ineffective_recovery_margin: float = field(
        0.25, number(0.0, 10.0), doc="growth (x threshold) after which an ineffective block lifts"
    )
    thrash_window_turns: int = field(20, integer(1))
    # Every engine picks its summariser by compression.summary.provider (the hermes_summarizers
    # contract), so the keys belong to the core, like compression.threshold.
    summary: SummarySection = section(SummarySection)


@attrs.frozen(kw_only=True)
class AgentSection:
    system_prompt: str | None = field(None, string(optional=True), doc="ephemeral prompt")
    pass_session_id: bool = field(False, boolean)


@attrs.frozen(kw_only=True)
class PluginsSection:
    disabled: tuple[str, ...] = field((), string_list)
    prompt_hook_budget: float | None = field(
        5.0, number(0.0, optional=True),
        doc="seconds one prompt hook may take before its block is left out; null or 0 = no limit",
    )


@attrs.frozen(kw_only=True)
class TerminalSection:
    # The Session's default cwd (Session.open without cwd); the environment plugin adds backend.
    cwd: str | None = field(None, string(optional=True))


@attrs.frozen(kw_only=True)
class SessionStoreSection:
    # The Session's own keys, whatever the store; the store plugins add backend, url ...
    lease_ttl_seconds: float = field(
        30.0, number(0.0, low_open=True), doc="a compaction lease expires this long after its last renewal"
    )
    lease_wait_seconds: float = field(
        10.0, number(0.0), doc="wait this long for another worker's compaction, then serve uncompacted"
    )
    turn_budget_seconds: float = field(
        3.0, number(0.0, low_open=True),
        doc="every call of one turn to a remote store (Redis) together; past it the turn compacts locally",
    )


def _allow_map(value: Any) -> Mapping[str, tuple[str, ...]]:
    pairs = free_mapping(value)
    return {str(key): string_list(entries) for key, entries in pairs.items()}


@attrs.frozen(kw_only=True)
class ThreatScanSection:
    allow: Mapping[str, tuple[str, ...]] = field(
        attrs.Factory(dict), _allow_map,
        doc="per project (a directory, a glob, or \"*\"): finding ids to accept, or texts of lines to keep",
    )


@attrs.frozen(kw_only=True)
class FilesSection:
    max_read_bytes: int = field(
        2_000_000, integer(1), doc="most bytes read from any one file (memory, skills, SOUL.md, ...)"
    )


def _internal(default: Any = None, *, factory: Any = None, eq: bool = False) -> Any:
    if factory is not None:
        return attrs.field(factory=factory, eq=eq, repr=False, metadata={"internal": True})
    return attrs.field(default=default, eq=eq, repr=False, metadata={"internal": True})


@attrs.frozen(kw_only=True)
class Config:
    """The effective configuration. Core keys are attributes (``config.compression.threshold``);
    a plugin's keys come from ``config.section(DECLARATION)``."""

    context: ContextSection = section(ContextSection)
    compression: CompressionSection = section(CompressionSection)
    agent: AgentSection = section(AgentSection)
    plugins: PluginsSection = section(PluginsSection)
    terminal: TerminalSection = section(TerminalSection)
    session_store: SessionStoreSection = section(SessionStoreSection)
    files: FilesSection = section(FilesSection)
    threat_scan: ThreatScanSection = section(ThreatScanSection)
    # Where each effective value came from, and the file's own mapping (for plugin sections).
    sources: Mapping[str, str] = _internal(factory=dict)
    path: str | None = _internal()
    raw: Mapping[str, Any] = _internal(factory=dict)
    #: the plugins' section values, by model class (``config.section(...)`` reads them)
    bound: Mapping[type, Any] = _internal(factory=dict, eq=True)
    #: the declarations they were read with; ``None`` = not bound to any plugins yet
    declared: tuple[ConfigSection[Any], ...] | None = _internal()
    #: the environment the file was read with (plugins' own variables apply when bound)
    env: Mapping[str, str] | None = _internal()
    #: flag overrides of keys the core does not have, applied when bound
    pending: tuple[tuple[str, Any, str], ...] = _internal(())
    #: (key, prefix) of keys the core did not know, warned about when bound unless a plugin owns them
    unknown: tuple[tuple[str, str], ...] = _internal(())
    _memo: dict[type, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False, metadata={"internal": True})

    def section(self, declared: ConfigSection[T]) -> T:
        """The values of a plugin's declared keys (an instance of ``declared.model``).

        Bound declarations were read with the configuration; an unbound one (the plugin is
        not loaded, or the configuration was never bound) is read from the file's mapping on
        first use and kept with this configuration.
        """
        found = self.bound.get(declared.model)
        if found is None:
            found = self._memo.get(declared.model)
            if found is None:
                found = _read_unbound(self, declared)
                self._memo[declared.model] = found
        return found

    def with_sections(self, *values: Any) -> Config:
        """This configuration with the given section values (instances of declared models)
        in place of what the file says (embedders and tests)."""
        return attrs.evolve(self, bound={**self.bound, **{type(v): v for v in values}})

    def __getattr__(self, name: str) -> Any:
        # Only reached when no core field matches: a plugin's own section or top-level key.
        if name.startswith("_"):
            raise AttributeError(name)
        for declared in object.__getattribute__(self, "declared") or ():
            if declared.name == name and not declared.extends_core:
                return self.section(declared)
            if declared.name == "" and name in _field_names(declared.model):
                return getattr(self.section(declared), name)
        raise AttributeError(f"config has no section {name!r}")

    def declaration_of(self, dotted: str) -> ConfigSection[Any] | None:
        """The bound declaration that owns ``dotted``; ``None`` for the core's own keys."""
        for declared in self.declared or ():
            if declared.owns(dotted):
                return declared
        return None

    def owner(self, dotted: str) -> str:
        """The plugin that declares ``dotted``, or ``hermes-core``."""
        declared = self.declaration_of(dotted)
        return declared.plugin if declared is not None else CORE_OWNER

    def get(self, dotted: str) -> Any:
        """Return the value at a dotted key path (``"compression.threshold"``)."""
        declared = self.declaration_of(dotted)
        node: Any = self if declared is None else self.section(declared)
        rest = dotted if declared is None else dotted[len(declared.prefix):]
        for part in rest.split("."):
            node = node[part] if isinstance(node, Mapping) else getattr(node, part)
        return node

    def items(self) -> list[tuple[str, Any, str]]:
        """Every leaf key path with its value and source: the core's, then each bound
        declaration's, in declaration order."""
        out: list[tuple[str, Any, str]] = []

        def visit(key: str, value: Any) -> None:
            out.append((key, value, self.sources.get(key, "default")))

        _walk_leaves(type(self), self, "", visit)
        for declared in self.declared or ():
            _walk_leaves(declared.model, self.section(declared), declared.prefix, visit)
        return out


# Environment variables that override a core key (the env wins over the file). Plugins
# declare their own with ``ConfigSection.env``.
ENV_KEYS: dict[str, str] = {
    "HERMES_EPHEMERAL_SYSTEM_PROMPT": "agent.system_prompt",
    "HERMES_DISABLE_PLUGINS": "plugins.disabled",
    "TERMINAL_CWD": "terminal.cwd",
    "HERMES_MAX_READ_BYTES": "files.max_read_bytes",
}


def _field_names(model: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(model) if not f.metadata.get("internal"))


def _core_names() -> frozenset[str]:
    return _CORE_NAMES


_CORE_NAMES = frozenset(f.name for f in attrs.fields(Config) if not f.metadata.get("internal"))


def _walk_leaves(cls: type, obj: Any, prefix: str, visit: Callable[[str, Any], None]) -> None:
    for f in attrs.fields(cls):
        if f.metadata.get("internal"):
            continue
        key = f"{prefix}{f.name}"
        value = getattr(obj, f.name)
        if "section" in f.metadata or (f.metadata.get("check") is None and attrs.has(type(value))):
            _walk_leaves(f.metadata.get("section") or type(value), value, key + ".", visit)
        else:
            visit(key, value)


def _names_at(cls: type, prefix: str, into: dict[str, set[str]]) -> None:
    # Every field name the model accepts at each prefix (to tell unknown keys from known ones).
    names = into.setdefault(prefix, set())
    for f in attrs.fields(cls):
        if f.metadata.get("internal"):
            continue
        names.add(f.name)
        nested = f.metadata.get("section") or (f.type if f.metadata.get("check") is None and isinstance(f.type, type) and attrs.has(f.type) else None)
        if nested is not None:
            _names_at(nested, f"{prefix}{f.name}.", into)


def _known_names(sections: Iterable[ConfigSection[Any]]) -> dict[str, set[str]]:
    known: dict[str, set[str]] = {}
    _names_at(Config, "", known)
    for declared in sections:
        if not declared.extends_core:
            known.setdefault("", set()).add(declared.name)
        _names_at(declared.model, declared.prefix, known)
    return known


def known_keys(sections: Iterable[ConfigSection[Any]] = ()) -> list[str]:
    """Every leaf key path of the core model and of ``sections``, for docs and suggestions."""
    keys: list[str] = []
    _walk_leaves(Config, Config(), "", lambda key, value: keys.append(key))
    for declared in sections:
        _walk_leaves(declared.model, declared.model(), declared.prefix, lambda key, value: keys.append(key))
    return keys


def claim_problem(declared: ConfigSection[Any], claimed: Mapping[str, str]) -> str | None:
    """Why ``declared`` cannot be accepted given the keys already ``claimed`` (key -> owner,
    the core's included by the caller through ``core_claims``), or ``None`` when it can."""
    if not attrs.has(declared.model):
        return f"its model {declared.model!r} is not an attrs class"
    if "." in declared.name:
        return "a section name cannot contain a dot (declare keys under a top-level name)"
    for key in declared.keys():
        taken = claimed.get(key)
        if taken is not None:
            return f"the key {key!r} is already owned by {taken!r}"
    strays = sorted(f"{var} -> {key}" for var, key in declared.env.items() if not declared.owns(key))
    if strays:
        return "its environment variables name keys it does not declare: " + ", ".join(strays)
    return None


def core_claims() -> dict[str, str]:
    """The keys the core owns (every leaf and section name), for ``claim_problem``."""
    claimed: dict[str, str] = {}
    known: dict[str, set[str]] = {}
    _names_at(Config, "", known)
    for prefix, names in known.items():
        for name in names:
            claimed[prefix + name] = CORE_OWNER
    return claimed


def resolve_home(home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Path:
    """HERMES_HOME: the explicit argument, else ``$HERMES_HOME``, else ``~/.hermes``."""
    env = os.environ if env is None else env
    if home:
        return Path(home).expanduser()
    value = (env.get("HERMES_HOME") or "").strip()
    return Path(value).expanduser() if value else Path("~/.hermes").expanduser()


def load_config(
    *,
    home: str | os.PathLike[str] | None = None,
    path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    sections: Sequence[ConfigSection[Any]] | None = None,
) -> Config:
    """Read the configuration.

    ``path`` (``--config``) wins over ``<home>/config.yaml``; a missing default file means all
    defaults, a missing explicit file is an error. ``data`` replaces the file (embedders and
    tests). Environment variables of ``ENV_KEYS`` override the file; ``flags`` (dotted key ->
    value, e.g. ``{"plugins.disabled": ("x",)}``) override everything, except that
    ``plugins.disabled`` accumulates from every source. ``sections`` are the plugins'
    declarations (``PluginHost.config_sections()``): given, they are bound at once
    (``bind_sections``); without them the core's keys are read and the rest waits, unknown-key
    warnings included, for ``bind_sections``.
    """
    env = os.environ if env is None else env
    file_path: Path | None = None
    raw: Mapping[str, Any] = {}
    if data is not None:
        raw = data
    else:
        explicit = path is not None
        file_path = Path(path) if path is not None else resolve_home(home, env) / "config.yaml"
        raw = _read_yaml(file_path, explicit=explicit, env=env)
        if not raw and not file_path.exists():
            file_path = None
    where = str(file_path) if file_path else None
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"{where or 'config'}: the top level must be a mapping, not {type(raw).__name__}",
            path=where,
        )
    sources: dict[str, str] = {}
    unknown: list[tuple[str, str]] = []
    config: Config = _build(Config, raw, "", where, sources, unknown)
    overlays: list[tuple[str, Any, str]] = []
    for var, key in ENV_KEYS.items():
        if var in env and env[var].strip():
            overlays.append((key, env[var], "env"))
    pending: list[tuple[str, Any, str]] = []
    for key, value in (flags or {}).items():
        (overlays if _is_core_key(key) else pending).append((key, value, "flag"))
    for key, value, source in overlays:
        config = _overlay(config, key.split("."), key, value, source, sources, where)
    config = attrs.evolve(
        config, sources=sources, path=where, raw=dict(raw), env=dict(env), pending=tuple(pending),
        unknown=tuple(unknown),
    )
    return config if sections is None else bind_sections(config, sections)


def bind_sections(
    config: Config,
    sections: Sequence[ConfigSection[Any]],
    *,
    env: Mapping[str, str] | None = None,
    disabled: Callable[[], Sequence[ConfigSection[Any]]] | None = None,
) -> Config:
    """``config`` with the plugins' declared keys read from its file mapping.

    Then the plugins' environment variables (from the environment the file was read with,
    else ``env``) and the flags for their keys apply, and every key neither the core nor a
    declaration knows draws one ``config_unknown_key`` warning. ``disabled`` lists the
    declarations of disabled plugins (asked only when some key is unknown): their keys are
    accepted without a warning.
    """
    where = config.path
    sources = dict(config.sources)
    unknown = list(config.unknown)
    bound: dict[type, Any] = {}
    for declared in sections:
        value = config.raw.get(declared.name) if declared.name else config.raw
        if value is not None and not isinstance(value, Mapping):
            if declared.extends_core:
                continue  # the core's own read reported it
            raise ConfigError(
                f"{declared.name}: expected a mapping, got {value!r}" + (f" (in {where})" if where else "")
                + f" (section of plugin {declared.plugin!r})",
                key=declared.name, value=value, path=where,
            )
        bound[declared.model] = _build(declared.model, value or {}, declared.prefix, where, sources, unknown)
    config = attrs.evolve(config, bound=bound, declared=tuple(sections), sources=sources)
    environment = config.env if config.env is not None else (os.environ if env is None else env)
    overlays = [
        (key, environment[var], "env") for declared in sections for var, key in declared.env.items()
        if (environment.get(var) or "").strip()
    ]
    for key, value, source in (*overlays, *config.pending):
        owner = config.declaration_of(key)
        if owner is None:
            raise ConfigError(f"{key}: no such config key (set by {source})", key=key, value=value, path=where)
        instance = _overlay(config.section(owner), key[len(owner.prefix):].split("."), key, value, source, sources, where)
        config = attrs.evolve(config, bound={**config.bound, owner.model: instance})
    _warn_unknown_keys(unknown, sections, where, disabled)
    return attrs.evolve(config, sources=sources, pending=(), unknown=())


def _warn_unknown_keys(
    unknown: Sequence[tuple[str, str]],
    sections: Sequence[ConfigSection[Any]],
    where: str | None,
    disabled: Callable[[], Sequence[ConfigSection[Any]]] | None,
) -> None:
    known = _known_names(sections)
    left = [(key, prefix) for key, prefix in dict.fromkeys(unknown) if key[len(prefix):] not in known.get(prefix, ())]
    if left and disabled is not None:
        theirs = list(disabled())
        kept = []
        for key, prefix in left:
            owner = next((d for d in theirs if d.owns(key)), None)
            if owner is None:
                kept.append((key, prefix))
            else:
                log.debug("config_key_of_disabled_plugin", key=key, plugin=owner.plugin)
        left = kept
    for key, prefix in left:
        _warn_unknown(key, sorted(known.get(prefix, ())), prefix, where)


def _read_unbound(config: Config, declared: ConfigSection[T]) -> T:
    # A declaration the configuration was not bound with: read quietly from the file's mapping
    # (its unknown keys were or will be reported by a bound read).
    value = config.raw.get(declared.name) if declared.name else config.raw
    if value is not None and not isinstance(value, Mapping) and not declared.extends_core:
        raise ConfigError(
            f"{declared.name}: expected a mapping, got {value!r}" + (f" (in {config.path})" if config.path else ""),
            key=declared.name, value=value, path=config.path,
        )
    if not isinstance(value, Mapping):
        value = {}
    sources = dict(config.sources)
    instance: T = _build(declared.model, value, declared.prefix, config.path, sources, [])
    environment = config.env or {}
    for var, key in declared.env.items():
        if (environment.get(var) or "").strip():
            instance = _overlay(instance, key[len(declared.prefix):].split("."), key, environment[var], "env", sources, config.path)
    return instance


def _is_core_key(dotted: str) -> bool:
    cls: Any = Config
    for part in dotted.split("."):
        if not (cls is not None and attrs.has(cls) and part in attrs.fields_dict(cls)):
            return False
        cls = attrs.fields_dict(cls)[part].metadata.get("section")
    return True


def _read_yaml(path: Path, *, explicit: bool, env: Mapping[str, str] | None = None) -> Any:
    # config.yaml is read before the configuration exists: its own bound comes from the
    # environment (HERMES_MAX_READ_BYTES) or the default. A config is never cut: half a YAML
    # file means something else, so a file over the bound is an error.
    limit = _env_read_limit(env)
    try:
        read = read_bytes_bounded(path, limit)
    except (FileNotFoundError, NotADirectoryError):
        target = dangling_target(path)
        if explicit or target is not None:
            why = f"a symlink to {target}, which does not exist" if target is not None else "not found"
            raise ConfigError(f"{path}: config file {why}", path=str(path)) from None
        return {}
    except FileRefused as exc:
        raise ConfigError(
            f"{path}: the config file is {exc.what_it_is}; it was not read", path=str(path)
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}", path=str(path)) from None
    if read.truncated:
        raise ConfigError(
            f"{path}: the config file is larger than {limit:,} bytes (files.max_read_bytes, "
            "set by HERMES_MAX_READ_BYTES); it was not read",
            path=str(path),
        )
    try:
        text = read.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: the config file is not valid UTF-8 (byte {exc.start})", path=str(path)
        ) from None
    try:
        loaded = load_yaml(text)
    except YAMLLimitError as exc:
        raise ConfigError(f"{path}: refused: {exc.problem}", path=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f"{path}, line {line}" if line else str(path)
        raise ConfigError(
            f"{where}: invalid YAML: {problem}", path=str(path), line=line
        ) from None
    return {} if loaded is None else loaded


def _env_read_limit(env: Mapping[str, str] | None) -> int:
    value = ((os.environ if env is None else env).get("HERMES_MAX_READ_BYTES") or "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_BYTES


def _build(
    cls: type,
    raw: Mapping[str, Any],
    prefix: str,
    where: str | None,
    sources: dict[str, str],
    unknown: list[tuple[str, str]],
) -> Any:
    fields = {f.name: f for f in attrs.fields(cls) if not f.metadata.get("internal")}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key)
        f = fields.get(name)
        if f is None:
            # Not warned here: another declaration may own it (see ``_warn_unknown_keys``).
            unknown.append((prefix + name, prefix))
            continue
        dotted = prefix + name
        nested = f.metadata.get("section") or (_nested_model(cls, f) if f.metadata.get("check") is None else None)
        if nested is not None:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(
                    f"{dotted}: expected a mapping, got {value!r}" + (f" (in {where})" if where else ""),
                    key=dotted,
                    value=value,
                    path=where,
                )
            kwargs[name] = _build(nested, value, dotted + ".", where, sources, unknown)
            continue
        kwargs[name] = _check(f, dotted, value, where, sources, "file")
    return cls(**kwargs)


def _nested_model(cls: type, f: attrs.Attribute[Any]) -> type | None:
    """The attrs class a field without a checker holds: a section too, whether its annotation
    is the class or (``from __future__ import annotations``) the class's name."""
    kind: Any = f.type
    if isinstance(kind, str):
        try:
            kind = typing.get_type_hints(cls).get(f.name)
        except Exception:  # noqa: BLE001 - a name only a type checker sees: not a nested model
            return None
    return kind if isinstance(kind, type) and attrs.has(kind) else None


def _check(f: attrs.Attribute[Any], dotted: str, value: Any, where: str | None, sources: dict[str, str], source: str) -> Any:
    try:
        checked = f.metadata.get("check", _any)(value)
    except ValueError as exc:
        if f.metadata.get("lenient"):
            factory = getattr(f.default, "factory", None)
            default = factory() if callable(factory) else f.default
            record_warning(
                "config_value_ignored",
                f"{dotted}: {exc} (got {value!r}); using the default {default!r}",
                path=where,
                key=dotted,
            )
            return default
        raise ConfigError(
            f"{dotted}: {exc}, got {value!r}" + (f" (in {where})" if where else ""),
            key=dotted,
            value=value,
            path=where,
        ) from None
    sources[dotted] = source
    return checked


def _warn_unknown(dotted: str, candidates: list[str], prefix: str, where: str | None) -> None:
    name = dotted[len(prefix):]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
    record_warning(
        "config_unknown_key",
        f"unknown config key {dotted!r}{hint}" + (f" (in {where})" if where else ""),
        path=where,
        key=dotted,
        suggestion=(prefix + close[0]) if close else None,
    )


def _overlay(
    root: Any, parts: list[str], dotted: str, value: Any, source: str, sources: dict[str, str], where: str | None,
) -> Any:
    # ``root`` with the key at ``parts`` (below it) set to the checked ``value``.
    chain: list[Any] = [root]
    for part in parts[:-1]:
        chain.append(getattr(chain[-1], part))
    leaf_owner = chain[-1]
    f = attrs.fields_dict(type(leaf_owner)).get(parts[-1])
    if f is None:
        raise ConfigError(f"{dotted}: no such config key (set by {source})", key=dotted, value=value, path=where)
    new_value = _check(f, dotted, value, where, sources, source)
    if dotted == "plugins.disabled":
        new_value = tuple(dict.fromkeys((*leaf_owner.disabled, *new_value)))
    updated = attrs.evolve(leaf_owner, **{parts[-1]: new_value})
    for owner, part in zip(reversed(chain[:-1]), reversed(parts[:-1])):
        updated = attrs.evolve(owner, **{part: updated})
    return updated


__all__ = [
    "CORE_OWNER", "ENV_KEYS", "Config", "ConfigSection", "bind_sections", "claim_problem", "core_claims",
    "known_keys", "load_config", "resolve_home",
]
