"""The configuration model: ``$HERMES_HOME/config.yaml`` read into frozen attrs sections.

Every key the spec names has a default here, so a missing file means "all defaults". Each field
carries a checker in its metadata; a bad value is a ``ConfigError`` naming the key path, the
value and the file - except in the sections whose reference behaviour is "never raise"
(``tool_output``, ``tools.search``), where a bad value falls back to the default with a warning.
``Config.sources`` says where each effective value came from: default, file, env or flag.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from hermes_core.diagnostics import record_warning
from hermes_core.errors import ConfigError
from hermes_core.files import DEFAULT_MAX_BYTES, FileRefused, dangling_target, read_bytes_bounded
from hermes_core.safeyaml import YAMLLimitError, load_yaml

Check = Callable[[Any], Any]

_TRUE_WORDS = {"true", "yes", "on", "1"}
_FALSE_WORDS = {"false", "no", "off", "0"}


# --- checkers: each returns the normalised value or raises ValueError with a short reason ---


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
        return value.strip().lower() in _TRUE_WORDS
    raise ValueError("expected true or false")


def _int(minimum: int | None = None, maximum: int | None = None, *, optional: bool = False) -> Check:
    def check(value: Any) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, bool):
            raise ValueError("expected an integer")
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise ValueError("expected an integer" + (" or null" if optional else ""))
        if minimum is not None and value < minimum:
            raise ValueError(f"must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise ValueError(f"must be at most {maximum}")
        return value

    return check


def _float(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    optional: bool = False,
) -> Check:
    def check(value: Any) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError("expected a number")
        try:
            number = float(value)
        except ValueError:
            raise ValueError("expected a number") from None
        if low is not None and (number <= low if low_open else number < low):
            raise ValueError(f"must be {'greater than' if low_open else 'at least'} {low:g}")
        if high is not None and number > high:
            raise ValueError(f"must be at most {high:g}")
        return number

    return check


def _str(*, optional: bool = False, choices: tuple[str, ...] | None = None) -> Check:
    def check(value: Any) -> str | None:
        if value is None and optional:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and choices is None:
            value = str(value)
        if not isinstance(value, str):
            raise ValueError("expected a string" + (" or null" if optional else ""))
        if choices is not None and value.strip().lower() not in choices:
            raise ValueError("expected one of " + ", ".join(choices))
        return value.strip().lower() if choices is not None else value

    return check


def _str_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise ValueError("expected a list of strings")


def _mapping(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("expected a mapping")
    return dict(value)


def _model_thresholds(value: Any) -> Mapping[str, float]:
    mapping = _mapping(value)
    out: dict[str, float] = {}
    for key, raw in mapping.items():
        out[str(key)] = _float(0.0, 1.0, low_open=True)(raw)
    return out


def _gate(value: Any) -> Any:
    # true/false words, a list of model-name fragments, or "auto" (spec §4): anything is
    # accepted, because the reference treats unknown values as "auto" rather than an error.
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


def _any(value: Any) -> Any:
    return value


def _defer(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise ValueError("expected a YAML list")
    return tuple(str(v) for v in value)


def _tri_state(value: Any) -> str:
    # Spec §16 parse rule: true/1/yes -> on, false/0/no -> off, anything unknown -> auto.
    if value is None or value is True:
        return "auto"
    if value is False:
        return "off"
    word = str(value).strip().lower()
    if word in {"true", "1", "yes", "on"}:
        return "on"
    if word in {"false", "0", "no", "off"}:
        return "off"
    if word == "auto":
        return "auto"
    raise ValueError("expected auto, on or off")


def _clamped(low: float, high: float, cast: type) -> Check:
    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a number")
        try:
            number = cast(float(value))
        except (TypeError, ValueError):
            raise ValueError("expected a number") from None
        return min(max(number, cast(low)), cast(high))

    return check


def field(default: Any, check: Check, *, lenient: bool = False, doc: str = "") -> Any:
    """A config field: its default, its checker, and whether bad values only warn."""
    if isinstance(default, (dict, list)):
        return attrs.field(
            factory=lambda: type(default)(default),
            metadata={"check": check, "lenient": lenient, "doc": doc},
        )
    return attrs.field(default=default, metadata={"check": check, "lenient": lenient, "doc": doc})


def section(cls: type) -> Any:
    return attrs.field(factory=cls, metadata={"section": cls})


@attrs.frozen(kw_only=True)
class ConfigSection:
    """A top-level config section a plugin owns (see ``hermes_config_sections``)."""

    name: str
    model: type
    doc: str = ""
    #: the declaring plugin (filled in by the host)
    plugin: str = ""


# --- the model ---


@attrs.frozen(kw_only=True)
class ContextSection:
    engine: str = field("compressor", _str(), doc="the context engine, by name")
    file_max_chars: int | None = field(
        None, _int(1, optional=True), doc="cap per context file; null = sized to the window"
    )
    file_read_timeout: float = field(5.0, _float(0.0, low_open=True), doc="seconds per file read")


@attrs.frozen(kw_only=True)
class SummarySection:
    provider: str = field("extractive", _str(), doc="extractive (offline), openai or anthropic")
    model: str | None = field(None, _str(optional=True))
    base_url: str | None = field(None, _str(optional=True))
    api_key_env: str | None = field(None, _str(optional=True))
    timeout: float = field(120.0, _float(0.0, low_open=True))


@attrs.frozen(kw_only=True)
class CompressionSection:
    enabled: bool = field(True, _bool)
    threshold: float = field(0.50, _float(0.0, 1.0, low_open=True), doc="ratio of the window")
    threshold_tokens: int | None = field(None, _int(1, optional=True), doc="absolute cap")
    target_ratio: float = field(0.20, _float(0.0, 1.0, low_open=True), doc="tail budget ratio")
    protect_first_n: int = field(3, _int(0))
    protect_last_n: int = field(20, _int(0))
    max_attempts: int = field(3, _int(1, 10))
    abort_on_summary_failure: bool = field(False, _bool)
    model_thresholds: Mapping[str, float] = field({}, _model_thresholds)
    ineffective_recovery_margin: float = field(
        0.25, _float(0.0, 10.0), doc="growth (x threshold) after which an ineffective block lifts"
    )
    thrash_window_turns: int = field(20, _int(1))
    summary: SummarySection = section(SummarySection)


@attrs.frozen(kw_only=True)
class AgentSection:
    tool_use_enforcement: Any = field("auto", _gate)
    execution_guidance: Any = field("auto", _gate)
    task_completion_guidance: bool = field(True, _bool)
    parallel_tool_call_guidance: bool = field(True, _bool)
    environment_hint: str | None = field(None, _str(optional=True))
    system_prompt: str | None = field(None, _str(optional=True), doc="ephemeral prompt")
    pass_session_id: bool = field(False, _bool)


@attrs.frozen(kw_only=True)
class MemorySection:
    memory_enabled: bool = field(True, _bool)
    user_profile_enabled: bool = field(True, _bool)
    memory_char_limit: int = field(2200, _int(1))
    user_char_limit: int = field(1375, _int(1))


@attrs.frozen(kw_only=True)
class SkillsSection:
    disabled: tuple[str, ...] = field((), _str_list)
    platform_disabled: Mapping[str, Any] = field({}, _mapping)
    external_dirs: tuple[str, ...] = field((), _str_list)
    index_max_tokens: int | None = field(
        None, _int(1, optional=True), doc="null = 2% of the window when known"
    )
    index_ttl_seconds: float | None = field(
        30.0, _float(0.0, optional=True),
        doc="a cached index older than this revalidates against disk; null = until invalidated",
    )


@attrs.frozen(kw_only=True)
class ToolOutputSection:
    max_bytes: int = field(50_000, _int(1), lenient=True)
    max_lines: int = field(2_000, _int(1), lenient=True)
    max_line_length: int = field(2_000, _int(1), lenient=True)


@attrs.frozen(kw_only=True)
class ToolSearchSection:
    enabled: str = field("auto", _tri_state, lenient=True)
    threshold_pct: float = field(5.0, _clamped(0.0, 100.0, float), lenient=True)
    max_search_limit: int = field(25, _clamped(1, 50, int), lenient=True)
    search_default_limit: int = field(5, _clamped(1, 50, int), lenient=True)
    listing: str = field("auto", _tri_state, lenient=True)
    listing_max_tokens: int = field(4_000, _clamped(200, 60_000, int), lenient=True)
    defer: tuple[str, ...] | None = field(None, _defer, lenient=True)


@attrs.frozen(kw_only=True)
class ToolsSection:
    search: ToolSearchSection = section(ToolSearchSection)


@attrs.frozen(kw_only=True)
class ToolBudgetSection:
    mcp_result_size_chars: int = field(50_000, _int(1))


@attrs.frozen(kw_only=True)
class PromptCachingSection:
    cache_ttl: str = field("5m", _str(choices=("5m", "1h")))
    prompt_cache_key: bool = field(True, _bool, doc="send a stable OpenAI prompt_cache_key")


@attrs.frozen(kw_only=True)
class PluginsSection:
    disabled: tuple[str, ...] = field((), _str_list)
    prompt_hook_budget: float | None = field(
        5.0, _float(0.0, optional=True),
        doc="seconds one prompt hook may take before its block is left out; null or 0 = no limit",
    )


@attrs.frozen(kw_only=True)
class TerminalSection:
    backend: str = field("local", _str(), doc="local, docker, ssh, modal, daytona, singularity")
    cwd: str | None = field(None, _str(optional=True))


@attrs.frozen(kw_only=True)
class SessionStoreSection:
    backend: str = field("sqlite", _str(choices=("sqlite", "redis")), doc="sqlite (HERMES_HOME) or redis")
    url: str = field("redis://127.0.0.1:6379/0", _str(), doc="the Redis server (backend: redis)")
    key_prefix: str = field("hermes:", _str(), doc="prefix of every Redis key")
    ttl_seconds: int | None = field(
        None, _int(1, optional=True), doc="Redis keys of a session expire this long after its last write"
    )
    lease_ttl_seconds: float = field(
        30.0, _float(0.0, low_open=True), doc="a compaction lease expires this long after its last renewal"
    )
    lease_wait_seconds: float = field(
        10.0, _float(0.0), doc="wait this long for another worker's compaction, then serve uncompacted"
    )


@attrs.frozen(kw_only=True)
class ArchiveSection:
    enabled: bool = field(True, _bool, doc="archive what compaction removes (recall tools)")
    max_age_days: float | None = field(
        90.0, _float(0.0, optional=True, low_open=True), doc="hermes-ctx history prune removes older entries"
    )
    max_bytes_per_session: int | None = field(
        256 << 20, _int(1, optional=True), doc="oldest entries beyond this go first; null = no cap"
    )


def _allow_map(value: Any) -> Mapping[str, tuple[str, ...]]:
    mapping = _mapping(value)
    return {str(key): _str_list(entries) for key, entries in mapping.items()}


@attrs.frozen(kw_only=True)
class ThreatScanSection:
    allow: Mapping[str, tuple[str, ...]] = field(
        attrs.Factory(dict), _allow_map,
        doc="per project (a directory, a glob, or \"*\"): finding ids to accept, or texts of lines to keep",
    )


@attrs.frozen(kw_only=True)
class FilesSection:
    max_read_bytes: int = field(
        2_000_000, _int(1), doc="most bytes read from any one file (memory, skills, SOUL.md, ...)"
    )


@attrs.frozen(kw_only=True)
class Config:
    """The effective configuration. Read keys as attributes: ``config.compression.threshold``."""

    context: ContextSection = section(ContextSection)
    compression: CompressionSection = section(CompressionSection)
    agent: AgentSection = section(AgentSection)
    memory: MemorySection = section(MemorySection)
    skills: SkillsSection = section(SkillsSection)
    tool_output: ToolOutputSection = section(ToolOutputSection)
    tools: ToolsSection = section(ToolsSection)
    tool_budget: ToolBudgetSection = section(ToolBudgetSection)
    prompt_caching: PromptCachingSection = section(PromptCachingSection)
    plugins: PluginsSection = section(PluginsSection)
    terminal: TerminalSection = section(TerminalSection)
    archive: ArchiveSection = section(ArchiveSection)
    session_store: SessionStoreSection = section(SessionStoreSection)
    files: FilesSection = section(FilesSection)
    threat_scan: ThreatScanSection = section(ThreatScanSection)
    platform_hints: Mapping[str, Any] = field({}, _mapping)
    platforms: Mapping[str, Any] = field({}, _mapping)
    gateway: Mapping[str, Any] = field({}, _mapping)
    timezone: str | None = field(None, _str(optional=True))
    # Where each effective value came from, and the file's own mapping (for plugin sections).
    sources: Mapping[str, str] = attrs.field(factory=dict, eq=False, metadata={"internal": True})
    path: str | None = attrs.field(default=None, eq=False, metadata={"internal": True})
    raw: Mapping[str, Any] = attrs.field(factory=dict, eq=False, metadata={"internal": True})
    #: the plugins' sections, by name (``config.<name>`` reads them)
    plugin_sections: Mapping[str, Any] = attrs.field(factory=dict, metadata={"internal": True})
    #: the declarations they were read with; ``None`` = not read for any plugin yet
    declared: tuple[ConfigSection, ...] | None = attrs.field(default=None, eq=False, metadata={"internal": True})

    def __getattr__(self, name: str) -> Any:
        # Only reached when no core field matches: a plugin's section.
        sections = object.__getattribute__(self, "plugin_sections")
        if name in sections:
            return sections[name]
        raise AttributeError(f"config has no section {name!r}")

    def get(self, dotted: str) -> Any:
        """Return the value at a dotted key path (``"compression.summary.provider"``)."""
        node: Any = self
        for part in dotted.split("."):
            node = node[part] if isinstance(node, Mapping) else getattr(node, part)
        return node

    def items(self) -> list[tuple[str, Any, str]]:
        """Every leaf key path with its value and source, in declaration order."""
        out: list[tuple[str, Any, str]] = []

        def visit(key: str, value: Any) -> None:
            out.append((key, value, self.sources.get(key, "default")))

        _walk_leaves(type(self), self, "", visit)
        for name, value in self.plugin_sections.items():
            if attrs.has(type(value)):
                _walk_leaves(type(value), value, name + ".", visit)
        return out


# Environment variables that override a key (the env wins over the file).
ENV_KEYS: dict[str, str] = {
    "HERMES_TIMEZONE": "timezone",
    "HERMES_ENVIRONMENT_HINT": "agent.environment_hint",
    "HERMES_EPHEMERAL_SYSTEM_PROMPT": "agent.system_prompt",
    "HERMES_DISABLE_PLUGINS": "plugins.disabled",
    "TERMINAL_ENV": "terminal.backend",
    "TERMINAL_CWD": "terminal.cwd",
    "HERMES_MAX_READ_BYTES": "files.max_read_bytes",
}


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


def known_keys() -> list[str]:
    """Every leaf key path of the model, for docs and suggestions."""
    keys: list[str] = []
    _walk_leaves(Config, Config(), "", lambda key, value: keys.append(key))
    return keys


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
    sections: Sequence[ConfigSection] | None = None,
) -> Config:
    """Read the configuration.

    ``path`` (``--config``) wins over ``<home>/config.yaml``; a missing default file means all
    defaults, a missing explicit file is an error. ``data`` replaces the file (embedders and
    tests). Environment variables of ``ENV_KEYS`` override the file; ``flags`` (dotted key ->
    value, e.g. ``{"plugins.disabled": ("x",)}``) override everything, except that
    ``plugins.disabled`` accumulates from every source. ``sections`` are the plugins' declared
    sections (``PluginHost.config_sections()``): they are read into ``config.<name>`` and
    their keys are not unknown.
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
    owned = {section.name: section for section in sections or ()}
    core_raw = {k: v for k, v in raw.items() if str(k) not in owned}
    config: Config = _build(Config, core_raw, "", where, sources)
    if sections is not None:
        config = attrs.evolve(
            config, plugin_sections=_plugin_sections(owned, raw, where, sources),
            declared=tuple(sections),
        )
    overlays: list[tuple[str, Any, str]] = []
    for var, key in ENV_KEYS.items():
        if var in env and env[var].strip():
            overlays.append((key, env[var], "env"))
    for key, value in (flags or {}).items():
        overlays.append((key, value, "flag"))
    for key, value, source in overlays:
        config = _overlay(config, key, value, source, sources, where)
    return attrs.evolve(config, sources=sources, path=where, raw=dict(raw))


