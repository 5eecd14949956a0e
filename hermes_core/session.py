"""``Session``: what an agent builder holds for one conversation.

The system prompt is built on first use and replayed byte for byte (provider prefix caches match
exact bytes) until ``invalidate_system_prompt`` (after a compression); it is stored with the
session id, so another worker opening that id replays the same bytes (``prompt_store``).
"""

from __future__ import annotations

import functools
import json
import operator
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core import bounded
from hermes_core.assembler import BuiltPrompt, assemble
from hermes_core.compaction import CompactionLoop
from hermes_core.compaction_feedback import CompactionEvent, ManualCompression
from hermes_core.config import Config
from hermes_core.config_cache import environ_copy
from hermes_core.conversion import RequestReport, report_of
from hermes_core.diagnostics import HostWarning, collecting, record_warning
from hermes_core.history import ProcessedHistory
from hermes_core.intake import read_history
from hermes_core.logging import get_logger
from hermes_core.messages import validate_messages
from hermes_core.pairing import PairingGuard
from hermes_core.payload import lay_out_request, release_request, request_breakpoints, tool_name
from hermes_core.prompt_store import restore_prompt, stable_prefix, store_prompt
from hermes_core.records import PromptContext, ToolCallContext, ToolsContext
from hermes_core.redaction import Redactor
from hermes_core.responses import Conversion, ResponsesMemory, responses_kwargs
from hermes_core.sdk import normalize_messages, response_usage, sdk_kwargs, wire_format
from hermes_core.session_open import Clock, open_session, tool_names
from hermes_core.session_options import SessionOptions, given_keywords
from hermes_core.store_guard import budgeted
from hermes_core.store_guard import join_idle as join_idle_store_workers
from hermes_core.turn import run_turn

if TYPE_CHECKING:
    from hermes_core.engine import ContextEngine
    from hermes_core.host import PluginHost
    from hermes_core.model_data import ModelInfo
    from hermes_core.payload import BuiltRequest
    from hermes_core.turn import TurnResult

log = get_logger("hermes_core.session")

