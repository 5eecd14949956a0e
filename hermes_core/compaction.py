"""Compression in the request loop: when it fires, what the host is told, what /compress says.

``Session.before_request``, ``after_response``, ``on_provider_error`` and ``compress`` delegate
here; every decision runs the engine's lifecycle through its hooks and names the counter that
made it (``provider``, ``provider+estimate``, ``estimate``: docs/compaction.md). After a
compression the prompt is rebuilt once and the session id stays (``--resume`` keeps working).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from hermes_core.compaction_feedback import CompactionEvent, ManualCompression, Phase, summarize_manual
from hermes_core.compaction_fit import oversized_user, settle_fit
from hermes_core.diagnostics import record_warning
from hermes_core.engine import CompressionReport, ContextEngine, KnownInput, coerce_usage
from hermes_core.errors import ContextOverflowError
from hermes_core.history_scan import HistoryScan
from hermes_core.lease import LeaseHeld, LeaseUnavailable, compaction_lease, warn_held, warn_unlocked
from hermes_core.logging import get_logger
from hermes_core.overflow import classify_overflow, reported_limit
from hermes_core.tokens import (
    RequestCounter,
    estimate_request_tokens,
    estimate_tokens,
    estimate_tools_tokens,
)

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.host import PluginHost
    from hermes_core.store_guard import TurnBudget

log = get_logger("hermes_core.compaction")

#: Progress: fewer messages, or the estimate below 95% of what it was (spec §15.1).
PROGRESS_RATIO = 0.95
#: A rough estimate (no provider figure yet) at this share of the threshold or above is
#: checked by counting: chars/4 runs low on code, JSON and non-English text. Below it, a turn
#: costs only the estimate (the steady, non-compressing turn stays cheap).
NEAR_THRESHOLD = 0.85


# --- the loop -----------------------------------------------------------------------------


def _tokens_short(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 10_000 else f"{n:,}"


class CompactingSession(Protocol):
    """What compaction uses of ``session.Session`` (which drives it: it stands on this module)."""

    engine: ContextEngine
    host: PluginHost
    config: Config
    session_id: str
    model: str
    provider: str
    max_tokens: int | None
    store: Any
    persist: bool
    _store_budget: TurnBudget | None

    @property
    def system_prompt(self) -> str: ...
    @property
    def _lock(self) -> AbstractContextManager[Any]: ...
    def invalidate_system_prompt(self) -> None: ...
    def refresh_engine_state(self) -> None: ...
    def save_engine_state(self) -> None: ...


class CompactionLoop:
    """The per-session state of compression in the request loop (one per ``Session``)."""

    def __init__(self, session: CompactingSession, on_status: Callable[[CompactionEvent], None] | None) -> None:
        self.session = session
        self.on_status = on_status
        # (rough estimate of the request sent, prompt tokens the provider reported for it)
        self.anchor: tuple[int, int] | None = None
        self.last_request_rough = 0
        self.last_tools: Sequence[Mapping[str, Any]] | None = None
        self._counter: RequestCounter | None = None
        self._counter_key: tuple[str, str] | None = None
        #: The counted fit of the last compaction (``check_fit``), overlaid on the report.
        self.fit: dict[str, Any] | None = None
        #: Whether the last engine step was skipped (the compaction lease was held elsewhere).
        self.skipped = False

    # -- figures

    def rough(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None,
        *, keep: bool = True, estimate: int | None = None,
    ) -> int:
        """``estimate_request_tokens``, with each message's estimate kept in the session's
        ``message_cache`` while the message is unchanged (a turn estimates the new ones).

        ``keep=False``: a list about to be replaced (the input of a manual compression) that
        the cache does not already hold is estimated in one plain pass instead: syncing it
        would build every message's wire form only to throw it away (a fresh session's
        ``/compress`` of 10k messages: one chars/4 pass instead of 3-4); ``estimate``: its
        ``estimate_messages_tokens`` when the caller summed it already.
        """
        session = self.session
        cache = getattr(session, "message_cache", None)
        if cache is None or (not keep and not _extends(cache.src, messages)):
            if estimate is not None:
                return estimate_tokens(session.system_prompt) + estimate + estimate_tools_tokens(tools)
            return estimate_request_tokens(messages, system_prompt=session.system_prompt, tools=tools)
        prompt = session.system_prompt
        with session._lock:
            cache.sync(messages)
            total = cache.message_tokens()
        return estimate_tokens(prompt) + int(total) + estimate_tools_tokens(tools)

    def counter(self) -> RequestCounter:
        """The request counter for the session's model (``hermes_core.tokens.counting_method``:
        a plugin's tokenizer, the model's own encoding, or cl100k_base with a stated margin)."""
        session = self.session
        key = (session.model, session.provider)
        if self._counter is None or self._counter_key != key:
            try:
                tokenizer = session.host.tokenizer(session.model)
            except Exception:  # noqa: BLE001 - a failing tokenizer plugin: count with ours
                log.warning("tokenizer_unavailable", model=session.model, exc_info=True)
                tokenizer = None
            self._counter = RequestCounter(session.model, session.provider, tokenizer)
            self._counter_key = key
        return self._counter

    def counted(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> int:
        """The whole request counted (system prompt, messages, tool schemas), margin included."""
        return self.counter().count(messages, system_prompt=self.session.system_prompt, tools=tools)

    def check_fit(
        self, messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]] | None, phase: Phase,
    ) -> list[dict[str, Any]]:
        """After a compaction: count the request; over the threshold, run the engine's further
        passes (``fit_to``: oversized results anywhere, then the tail) and count again; still
        over, the outcome is ``would_not_fit`` (report status and a warning), never a silent
        ``compressed``. The figures go into the report (``CompressionReport.tokens_after``)."""
        session = self.session
        fixed = estimate_tokens(session.system_prompt) + estimate_tools_tokens(tools)

        def further(current: list[dict[str, Any]], target: int, tokens: int) -> list[dict[str, Any]]:
            return self.run_engine(current, current_tokens=tokens, focus_topic=None, force=True,
                                   phase=phase, fit_target=target)

        messages, self.fit = settle_fit(
            session.engine, messages, self.counter(), further=further, fixed_rough=fixed,
            system_prompt=session.system_prompt, tools=tools, session_id=session.session_id,
        )
        return messages

    def oversized_user(self, messages: Sequence[Mapping[str, Any]], limit: int) -> tuple[int, int] | None:
        """``(index, tokens)`` of the largest user message when it alone is over ``limit``
        tokens, counted as requests are."""
        return oversized_user(self.counter(), messages, limit)

    def warn_oversized_user(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether a user message alone cannot fit the window; if so, said before the request
        goes out (a user message is never cut: the provider will refuse it, and
        ``on_provider_error`` then raises ``ContextOverflowError``)."""
        engine = self.session.engine
        window = int(engine.context_length or 0)
        if window <= 0:
            return False
        found = self.oversized_user(messages, window)
        if found is None:
            return False
        index, tokens = found
        record_warning(
            "user_message_too_large",
            f"user message {index} alone is ~{tokens:,} tokens, over the {window:,}-token context "
            "window: a user message is never cut, so this request cannot fit and the provider "
            "will refuse it (on_provider_error then raises ContextOverflowError); shorten the "
            "message, attach it as a file, or pick a model with a larger window",
            session_id=self.session.session_id, index=index, tokens=tokens, window=window,
        )
        return True

    def figure(self, rough: int) -> tuple[int, str]:
        if self.anchor is None:
            return rough, "estimate"
        sent, real = self.anchor
        return real + max(0, rough - sent), "provider+estimate"

    # -- status

    def emit(self, event: CompactionEvent) -> None:
        log.info(
            "context_" + event.kind if event.kind in {"compacted", "thrashing"} else "compression_" + event.kind,
            phase=event.phase, before_tokens=event.before_tokens, after_tokens=event.after_tokens,
            reason=event.reason, counter=event.counter, session=self.session.session_id,
        )
        if self.on_status is not None:
            try:
                self.on_status(event)
            except Exception:  # noqa: BLE001 - a UI callback must not break the turn
                log.warning("status_callback_failed", exc_info=True)

    def blocked(self, phase: Phase, tokens: int, reason: str, counter: str) -> None:
        engine = self.session.engine
        self.emit(CompactionEvent(
            kind="blocked", phase=phase, reason=reason, before_tokens=tokens, counter=counter,
            message=(
                f"context at ~{_tokens_short(tokens)} tokens is over the compression threshold "
                f"({_tokens_short(engine.threshold_tokens)}) but compression is blocked ({reason}); "
                "run /compress to force it or start a new session"
            ),
        ))

    # -- one compression, and what follows it

    def run_engine(
        self,
        messages: list[dict[str, Any]],
        *,
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
        phase: Phase,
        fit_target: int | None = None,
    ) -> list[dict[str, Any]]:
        """One engine step under the session's compaction lease, what it changed archived:
        ``compress``, or with ``fit_target`` the engine's further passes (``fit_to``)."""
        session = self.session
        section = session.config.session_store
        store = session.store if session.persist else None
        self.skipped = False
        try:
            # One compaction of a session at a time, whichever worker runs it (hermes_core.lease).
            with ExitStack() as stack:
                budget = session._store_budget  # a remote store's wait is bounded by the turn's
                wait = section.lease_wait_seconds if budget is None else min(
                    section.lease_wait_seconds, budget.remaining())
                try:
                    stack.enter_context(compaction_lease(
                        store, session.session_id, ttl=section.lease_ttl_seconds, wait=wait,
                    ))
                except LeaseUnavailable as unreachable:
                    if not getattr(self, "store_down", False):  # one warning per outage
                        warn_unlocked(session.session_id, unreachable)
                    self.store_down = True
                else:
                    self.store_down = False
                    session.refresh_engine_state()  # another worker's compaction since we opened
                if fit_target is not None:
                    out = session.engine.fit_to(messages, fit_target)
                else:
                    out = session.host.engine_step(
                        "compress", session.engine, messages=messages, current_tokens=current_tokens,
                        focus_topic=focus_topic, force=force,
                    )
                session.save_engine_state()  # blocks, cooldowns, counters: for the next worker
                if out is None or out is messages:
                    return messages
                # What left the context (or was rewritten) goes to the hermes_session_compacted
                # plugins (the archive: replacements get refs).
                started = time.perf_counter()
                archived = session.host.session_compacted(session, messages, out, phase)
                _note_timing(session.engine, "archive", started)
                return archived
        except LeaseHeld as held:
            self.skipped = True
            reason, message = warn_held(session.session_id, section.lease_wait_seconds, held)
            self.emit(CompactionEvent(
                kind="skipped", phase=phase, reason=reason, message=message,
                before_tokens=current_tokens or 0, before_messages=len(messages),
                after_messages=len(messages),
            ))
            return messages

    def after_compaction(self, compressed: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> None:
        """Rebuild the prompt once, tell the engine about the boundary, reset the anchor."""
        session = self.session
        session.invalidate_system_prompt()
        session.system_prompt  # noqa: B018 - rebuilt now (memory re-read), then byte-stable again
        session.host.engine_step(
            "on_session_start", session.engine, session_id=session.session_id,
            boundary_reason="compression",
        )
        rough = self.rough(compressed, tools)
        session.engine.note_compacted_size(rough)
        self.anchor = None
        self.last_request_rough = rough

    def report(self) -> CompressionReport:
        report = self.session.engine.compression_report() or CompressionReport()
        fit = self.fit
        if fit is None or report.tokens_after is not None:
            return report
        # An engine whose report is not a mapping: the loop's counted fit is overlaid.
        return attrs.evolve(
            report, tokens_after=fit["tokens_after"], counted_by=fit["counted_by"],
            threshold_tokens=fit["threshold_tokens"],
            status=report.status if fit["fits"] else "would_not_fit",
        )

    def compress_automatic(
        self,
        messages: list[dict[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        *,
        phase: Phase,
        tokens: int,
        counter: str,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        """Up to ``compression.max_attempts`` rounds, stopping when one makes no progress."""
        session = self.session
        engine = session.engine
        attempts = max(1, min(int(session.config.compression.max_attempts), 10))
        current = messages
        self.fit = None
        before_rough = self.rough(messages, tools)
        rough = before_rough
        compacted = aborted = False
        for _ in range(attempts):
            out = self.run_engine(current, current_tokens=tokens, focus_topic=None, force=force, phase=phase)
            report = self.report()
            if report.aborted:
                self.emit(CompactionEvent(
                    kind="aborted", phase=phase, reason=report.error_kind, before_tokens=tokens,
                    before_messages=len(current), after_messages=len(current), counter=counter,
                    message=(
                        "context compaction aborted: the summariser failed "
                        f"({report.error or report.error_kind or 'unknown error'}); "
                        "no messages were removed"
                    ),
                ))
                aborted = True
                break
            if out is current:
                break
            new_rough = self.rough(out, tools)
            progress = len(out) < len(current) or new_rough < rough * PROGRESS_RATIO
            current, compacted = out, True
            rough = new_rough
            if not progress or rough < engine.threshold_tokens:
                break
            tokens = rough
        if not compacted:
            if aborted or self.skipped:
                return messages  # an aborted run leaves the conversation untouched; a skipped one too
            # The engine changed nothing, yet the request was over the threshold: count it,
            # and the further passes may still make it fit; if not, it says so.
            current = self.check_fit(messages, tools, phase)
            if current is messages:
                return messages
        else:
            current = self.check_fit(current, tools, phase)
        self.after_compaction(current, tools)
        self._emit_compacted(messages, current, phase=phase, before_rough=before_rough, counter=counter)
        self._warn_thrashing(phase)
        return current

    def _emit_compacted(self, messages: list[dict[str, Any]], current: list[dict[str, Any]], *,
                        phase: Phase, before_rough: int, counter: str) -> None:
        """The event of a compaction that replaced messages (or was counted over the threshold)."""
        report = self.report()
        kind = "fallback" if report.fallback_used else (
            report.status if report.status in ("ineffective", "would_not_fit") else "compacted"
        )
        after = self.last_request_rough
        dropped = max(0, len(messages) - len(current))
        self.emit(CompactionEvent(
            kind=kind, phase=phase, before_tokens=before_rough, after_tokens=after,
            before_messages=len(messages), after_messages=len(current), dropped_messages=dropped,
            counter=counter, reason=report.error if kind == "fallback" else None,
            message=(
                f"context compacted: {_tokens_short(before_rough)} → {_tokens_short(after)} tokens "
                f"({len(messages)} → {len(current)} messages)"
                + (f"; counted {report.tokens_after:,} tokens, still over the threshold of "
                   f"{report.threshold_tokens or 0:,}: it does not fit"
                   if kind == "would_not_fit" and report.tokens_after is not None else "")
                + (" using the deterministic fallback summary because the summariser failed"
                   if kind == "fallback" else "")
            ),
        ))

    def _warn_thrashing(self, phase: Phase) -> None:
        """An event when the session compacted three times or more in the last turns."""
        engine = self.session.engine
        # every engine answers recent_compressions (the base says 0)
        count = engine.recent_compressions()
        window = int(self.session.config.compression.thrash_window_turns)
        if count >= 3:
            self.emit(CompactionEvent(
                kind="thrashing", phase=phase, reason=f"{count} in {window} turns",
                message=(
                    f"the context was compacted {count} times in the last {window} turns; "
                    "details may be lost - consider /compress with a focus or a new session"
                ),
            ))

    # -- the public steps

    def before_request(
        self, messages: list[dict[str, Any]], tools: Sequence[Mapping[str, Any]] | None
    ) -> list[dict[str, Any]]:
        session = self.session
        engine = session.engine
        self.last_tools = tools
        rough = self.rough(messages, tools)
        self.last_request_rough = rough
        if not session.config.compression.enabled:
            return messages
        tokens, counter = self.figure(rough)
        threshold = engine.threshold_tokens
        if counter == "estimate" and threshold * NEAR_THRESHOLD <= tokens < threshold:
            # No provider figure yet and the estimate is near the line: count it (chars/4
            # runs low on code and non-English text); only such turns pay for a count.
            counted = self.counted(messages, tools)
            if counted >= threshold:
                tokens, counter = counted, "counted"
        if tokens < threshold or threshold <= 0:
            return messages
        if engine.should_defer_preflight_to_real_usage(tokens):
            log.debug("preflight_deferred", tokens=tokens, counter=counter, session=session.session_id)
            return messages
        should, reason = session.host.engine_step("should_compress", engine, prompt_tokens=tokens) or (False, None)
        if not should:
            if reason:
                self.blocked("preflight", tokens, reason, counter)
            return messages
        out = self.compress_automatic(messages, tools, phase="preflight", tokens=tokens, counter=counter)
        self.last_request_rough = self.rough(out, tools)
        if self.last_request_rough >= threshold or (self.fit is not None and not self.fit["fits"]):
            self.warn_oversized_user(out)
        return out

    def after_response(self, usage: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        session = self.session
        engine = session.engine
        u = coerce_usage(usage)
        session.host.engine_step("update_from_response", engine, usage=u)
        if u.prompt_tokens > 0:
            self.anchor = (self.last_request_rough, u.prompt_tokens)
            tokens, counter = u.prompt_tokens, "provider"
        else:
            # No usage reported: judge the rough request estimate, tool schemas included (and
            # near the line, the count, as the preflight does).
            tokens, counter = self.rough(messages, self.last_tools), "estimate"
            threshold = engine.threshold_tokens
            if threshold * NEAR_THRESHOLD <= tokens < threshold:
                counted = self.counted(messages, self.last_tools)
                if counted >= threshold:
                    tokens, counter = counted, "counted"
        if not session.config.compression.enabled:
            return messages
        should, reason = session.host.engine_step("should_compress", engine, prompt_tokens=tokens) or (False, None)
        if not should:
            if reason and tokens >= engine.threshold_tokens:
                self.blocked("post_response", tokens, reason, counter)
            return messages
        return self.compress_automatic(
            messages, self.last_tools, phase="post_response", tokens=tokens, counter=counter
        )

    def on_provider_error(self, error: BaseException, messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        kind = classify_overflow(error)
        if kind is None:
            return None
        session = self.session
        engine = session.engine
        if not session.config.compression.enabled:
            raise ContextOverflowError(
                f"the conversation no longer fits the model's context window ({kind}: {error}) and "
                "automatic compression is off (compression.enabled: false). Run /compress to "
                "compact it, start a new session, or pick a model with a larger window."
            )
        limit = reported_limit(error)
        if limit and (not engine.context_length or limit < engine.context_length):
            engine.update_model(
                session.model, limit, provider=session.provider, max_tokens=session.max_tokens
            )
            log.info("context_length_learned", context_length=limit, session=session.session_id)
        if kind == "long_context_tier" and (not engine.context_length or engine.context_length > 200_000):
            engine.update_model(session.model, 200_000, provider=session.provider, max_tokens=session.max_tokens)
        window = int(engine.context_length or 0)
        oversized = self.oversized_user(messages, window) if window > 0 else None
        if oversized is not None:
            # Compression never cuts a user message: nothing it could do makes this fit.
            raise ContextOverflowError(
                f"user message {oversized[0]} alone is ~{oversized[1]:,} tokens, over the "
                f"{window:,}-token context window ({kind}); a user message is never cut, so "
                "compression cannot make the request fit: shorten the message, attach it as a "
                "file, or pick a model with a larger window."
            )
        tokens = max(self.rough(messages, self.last_tools), engine.threshold_tokens)
        out = self.compress_automatic(
            messages, self.last_tools, phase="overflow", tokens=tokens, counter="estimate", force=True
        )
        if out is messages:
            raise ContextOverflowError(
                f"the conversation no longer fits the model's context window ({kind}) and "
                "compression could not reduce it; start a new session or pick a model with a "
                "larger window."
            )
        self.last_request_rough = self.rough(out, self.last_tools)
        return out

    def manual(
        self, messages: list[dict[str, Any]], *, focus_topic: str | None, force: bool,
        tools: Sequence[Mapping[str, Any]] | None, estimate: int | None = None, proven: bool = False,
        scan: HistoryScan | None = None,
    ) -> ManualCompression:
        """``estimate``: ``estimate_messages_tokens(messages)`` when the caller summed it already
        (``Session.compress``, in its one pass over the history, ``hermes_core.intake``);
        ``proven``: that pass showed ``messages`` valid by the pairing rule; ``scan``: the
        archive's columns of ``messages`` it read."""
        session = self.session
        tools = tools if tools is not None else self.last_tools
        # The host waits in this call: its list is the same until it returns, so what the
        # caller's pass read of it serves the engine too (``ContextEngine.known_input``: its
        # report's estimate, its input check) and the archive (``scan``: the columns).
        self.fit = None
        engine = session.engine
        engine.known_input = KnownInput(messages=messages, length=len(messages), estimate=estimate,
                                        valid=proven, scan=scan)
        try:
            before_tokens = self.rough(messages, tools, keep=False, estimate=estimate)
            if not engine.has_content_to_compress(messages):
                feedback = summarize_manual(messages, messages, before_tokens, before_tokens, {})
                return ManualCompression(messages=messages, feedback=attrs.evolve(
                    feedback, headline=f"Nothing to compress: all {len(messages)} messages are in the protected regions",
                ))
            out = self.run_engine(messages, current_tokens=None, focus_topic=focus_topic,
                                  force=force, phase="manual")
        finally:
            engine.known_input = None
        report = self.report()
        if out is not messages and not report.aborted:
            out = self.check_fit(out, tools, "manual")
            self.after_compaction(out, tools)  # the prompt is rebuilt: plugins' hooks, memory files
            report = self.report()
        after_tokens = before_tokens if out is messages else self.rough(out, tools)
        return ManualCompression(
            messages=out, feedback=summarize_manual(messages, out, before_tokens, after_tokens, report)
        )


def _extends(synced: Sequence[Any], messages: Sequence[Any]) -> bool:
    """Whether ``messages`` looks like the synced list or its continuation (its message at the
    synced list's last place is the same object): then syncing it costs O(new messages)."""
    n = len(synced)
    return 0 < n <= len(messages) and synced[n - 1] is messages[n - 1]


def _note_timing(engine: Any, phase: str, started: float) -> None:
    """Add a phase the session ran to the engine's report timings (when it keeps them)."""
    report = getattr(engine, "last_compression_report", None)
    timings = report.get("timings_ms") if isinstance(report, dict) else None
    if isinstance(timings, dict):
        timings[phase] = round((time.perf_counter() - started) * 1000, 3)