def _plugin_sections(
    owned: Mapping[str, ConfigSection], raw: Mapping[str, Any], where: str | None, sources: dict[str, str],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, section in owned.items():
        value = raw.get(name)
        if value is None:
            out[name] = section.model()
            continue
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"{name}: expected a mapping, got {value!r}" + (f" (in {where})" if where else "")
                + f" (section of plugin {section.plugin!r})",
                key=name, value=value, path=where,
            )
        out[name] = _build(section.model, value, name + ".", where, sources)
    return out


def bind_sections(config: Config, sections: Sequence[ConfigSection]) -> Config:
    """``config`` with the plugins' sections read from its file mapping (no key warnings)."""
    owned = {section.name: section for section in sections}
    sources = dict(config.sources)
    with_sections = _plugin_sections(owned, config.raw, config.path, sources)
    return attrs.evolve(config, plugin_sections=with_sections, declared=tuple(sections), sources=sources)


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


def _build(cls: type, raw: Mapping[str, Any], prefix: str, where: str | None, sources: dict[str, str]) -> Any:
    fields = {f.name: f for f in attrs.fields(cls) if not f.metadata.get("internal")}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key)
        f = fields.get(name)
        if f is None:
            _warn_unknown(prefix + name, list(fields), prefix, where)
            continue
        dotted = prefix + name
        if "section" in f.metadata:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ConfigError(
                    f"{dotted}: expected a mapping, got {value!r}" + (f" (in {where})" if where else ""),
                    key=dotted,
                    value=value,
                    path=where,
                )
            kwargs[name] = _build(f.metadata["section"], value, dotted + ".", where, sources)
            continue
        if f.metadata.get("check") is None and attrs.has(f.type if isinstance(f.type, type) else type(None)):
            kwargs[name] = _build(f.type, value, dotted + ".", where, sources)
            continue
        kwargs[name] = _check(f, dotted, value, where, sources, "file")
    return cls(**kwargs)


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


def _overlay(config: Config, dotted: str, value: Any, source: str, sources: dict[str, str], where: str | None) -> Config:
    parts = dotted.split(".")
    chain: list[Any] = [config]
    for part in parts[:-1]:
        chain.append(getattr(chain[-1], part))
    leaf_owner = chain[-1]
    f = attrs.fields_dict(type(leaf_owner))[parts[-1]]
    new_value = _check(f, dotted, value, where, sources, source)
    if dotted == "plugins.disabled":
        new_value = tuple(dict.fromkeys((*leaf_owner.disabled, *new_value)))
    updated = attrs.evolve(leaf_owner, **{parts[-1]: new_value})
    for owner, part in zip(reversed(chain[:-1]), reversed(parts[:-1])):
        updated = attrs.evolve(owner, **{part: updated})
    return updated  # type: ignore[no-any-return]
