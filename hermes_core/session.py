"""``Session``: what an agent builder holds for one conversation.

The system prompt is built on first use and then replayed byte for byte for the rest of the
session, because provider prefix caches match on exact bytes; only ``invalidate_system_prompt``
(called after a compression) makes the next use rebuild, which is also when memory written
during the session reaches the prompt. A built prompt is stored with its session id, so a
worker that opens the same session id later (another process, the next gateway turn) replays the
same bytes instead of rebuilding - unless the stored Model/Provider lines no longer match.
"""

from __future__ import annotations

import json
import operator
import os
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core import bounded
from hermes_core.assembler import BuiltPrompt, assemble, stored_prompt
from hermes_core.compaction import CompactionEvent, CompactionLoop, ManualCompression
from hermes_core.config import Config, load_config, resolve_home
from hermes_core.config_cache import environ_copy, session_config
from hermes_core.conversion import RequestReport, report_of
from hermes_core.diagnostics import collecting, record_warning
from hermes_core.history import ProcessedHistory
from hermes_core.logging import get_logger
from hermes_core.pairing import PairingGuard
from hermes_core.records import (
    HostWarning,
    PromptContext,
    ToolCallContext,
    ToolsContext,
)
from hermes_core.redaction import Redactor
from hermes_core.session_options import SessionOptions, given_keywords
from hermes_core.store_guard import budgeted
from hermes_core.store_guard import join_idle as join_idle_store_workers
from hermes_core.stored_copy import stored_copy, warn_masked, was_masked

if TYPE_CHECKING:
    from hermes_core.engine import ContextEngine
    from hermes_core.host import PluginHost
    from hermes_core.model_data import ModelInfo
    from hermes_core.turn import TurnResult

log = get_logger("hermes_core.session")

Clock = Callable[[], datetime]
_T = TypeVar("_T")


def _wall_clock() -> datetime:
    return datetime.now(UTC)


def new_session_id(clock: Clock | None = None) -> str:
    """``YYYYmmdd_HHMMSS_<6 hex>``: sortable by start time, unique enough per process fleet."""
    now = (clock or _wall_clock)()
    return f"{now:%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def _tool_names(tools: Iterable[Any]) -> tuple[str, ...]:
    # Names, or OpenAI/Anthropic tool schemas from which the name is taken.
    names: list[str] = []
    for tool in tools or ():
        if isinstance(tool, str):
            name: Any = tool
        elif isinstance(tool, Mapping):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        else:
            name = getattr(tool, "name", None)
        if isinstance(name, str) and name.strip() and name.strip() not in names:
            names.append(name.strip())
    return tuple(names)