_T = TypeVar("_T")
#: New messages are checked for shapes a provider refuses; a missing or unknown role passes.
_CHECK_SHAPES = functools.partial(validate_messages, roles=False)


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
        self.tools = tool_names(options.tools)
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
        #: What Responses requests keep between turns (``hermes_core.responses``).
        self._responses = ResponsesMemory()
        if restore:  # a known session id with a store: the engine's state as stored, if any
            self._restore_engine_state()

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
        env = environ_copy() if options.env is None else dict(options.env)
        with collecting() as bucket:
            session = open_session(cls, options, env, bucket)
        session._pending_warnings.extend(bucket)
        log.debug("session_opened", session_id=session.session_id, model=options.model,
                  provider=options.provider, platform=options.platform)
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
        from hermes_core.model_data import lookup  # the snapshot module loads on first need

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
        return stable_prefix(built)

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
            found = restore_prompt(self.store, self.session_id, model=self.model, provider=self.provider,
                                   tokenizer=lambda: self.host.tokenizer(self.model))
            if found is not None:
                self._prompt, self._built, self._stored_prefix = found
                return
        built = assemble(self.host, self.prompt_context(), system_message=self.system_message)
        bucket.extend(built.warnings)  # the build collected its own; keep them in order
        self._built = built
        self._prompt = built.prompt
        log.debug("system_prompt_built", session_id=self.session_id, chars=len(built.prompt))
        if self.persist and self.store is not None:
            store_prompt(self.store, self.session_id, built, model=self.model, provider=self.provider)

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
        if api is not None:
            if api != "responses":
                raise ValueError(f"api must be None (the provider's own API) or 'responses', not {api!r}")
            return self._responses_request(messages, provider, tools, ephemeral, max_tokens)

        # copy=False: the SDK conversion copies the messages anyway (one list copy, not two);
        # the laid-out list goes back to the message cache for the next request.
        built, _ = self._checked_payload(
            messages, provider=provider, tools=tools, ephemeral=ephemeral, copy=False,
            count_responses=True,
        )
        payload = built.payload
        notes: dict[str, int] = {}
        try:
            users, layout = request_breakpoints(built)
            out = sdk_kwargs(payload, max_tokens=max_tokens or self.max_tokens, notes=notes,
                             breakpoints=(users, layout), laid=built.laid)
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
        # (reasoning items, server-side items) is counted over the new messages only (this runs
        # on every request), never left out silently, and said once per change.
        with self._lock:
            counts = self._responses.left_out.update_after_sync(messages, self.message_cache)
            if not self._responses.news("left_out", counts):
                return
        self._collect(
            record_warning, "responses_items_not_sent",
            "this request is not a Responses request; of the Responses items in the history "
            "it leaves out " + Conversion(counts=counts).describe(), **counts,
        )

    def _responses_request(
        self, messages: Sequence[Any], provider: str | None,
        tools: Sequence[Mapping[str, Any]] | None, ephemeral: str | None, max_tokens: int | None,
    ) -> dict[str, Any]:
        name = provider if provider is not None else self.provider
        if wire_format(name) == "anthropic":  # the Responses API is OpenAI's: its cache layout
            name = "openai"
        built, checked = self._checked_payload(messages, provider=name, tools=tools, ephemeral=ephemeral)
        payload = built.payload
        with self._lock:  # each message's items are kept for the next turn (InputCache)
            out, conversion = responses_kwargs(payload, checked, max_output_tokens=max_tokens or self.max_tokens,
                                               cache=self._responses.inputs)
            said = self._responses.news("converted", conversion.counts)
        if said:  # the next turn of the same history converts the same things: said once
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
        return self._checked_payload(messages, provider=provider, tools=tools, ephemeral=ephemeral)[0].payload

    def _checked_payload(
        self, messages: Sequence[Any], *, provider: str | None,
        tools: Sequence[Mapping[str, Any]] | None, ephemeral: str | None, copy: bool = True,
        count_responses: bool = False,
    ) -> tuple[BuiltRequest, list[dict[str, Any]]]:
        # The request built and the messages it was built from: normalised, pairing checked.
        try:
            checked = self._collect(
                self._pairing.check, self._collect(self._normalized, messages, prove=True),
                where="Session.request",
            )
            built = lay_out_request(
                self, checked, provider=provider, tools=tools, ephemeral=ephemeral, copy=copy
            )
            if count_responses:
                self._warn_responses_left_out(checked)
            return built, checked
        finally:
            self.message_cache.forget_proof()

    def _normalized(self, messages: Sequence[Any], *, prove: bool = False) -> list[dict[str, Any]]:
        # SDK objects as dicts; a turn looks at the new messages only (hermes_core.history).
        # ``prove``: this call syncs the message cache next and may reuse the comparison.
        with self._lock:
            # The new messages are checked as they come: a number for content or tool_calls that
            # are not a list of objects is an InvalidMessagesError naming the message, never a
            # request the provider refuses. A missing or unknown role is sent as user text,
            # counted (docs/message-model.md).
            return self.message_cache.normalized(messages, normalize_messages, prove=prove,
                                                 check=_CHECK_SHAPES)

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
        by ``handle_tool_call`` search, describe and call exactly what this turn offered. The
        engine's own tools (``ContextEngine.get_tool_schemas``) come last, unless the host's
        catalog already has a tool of that name.
        """
        self._tool_catalog = tools
        assembled = self._collect(self.host.tools_assemble, tools, self.tools_context())
        engine_tools = self._engine_tools()
        if not engine_tools:
            return assembled
        taken = {tool_name(t) for t in assembled}
        return [*assembled, *(t for name, t in engine_tools.items() if name not in taken)]

    def _engine_tools(self) -> dict[str, dict[str, Any]]:
        # The selected engine's tools by name (the default engine has none).
        schemas = self.engine.get_tool_schemas() or ()
        return {name: dict(t) for t in schemas if isinstance(t, Mapping) and (name := tool_name(t))}

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
        """Answer a call of a tool the framework added (bridge and recall tools, the engine's).

        ``arguments`` may be the call's JSON text. ``tool_search`` / ``tool_describe`` /
        ``tool_call`` work on the catalog last given to ``assemble_tools``; ``tool_call`` runs
        the real tool through ``invoke`` (this call's, else the one given to ``Session.open``)
        after checking its arguments against the tool's schema. Any other tool (the host's own,
        which no plugin answers) is run through ``invoke`` too and its result goes through
        ``process_tool_result`` (output limits, spill to file), so one call answers every tool
        call of a reply; its exceptions propagate. Returns the result for the model; raises
        ``KeyError`` when no plugin answers ``name`` and there is no ``invoke``.
        """
        args, problem = bounded.tool_arguments(arguments)
        if args is None:
            return json.dumps({"error": f"{name}: {problem}"})
        if name in self._engine_tools() and all(tool_name(t) != name for t in self.tool_catalog):
            return self.engine.handle_tool_call(name, args)
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