def _usable_dir(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_dir() and os.access(path, os.X_OK) else None


def last_labelled_value(prompt: str, label: str) -> str | None:
    """The value of the last line of ``prompt`` that starts with ``<label>:``."""
    prefix = label + ":"
    value: str | None = None
    for line in prompt.splitlines():
        if line.startswith(prefix):
            value = line[len(prefix):].strip()
    return value


def stale_reason(prompt: str, *, model: str, provider: str) -> str | None:
    """Why a stored prompt no longer fits the runtime, or ``None`` when it does (spec §14).

    Only a disagreement between two non-empty values counts: a prompt without a Model line, or
    a session opened without a model, cannot prove the prompt stale.
    """
    for label, current in (("Model", model), ("Provider", provider)):
        stored = last_labelled_value(prompt, label)
        current = (current or "").strip()
        if stored and current and stored != current:
            return f"{label.lower()} changed from {stored!r} to {current!r}"
    return None


class Session:
    """One conversation: its host, configuration, engine and byte-stable system prompt.

    Build with ``Session.open(...)``. The engine and host are per session and may be shared
    read-only with other sessions (one host serves many sessions).
    """

    def __init__(
        self,
        *,
        options: SessionOptions,
        host: PluginHost,
        config: Config,
        engine: ContextEngine,
        session_id: str,
        cwd: Path,
        home: Path,
        env: Mapping[str, str],
        store: Any,
        restore: bool,
    ) -> None:
        self.options = options
        self.host = host
        self.config = config
        self.engine = engine
        self.session_id = session_id
        self.model = options.model or ""
        self.provider = options.provider or ""
        self.platform = options.platform or ""
        self.cwd = cwd
        self.home = home
        window = options.context_length
        self._declared_window = window if window and window > 0 else None
        self.max_tokens = options.max_tokens
        self.tools = _tool_names(options.tools)
        self.toolsets = tuple(options.toolsets or ())
        self.system_message = options.system_message
        #: The host's own identity text (``None``: SOUL.md, else the default identity). A host
        #: that changes it calls ``invalidate_system_prompt()``.
        self.identity = options.identity
        self.env = env
        self.clock = options.clock
        # A remote store (Redis) is bounded per turn (hermes_core.store_guard); a local one is not.
        self.store, self._store_budget = budgeted(store, config.session_store.turn_budget_seconds)
        self.persist = options.persist
        environment, invoke, on_status = options.environment, options.invoke, options.on_status
        self._restore_pending = restore
        self._prompt: str | None = None
        self._built: BuiltPrompt | None = None
        self._stored_prefix = 0  # chars of a replayed prompt's stable prefix, when the store kept it
        self._pending_warnings: list[HostWarning] = []
        self._engine_state_seen: Any = None  # the stored engine state as last read or written
        self._lock = threading.RLock()
        self._closed = False
        #: The terminal environment object tools run in (``None`` = local), for spill writers.
        self.environment = environment
        #: ``invoke(tool_name, arguments)`` runs one of the host's tools: what ``tool_call``
        #: (the bridge) calls once the arguments passed the schema check.
        self.invoke = invoke
        self._tool_catalog: Sequence[Any] | None = None
        #: Each message's processed form (canonical, rough tokens, Anthropic blocks), reused
        #: while the message is unchanged (``hermes_core.history``). ``message_cache.clear()``
        #: after editing a message in place further back than ``verify_window`` messages.
        self.message_cache = ProcessedHistory()
        #: What the last ``request`` converted, replaced or dropped to fit its target API
        #: (``hermes_core.conversion.RequestReport``); ``None`` before the first request.
        self.last_request_report: RequestReport | None = None
        self._loop = CompactionLoop(self, on_status)
        #: Per-session objects of plugins, by name (the archive plugin keeps its archive under
        #: ``"archive"``); one with a ``close()`` is closed by ``Session.close``.
        self.plugin_state: dict[str, Any] = {}
        #: Masks secrets in what this session writes at rest (archive, spill files) with
        #: placeholders stable for the session, keyed by a random key held only in memory.
        self.redactor = Redactor.for_session()
        # Every list on its way to a provider is checked (incrementally) and repaired if broken.
        self._pairing = PairingGuard()

    # --- construction -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        options: SessionOptions | None = None,
        /,
        *,
        cwd: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        model: str = "",
        provider: str = "",
        platform: str = "",
        tools: Sequence[Any] = (),
        toolsets: Sequence[str] = (),
        session_id: str | None = None,
        system_message: str | None = None,
        identity: str | None = None,
        context_length: int | None = None,
        max_tokens: int | None = None,
        config: Config | None = None,
        host: PluginHost | None = None,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        persist: bool = True,
        on_status: Callable[[CompactionEvent], None] | None = None,
        environment: Any = None,
        invoke: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Session:
        """Open a session. Nothing is built yet: the prompt is built on first use.

        ``session_id`` given: the session store is asked for that session's prompt at first
        use and, when its Model/Provider lines still match, it is replayed verbatim. ``None``
        generates a fresh id. ``persist=False`` never writes to the session store (inspection
        tools use it). ``on_status`` receives a ``CompactionEvent`` for every automatic
        compression, every blocked one ("context compacted: 182k → 41k tokens") and every one
        skipped because the compaction lease could not be had (kind ``skipped``).
        ``environment`` is the terminal environment the tools run in (``None`` = local); the
        tool-result spill writers receive it. ``invoke(tool_name, arguments)`` runs one of the
        host's tools; the ``tool_call`` bridge tool calls it (see ``handle_tool_call``).
        ``identity`` is the host's own identity text: it replaces SOUL.md and the default
        identity, and no Hermes-specific block (the documentation pointer) is added.

        The same options may come as one ``SessionOptions`` record (``Session.open(options)``);
        giving the record and keywords together is an error.
        """
        from hermes_core.host import PluginHost

        keywords = given_keywords({
            "cwd": cwd, "home": home, "model": model, "provider": provider, "platform": platform,
            "tools": tools, "toolsets": toolsets, "session_id": session_id,
            "system_message": system_message, "identity": identity, "context_length": context_length,
            "max_tokens": max_tokens, "config": config, "host": host, "env": env, "clock": clock,
            "persist": persist, "on_status": on_status, "environment": environment,
            "invoke": invoke,
        })
        if options is None:
            options = SessionOptions(**keywords)
        elif keywords:
            raise TypeError(
                "Session.open takes a SessionOptions record or keywords, not both "
                f"(got {', '.join(sorted(keywords))}); use attrs.evolve(options, ...)"
            )
        o = options
        env = environ_copy() if o.env is None else dict(o.env)
        with collecting() as bucket:
            home_path = resolve_home(o.home, env).absolute()
            config, host = o.config, o.host
            if config is None and host is None:
                # The usual call: read (or reuse while unchanged) config.yaml, bound for the
                # process's shared host; the warnings of the read reach every session.
                config, host, read_warnings = session_config(home_path, env)
                bucket.extend(read_warnings)
            if config is None:
                # Read once: the core's keys (the host needs plugins.disabled), then the plugins'.
                config = load_config(home=home_path, env=env)
            if host is None:
                host = PluginHost.shared(config=config, env=env)
            if config.declared is None:
                config = host.bind_config(config, env=env)
            known_id = bool(o.session_id)
            sid = o.session_id or new_session_id(o.clock)
            if o.cwd is not None:
                cwd_path = Path(o.cwd).expanduser().resolve()
            else:
                cwd_path = (_usable_dir(config.terminal.cwd) or Path(os.getcwd())).resolve()
            engine = host.create_engine(config.context.engine, config)
            window = o.context_length or 0
            if window <= 0 and o.model:
                # A known model's window from the registry snapshot (read on first need only);
                # the caller's context_length, and a window learned from an overflow, win.
                from hermes_core.model_data import lookup

                known = lookup(o.model, o.provider)
                window = known.context_window if known is not None else 0
            engine.update_model(o.model, window, provider=o.provider, max_tokens=o.max_tokens)
            host.engine_step("on_session_start", engine, session_id=sid, boundary_reason=None)
            store = host.session_store(home_path, config) if (o.persist or known_id) else None
            session = cls(
                options=o,
                host=host,
                config=config,
                engine=engine,
                session_id=sid,
                cwd=cwd_path,
                home=home_path,
                env=env,
                store=store,
                restore=known_id and store is not None,
            )
            if known_id and store is not None:
                session._restore_engine_state()
        session._pending_warnings.extend(bucket)
        log.debug("session_opened", session_id=sid, model=o.model, provider=o.provider, platform=o.platform)
        return session

    @property
    def window(self) -> int | None:
        """The context window (tokens) the prompt, the tools and the engine are all sized for.

        The engine's window once it has one (it learns a smaller one from an overflow error),
        else the window the caller declared, else the model's window from the registry snapshot
        (``hermes_core.model_data``, given to the engine at open); ``None`` when nobody knows it.
        """
        learned = self.engine.context_length
        return learned if learned > 0 else self._declared_window

    @property
    def model_info(self) -> ModelInfo | None:
        """What the registry snapshot knows of this session's model (window, output limit,
        prices), or ``None``."""
        from hermes_core.model_data import lookup

        return lookup(self.model, self.provider) if self.model else None

    @property
    def context_length(self) -> int | None:
        """Alias of ``window`` (kept for callers)."""
        return self.window

    def prompt_context(self) -> PromptContext:
        """The ``PromptContext`` the blocks of this session's prompt are built from."""
        return PromptContext(
            cwd=self.cwd,
            home=self.home,
            config=self.config,
            model=self.model,
            provider=self.provider,
            platform=self.platform,
            tools=frozenset(self.tools),
            toolsets=frozenset(self.toolsets),
            session_id=self.session_id,
            pass_session_id=self.config.agent.pass_session_id,
            context_length=self.window,
            max_tokens=self.max_tokens,
            system_message=self.system_message,
            identity=self.identity,
            env=self.env,
            host=self.host,
            clock=self.clock,
        )

    # --- the system prompt --------------------------------------------------------------

    @property
    def system_prompt(self) -> str:
        """The session's system prompt: built (or restored) once, then the same bytes."""
        prompt = self._prompt
        if prompt is not None:
            return prompt
        with self._lock:
            if self._prompt is None:
                with collecting() as bucket:
                    self._restore_or_build(bucket)
                self._pending_warnings.extend(bucket)
            return self._prompt  # type: ignore[return-value]

    @property
    def built(self) -> BuiltPrompt | None:
        """The last ``BuiltPrompt`` (``origin="stored"`` when it was restored), or ``None``."""
        return self._built

    def invalidate_system_prompt(self) -> None:
        """Forget the prompt; the next use rebuilds it (re-reading memory and SOUL.md)."""
        with self._lock:
            self._prompt = None
            self._restore_pending = False

    @property
    def static_system_prefix(self) -> str:
        """The stable layer the system prompt starts with (identity, guidance, skills index,
        environment), so a cache layout can give it its own block; ``""`` when unknown (a
        prompt replayed from a store that does not keep the split point)."""
        prompt = self.system_prompt
        built = self._built
        if built is None or built.prompt != prompt:
            return ""
        if built.origin == "stored":
            return prompt[: self._stored_prefix]
        return _stable_prefix(built)

    def request_system_text(self, ephemeral: str | None = None) -> str:
        """The system text sent with a request: the prompt plus the ephemeral prompt, if any.

        ``ephemeral`` defaults to ``agent.system_prompt`` (or ``$HERMES_EPHEMERAL_SYSTEM_PROMPT``);
        it is added at call time only and never stored.
        """
        prompt = self.system_prompt
        extra = self.config.agent.system_prompt if ephemeral is None else ephemeral
        if extra:
            return (prompt + "\n\n" + extra).strip()
        return prompt

    @property
    def warnings(self) -> list[HostWarning]:
        """Warnings not yet returned (truncations, unreadable files, plugin failures), in order.

        Reading drains them: each warning is returned once.
        """
        with self._lock:
            drained = list(self._pending_warnings)
            self._pending_warnings.clear()
        return drained

    def _restore_or_build(self, bucket: list[HostWarning]) -> None:
        if self._restore_pending:
            self._restore_pending = False
            stored = self._read_stored()
            if stored:
                reason = stale_reason(stored, model=self.model, provider=self.provider)
                if reason is None and was_masked(stored):
                    reason = "the stored copy has secrets masked"
                if reason is None:
                    self._prompt = stored
                    self._built = stored_prompt(
                        stored, model=self.model, tokenizer=self.host.tokenizer(self.model)
                    )
                    self._stored_prefix = self._read_stored_prefix(len(stored))
                    log.info("stored_prompt_reused", session_id=self.session_id, chars=len(stored))
                    return
                log.info("stored_prompt_stale", session_id=self.session_id, reason=reason)
        built = assemble(self.host, self.prompt_context(), system_message=self.system_message)
        bucket.extend(built.warnings)  # the build collected its own; keep them in order
        self._built = built
        self._prompt = built.prompt
        log.debug("system_prompt_built", session_id=self.session_id, chars=len(built.prompt))
        self._persist(built.prompt)

    def _read_stored(self) -> str | None:
        try:
            stored = self.store.get_prompt(self.session_id)
        except Exception as exc:  # noqa: BLE001 - a broken store costs the reuse, not the session
            record_warning(
                "session_store_read_failed",
                f"could not read the stored prompt of session {self.session_id}: "
                f"{type(exc).__name__}: {exc}; rebuilding",
                session_id=self.session_id,
            )
            return None
        return stored if isinstance(stored, str) else None

    def _read_stored_prefix(self, limit: int) -> int:
        # Optional store capability: the split point kept with the prompt (see the hookspec).
        reader = getattr(self.store, "get_static_prefix", None)
        if not callable(reader):
            return 0
        try:
            chars = reader(self.session_id)
        except Exception:  # noqa: BLE001 - without it the replay is one block: still correct
            return 0
        return chars if isinstance(chars, int) and 0 < chars <= limit else 0

    def _persist(self, prompt: str) -> None:
        if not self.persist or self.store is None:
            return
        built = self._built
        # The stored copy has users' secrets masked; the live prompt keeps them.
        copy = stored_copy(built, prompt, _stable_prefix(built) if built is not None else "")
        warn_masked(copy, where=repr(self.store))
        try:
            if callable(getattr(self.store, "get_static_prefix", None)):
                self.store.put_prompt(
                    self.session_id, copy.text, model=self.model, provider=self.provider,
                    static_prefix=copy.static_prefix,
                )
                return
            self.store.put_prompt(self.session_id, copy.text, model=self.model, provider=self.provider)
        except Exception as exc:  # noqa: BLE001 - the prompt is still good for this process
            record_warning(
                "session_store_write_failed",
                f"could not store the prompt of session {self.session_id}: "
                f"{type(exc).__name__}: {exc}; it will be rebuilt by the next process",
                session_id=self.session_id,
            )

    # --- requests -----------------------------------------------------------------------

    def request(
        self,
        messages: Sequence[Any],
        *,
        provider: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        ephemeral: str | None = None,
        max_tokens: int | None = None,
        api: str | None = None,
    ) -> dict[str, Any]:
        """Keyword arguments for the provider's official SDK, as they are:
        ``client.chat.completions.create(**session.request(messages))``, with
        ``provider="anthropic"`` ``client.messages.create(**...)``, and with ``api="responses"``
        OpenAI's ``client.responses.create(**...)`` (``hermes_core.responses``: ``instructions``,
        ``input`` items - Responses items of the history sent back as they came while no pass
        changed them -, function tools, ``prompt_cache_key``, ``max_output_tokens``).

        System prompt (plus ``ephemeral``), canonical messages (SDK objects accepted), tools
        (catalog keys such as ``source`` removed) and the cache layout: Anthropic
        ``cache_control`` breakpoints, OpenAI ``prompt_cache_key``. ``max_tokens`` defaults to
        the session's; Anthropic requires one (``hermes_core.sdk.ANTHROPIC_DEFAULT_MAX_TOKENS``).
        """
        from hermes_core.payload import release_request, request_breakpoints
        from hermes_core.sdk import sdk_kwargs, wire_format

        if api is not None:
            if api != "responses":
                raise ValueError(f"api must be None (the provider's own API) or 'responses', not {api!r}")
            return self._responses_request(messages, provider, tools, ephemeral, max_tokens)

        # copy=False: the SDK conversion copies the messages anyway (one list copy, not two);
        # the laid-out list goes back to the message cache for the next request.
        payload = self._payload(
            messages, provider=provider, tools=tools, ephemeral=ephemeral, copy=False,
            count_responses=True,
        )
        notes: dict[str, int] = {}
        try:
            users, layout = request_breakpoints(payload)
            out = sdk_kwargs(payload, max_tokens=max_tokens or self.max_tokens, notes=notes,
                             breakpoints=(users, layout))
        finally:
            release_request(self, payload)
        self._report_request(report_of(wire_format(payload.get("provider")), notes,
                                       user_breakpoints=users, layout_breakpoints=layout))
        return out

    def _report_request(self, report: RequestReport) -> None:
        # A warning when the request lost something (a placeholder, a drop) and what it lost
        # differs from the previous request's: the same old image omitted on every turn is
        # said once, not once per turn; ``last_request_report`` always has the counts.
        previous = self.last_request_report
        self.last_request_report = report
        if report.lossless:
            return
        if previous is not None and (previous.target, previous.placeholders, previous.dropped) == (
                report.target, report.placeholders, report.dropped):
            return
        with collecting() as bucket:
            record_warning(
                "request_content_converted",
                report.describe() + " (see Session.last_request_report)",
                target=report.target,
                placeholders=dict(report.placeholders),
                dropped=dict(report.dropped),
            )
        with self._lock:
            self._pending_warnings.extend(bucket)

    def _warn_responses_left_out(self, messages: list[dict[str, Any]]) -> None:
        # A Chat or Anthropic request of a history with Responses items: what it cannot carry
        # (reasoning items, server-side items) is counted, never left out silently.
        # Counted over the new messages only (``LeftOutCounter``): this runs on every request.
        from hermes_core.responses import Conversion, LeftOutCounter

        with self._lock:
            counter = self.__dict__.get("_responses_counter")
            if counter is None:
                counter = self._responses_counter = LeftOutCounter()
            # After the request's sync: the message cache says which messages it (re)processed
            # since the last count (when it describes this list), else a comparison decides.
            # (build_request syncs this list whenever there is a system text; the ends are
            # checked in case it did not).
            src = self.message_cache.src
            synced = len(src) == len(messages) and (
                not messages or (src[0] is messages[0] and src[-1] is messages[-1]))
            low = self.message_cache.take_low_water()
            # The mark speaks of the counted list only when the last count's list was the
            # cache's too; otherwise one comparison decides.
            trusted = synced and counter.follows_cache
            counter.follows_cache = synced
            counts = counter.update(messages, low if trusted else None)
            # Said once per change: the same history's next turn leaves out the same items.
            if not counts or counts == self.__dict__.get("_responses_left_out"):
                return
            self._responses_left_out = counts
        self._collect(
            record_warning, "responses_items_not_sent",
            "this request is not a Responses request; of the Responses items in the history "
            "it leaves out " + Conversion(counts=counts).describe(), **counts,
        )

    def _responses_request(
        self, messages: Sequence[Any], provider: str | None,
        tools: Sequence[Mapping[str, Any]] | None, ephemeral: str | None, max_tokens: int | None,
    ) -> dict[str, Any]:
        from hermes_core.payload import build_request
        from hermes_core.responses import InputCache, responses_kwargs
        from hermes_core.sdk import wire_format

        name = provider if provider is not None else self.provider
        if wire_format(name) == "anthropic":  # the Responses API is OpenAI's: its cache layout
            name = "openai"
        try:
            checked = self._collect(
                self._pairing.check, self._collect(self._normalized, messages, prove=True),
                where="Session.request",
            )
            payload = build_request(self, checked, provider=name, tools=tools, ephemeral=ephemeral)
        finally:
            self.message_cache.forget_proof()
        with self._lock:  # each message's items are kept for the next turn (InputCache)
            cache = self.__dict__.get("_responses_input")
            if cache is None:
                cache = self._responses_input = InputCache()
            out, conversion = responses_kwargs(
                payload, checked, max_output_tokens=max_tokens or self.max_tokens, cache=cache
            )
        # Said once per change: the next turn of the same history converts the same things.
        if conversion.counts and conversion.counts != self.__dict__.get("_responses_converted"):
            self._responses_converted = dict(conversion.counts)
            self._collect(
                record_warning, "responses_conversion",
                "the Responses request could not carry everything as it was: "
                + conversion.describe(), **conversion.counts,
            )
        return out

    def payload(
        self,
        messages: Sequence[Any],
        *,
        provider: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        ephemeral: str | None = None,
    ) -> Any:
        """The canonical provider-agnostic payload with its cache layout, before the wire
        conversion (see ``hermes_core.payload.build_request``): what cache reports price.

        ``messages`` that break the tool-call pairing rule are repaired (and reported in
        ``warnings``) before the payload is built, compressed or not.
        """
        return self._payload(messages, provider=provider, tools=tools, ephemeral=ephemeral)

    def _payload(
        self, messages: Sequence[Any], *, provider: str | None,
        tools: Sequence[Mapping[str, Any]] | None, ephemeral: str | None, copy: bool = True,
        count_responses: bool = False,
    ) -> Any:
        from hermes_core.payload import build_request

        try:
            checked = self._collect(
                self._pairing.check, self._collect(self._normalized, messages, prove=True),
                where="Session.request",
            )
            payload = build_request(
                self, checked, provider=provider, tools=tools, ephemeral=ephemeral, copy=copy
            )
            if count_responses:
                self._warn_responses_left_out(checked)
            return payload
        finally:
            self.message_cache.forget_proof()

    def _normalized(self, messages: Sequence[Any], *, prove: bool = False) -> list[dict[str, Any]]:
        # SDK objects as dicts; a turn looks at the new messages only (hermes_core.history).
        # ``prove``: this call syncs the message cache next and may reuse the comparison.
        from hermes_core.sdk import normalize_messages

        with self._lock:
            return self.message_cache.normalized(messages, normalize_messages, prove=prove)

    # --- compression in the request loop (see hermes_core.compaction) --------------------

    def _collect(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        # Engine and plugin warnings raised during a step reach ``Session.warnings``; a remote
        # store's calls of the step share one time budget.
        if self._store_budget is not None:
            self._store_budget.start_turn()
        with collecting() as bucket:
            try:
                return fn(*args, **kwargs)
            finally:
                if bucket:  # most steps warn nothing: no lock to take
                    with self._lock:
                        self._pending_warnings.extend(bucket)

    def before_request(
        self, messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """The messages to send: compressed first when the request would reach the threshold.

        Rough estimate of system prompt + messages + tool schemas, anchored on the provider's
        last reported prompt tokens when there are any; at most ``compression.max_attempts``
        rounds, stopping when one makes no progress; deferred for one turn right after a
        compression and while the estimate has grown less than max(4,096, 5% of the threshold)
        since the provider last proved the prompt fits. The input list is never mutated.

        A list that breaks the tool-call pairing rule is repaired first (``tool_pairs_repaired``
        warning; see ``hermes_core.pairing.repair_pairing``); checking it costs O(new messages)
        per turn when the host appends to the list it got back.
        """
        try:
            # Normalising may warn too (a conversion that replaced something): collected.
            normalized = self._collect(self._normalized, messages, prove=True)
            return self._collect(self._before_request, normalized, tools)
        finally:
            self.message_cache.forget_proof()

    def _before_request(
        self, messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]] | None
    ) -> list[dict[str, Any]]:
        checked = self._pairing.check(messages, where="Session.before_request")
        out = self._loop.before_request(checked, tools)
        if out is not checked:
            out = self._pairing.check(out, where="compression")
        return out

    def after_response(self, usage: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Feed the provider's usage to the engine; the messages to continue with.

        ``usage`` is a dict or SDK object with ``prompt_tokens`` / ``input_tokens``, or the whole
        SDK response (``ChatCompletion``, Anthropic ``Message``). Only prompt tokens decide:
        completion and reasoning tokens never trigger compression. SDK message objects in
        ``messages`` come back as dicts (``hermes_core.sdk.normalize_messages``). Over the
        threshold the messages come back compressed, otherwise unchanged.
        """
        from hermes_core.sdk import response_usage

        return self._collect(
            self._loop.after_response, response_usage(usage),
            self._collect(self._normalized, messages),
        )

    def on_provider_error(
        self, error: BaseException, messages: list[dict[str, Any]]
    ) -> list[dict[str, Any]] | None:
        """Recover from a context-overflow error: the compressed messages to retry with.

        Returns ``None`` when ``error`` is not an overflow (HTTP 413, "context length
        exceeded", "prompt is too long", "maximum context length", the long-context 429).
        Raises ``ContextOverflowError`` when compression is off (telling the user to run
        /compress, start a new session or pick a larger-window model) or cannot help.
        """
        from hermes_core.sdk import normalize_messages

        return self._collect(self._loop.on_provider_error, error, normalize_messages(messages))

    def compress(
        self,
        messages: list[dict[str, Any]],
        focus_topic: str | None = None,
        force: bool = True,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> ManualCompression:
        """The manual ``/compress [focus]``: clears cooldowns, answers "nothing to compress"
        without an LLM call when everything is protected, and returns the new messages with
        feedback for the user (``result.feedback.text``)."""
        from hermes_core.intake import read_history

        # One pass over the history reads what the steps need of it (hermes_core.intake): the
        # loop holds the estimate for its feedback and the engine's report, the pairing proof
        # for the engine's input check and, when a plugin records compactions (the archive),
        # the columns it reads (hermes_core.history_scan).
        self.system_prompt  # noqa: B018 - built now if not yet (plugins' hooks, files)
        recorded = bool(self.host.pm.hook.hermes_session_compacted.get_hookimpls())
        found = read_history(messages, scan=recorded)
        return self._collect(
            self._loop.manual, found.messages, focus_topic=focus_topic, force=force, tools=tools,
            estimate=found.estimate, proven=found.proven, scan=found.scan,
        )

    # --- engine state across processes (ContextEngine.export_state / import_state) -------

    def _restore_engine_state(self) -> None:
        reader = getattr(self.store, "get_engine_state", None)
        if not callable(reader):
            return
        try:
            self._adopt_engine_state(reader(self.session_id), "engine_state_restored")
        except Exception as exc:  # noqa: BLE001 - a fresh engine state is still correct
            record_warning(
                "engine_state_read_failed",
                f"could not restore the {self.engine.name} engine's state of session "
                f"{self.session_id}: {type(exc).__name__}: {exc}; starting fresh",
                session_id=self.session_id,
            )

    def refresh_engine_state(self) -> None:
        """Under the compaction lease: take the stored engine state when another worker wrote
        it after this Session last read or wrote it (its compaction happened since), so the
        counters and blocks this compaction updates are the newest and no update is lost. A
        state this Session wrote itself is left alone (in-memory verdicts since are newer)."""
        reader = getattr(self.store, "get_engine_state", None)
        if not self.persist or not callable(reader):
            return
        try:
            found = reader(self.session_id)
        except Exception:  # noqa: BLE001 - the lease was had; the in-memory state stands
            log.warning("engine_state_refresh_failed", session_id=self.session_id, exc_info=True)
            return
        self._adopt_engine_state(found, "engine_state_refreshed")

    def _adopt_engine_state(self, found: tuple[str, Any] | None, event: str) -> None:
        # A stored state of this engine that differs from what this Session last read or wrote.
        if found is None or found[0] != self.engine.name or found[1] == self._engine_state_seen:
            return
        self.engine.import_state(found[1])
        self._engine_state_seen = found[1]
        log.debug(event, session_id=self.session_id, engine=found[0])

    def save_engine_state(self) -> None:
        """Store the engine's ``export_state()`` with the session (after each compaction)."""
        writer = getattr(self.store, "put_engine_state", None)
        if not self.persist or not callable(writer):
            return
        try:
            state = self.engine.export_state()
            writer(self.session_id, self.engine.name, state)
            self._engine_state_seen = json.loads(json.dumps(state))  # as a reader gets it back
        except Exception as exc:  # noqa: BLE001 - the state stays good in this process
            record_warning(
                "engine_state_write_failed",
                f"could not store the engine state of session {self.session_id}: "
                f"{type(exc).__name__}: {exc}",
                session_id=self.session_id,
            )

    # --- tool side ----------------------------------------------------------------------

    def tools_context(self) -> ToolsContext:
        # Built on every assembly; kept while what it holds is the same (by identity: a host
        # that swaps the config or the environment gets a new one).
        key = (self.window, self.config, self.session_id, self.home, self.environment, self.host)
        memo = self.__dict__.get("_tools_context")
        if memo is not None and all(map(operator.is_, memo[0], key)):
            return memo[1]  # type: ignore[no-any-return]
        ctx = ToolsContext(
            context_length=key[0], config=key[1], session_id=key[2], home=key[3],
            environment=key[4], host=key[5], session=self,
        )
        self._tools_context = (key, ctx)
        return ctx

    def assemble_tools(self, tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tool definitions the model sees this turn (deferred disclosure, idempotent).

        ``tools`` is the whole live catalog; the session keeps it, so the bridge tools answered
        by ``handle_tool_call`` search, describe and call exactly what this turn offered.
        """
        self._tool_catalog = tools
        return self._collect(self.host.tools_assemble, tools, self.tools_context())

    @property
    def tool_catalog(self) -> Sequence[Any]:
        """The live tool catalog last given to ``assemble_tools`` (``()`` before the first)."""
        catalog = self._tool_catalog
        return () if catalog is None else catalog

    def process_tool_result(
        self, content: Any, *, tool_name: str, tool_call_id: str = "",
        arguments: Mapping[str, Any] | None = None,
    ) -> Any:
        """One tool result through the output limits and the spill-to-file pipeline."""
        ctx = ToolCallContext(
            tool_name=tool_name, tool_call_id=tool_call_id, arguments=dict(arguments or {}),
            home=self.home, context_length=self.window,
            config=self.config, environment=self.environment, host=self.host,
        )
        return self._collect(self.host.tool_result_process, content, ctx)

    def fit_tool_results(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A turn's tool result messages fitted to the per-turn budget (largest spill first)."""
        return self._collect(self.host.tool_results_turn_budget, results, self.tools_context())

    def handle_tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        tool_call_id: str = "",
        invoke: Callable[[str, dict[str, Any]], Any] | None = None,
    ) -> Any:
        """Answer a call of a tool the framework added (bridge and recall tools).

        ``arguments`` may be the call's JSON text. ``tool_search`` / ``tool_describe`` /
        ``tool_call`` work on the catalog last given to ``assemble_tools``; ``tool_call`` runs
        the real tool through ``invoke`` (this call's, else the one given to ``Session.open``)
        after checking its arguments against the tool's schema. Any other tool (the host's own,
        which no plugin answers) is run through ``invoke`` too and its result goes through
        ``process_tool_result`` (output limits, spill to file), so one call answers every tool
        call of a reply; its exceptions propagate. Returns the result for the model; raises
        ``KeyError`` when no plugin answers ``name`` and there is no ``invoke``.
        """
        args, problem = _parse_tool_arguments(arguments)
        if args is None:
            return json.dumps({"error": f"{name}: {problem}"})
        ctx = ToolCallContext(
            tool_name=name, tool_call_id=tool_call_id, arguments=args, home=self.home,
            context_length=self.window, config=self.config,
            environment=self.environment, host=self.host, session_id=self.session_id,
            session=self, invoke=invoke if invoke is not None else self.invoke,
        )
        answer = self._collect(self.host.tool_call, name, args, ctx)
        if answer is not None:
            return answer
        if ctx.invoke is None:
            raise KeyError(f"no plugin answers the tool {name!r} and no invoke was given")
        result = ctx.invoke(name, args)
        return self.process_tool_result(
            result, tool_name=name, tool_call_id=tool_call_id, arguments=args
        )

    # --- a whole turn ---------------------------------------------------------------------

    def create(
        self, client: Any, messages: Sequence[Any], *, tools: Sequence[Mapping[str, Any]] | None = None,
        max_steps: int = 50, max_tokens: int | None = None, api: str | None = None, **create_kwargs: Any,
    ) -> TurnResult:
        """Run one agent turn against an official SDK client and return a ``TurnResult``.

        Until the model answers without calling a tool (at most ``max_steps`` provider calls):
        ``assemble_tools(tools)``, ``before_request``, ``client.chat.completions.create`` (or
        ``client.messages.create`` for ``provider="anthropic"``, ``client.responses.create`` with
        ``api="responses"``) with ``request``'s keywords plus
        ``create_kwargs`` (``temperature``, ``reasoning_effort`` ...), ``after_response``, and each
        tool call answered by ``handle_tool_call`` (through ``invoke``). An overflow error is
        retried with ``on_provider_error``'s compressed messages; every other error is raised.
        ``messages`` is not changed. See ``hermes_core.turn``.
        """
        from hermes_core.turn import run_turn

        return run_turn(self, client, messages, tools=tools, max_steps=max_steps, max_tokens=max_tokens,
                        api=api, **create_kwargs)

    # --- end ----------------------------------------------------------------------------

    def close(self, messages: list[dict[str, Any]] | None = None) -> None:
        """End the session: the engine's ``on_session_end`` runs once (with the final messages)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with collecting() as bucket:
            self.host.engine_step(
                "on_session_end", self.engine, session_id=self.session_id, messages=list(messages or [])
            )
            for name, state in list(self.plugin_state.items()):
                closer = getattr(state, "close", None)
                if not callable(closer):
                    continue
                try:
                    closer()
                except Exception as exc:  # noqa: BLE001 - reported, the session still closes
                    record_warning(
                        "plugin_state_close_failed",
                        f"plugin state {name!r} of session {self.session_id} could not be closed: "
                        f"{type(exc).__name__}: {exc}",
                        session_id=self.session_id, plugin=name,
                    )
        with self._lock:
            self._pending_warnings.extend(bucket)
        # The prompt and store workers leave once idle; wait for those on their way out, so a
        # closed session leaves no thread of ours behind.
        self.host.join_idle_workers()
        join_idle_store_workers()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session(session_id={self.session_id!r}, model={self.model!r}, platform={self.platform!r})"


def _parse_tool_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str]:
    if arguments is None or arguments == "":
        return {}, ""
    # A model writes the arguments: their depth is bounded before anything recursive (the
    # parser, the schema check, deepcopy, repr) sees them (hermes_core.bounded).
    too_deep = f"arguments are nested more than {bounded.MAX_DEPTH} levels deep"
    if isinstance(arguments, str):
        try:
            arguments = bounded.loads(arguments)  # the depth is checked on the text
        except bounded.TooDeepError:
            return None, too_deep
        except json.JSONDecodeError as exc:
            return None, f"arguments are not valid JSON ({exc.msg})"
    elif bounded.value_depth(arguments) > bounded.MAX_DEPTH:  # the host's own object
        return None, too_deep
    if arguments.__class__ is not dict and not isinstance(arguments, Mapping):
        return None, f"arguments must be a JSON object, got {type(arguments).__name__}"
    return dict(arguments), ""


def _stable_prefix(built: BuiltPrompt) -> str:
    """The stable layer of a fresh build when the prompt starts with it, else ``""``."""
    stable = built.layers.get("stable", "")
    return stable if stable and built.prompt.startswith(stable) else ""
