"""``CompressorEngine``: the built-in context engine (``context.engine: compressor``).

Cheap before expensive. ``compress`` runs four phases and stops spending as soon as it can:

1. free passes (``prune``): dedupe, one-line demotion of old tool results, screenshot
   placeholders, argument shortening, tail pressure - no model involved, and their result
   stands even when the summary later fails;
2. boundaries (``boundaries``): a verbatim head and a token-budgeted verbatim tail that never
   splits a tool call from its results and always keeps the latest user request and reply;
3. summary (``summary_step``, ``serialize``, ``redact``, ``prompt``): the redacted middle goes
   to the summariser named by ``compression.summary.provider`` (offline ``extractive`` by
   default), updating the previous summary rather than summarising it again;
4. assembly (``assemble``): the framed summary takes the middle's place, then tool pairs are
   repaired and old images stripped.

The engine is self-sufficient for a host: it keeps the public counters the host reads
(``last_prompt_tokens``, ``threshold_tokens``, ``compression_count`` ...), judges its own
savings, blocks itself after two ineffective compressions and cools down after summariser
failures. After every ``compress`` call ``last_compression_report`` says what happened (the
``hermes-ctx compress`` report): ``status`` is ``compressed``, ``nothing_to_compress``,
``ineffective`` or ``aborted``; ``fallback_used``, ``aborted``, ``error`` and friends feed the
host's message to the user. The input list and its dicts are never mutated; returning the very
same list object means "nothing changed".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hermes_core.plugin import (
    coerce_usage,
    estimate_messages_tokens,
    get_logger,
    record_warning,
)
from hermes_plugins.compressor.antithrash import AntiThrash
from hermes_plugins.compressor.assemble import (
    Span,
    assemble_span,
    sanitize_tool_pairs,
)
from hermes_plugins.compressor.boundaries import (
    MIN_TAIL_MESSAGES,
    RESUMED_HEAD_SLACK,
    align_forward,
    find_tail_cut,
    keep_bridge,
    last_actionable_user,
    pinned_request,
)
from hermes_plugins.compressor.framing import (
    OWNER_KEY,
    SUMMARY_ANCHOR,
    SUMMARY_KEY,
    classify_message,
    is_summary_message,
    mark_restart_summary,
    unwrap,
)
from hermes_plugins.compressor.outcomes import CompactionOutcomes, lap, new_report, record_phase1
from hermes_plugins.compressor.plan import PlannedTurns, PrunePlan, TurnDemotions
from hermes_plugins.compressor.prune import (
    MAX_TAIL_MESSAGE_FLOOR,
    limit_oversized_results,
    message_tokens,
    plan_free_passes,
)
from hermes_plugins.compressor.summary_step import (
    SUMMARY_MIN_TOKENS,
    SummaryAborted,
    shorten,
)
from hermes_plugins.compressor.thresholds import (
    UNKNOWN_WINDOW_FALLBACK,
    clamp_target_ratio,
    derive_thresholds,
    resolve_model_threshold,
)
from hermes_plugins.tools.budget import budget_for_context_window

log = get_logger(__name__)

#: A head message over this share of the threshold is condensed rather than protected.
HEAD_MESSAGE_SHARE = 0.10
DEFER_TOLERANCE_MIN = 4_096
DEFER_TOLERANCE_SHARE = 0.05
PHASES = ("prune", "boundaries", "summary", "assemble")


class CompressorEngine(CompactionOutcomes):
    """The reference compressor: free passes, a pair-safe cut, a framed summary last."""

    name = "compressor"

    def __init__(self, *, config: Any = None, host: Any = None) -> None:
        super().__init__(config=config, host=host)
        section = self.config.compression
        #: Seconds clock for cooldowns; replace it in tests (``engine.clock = fake``).
        self.clock: Callable[[], float] = time.monotonic
        #: Optional ``progress(phase, done, total)`` callback, called at each phase start.
        self.progress: Callable[[str, int, int], None] | None = None
        self._config_threshold_percent = float(section.threshold)
        self.threshold_percent = float(section.threshold)
        self.protect_first_n = int(section.protect_first_n)
        self.protect_last_n = int(section.protect_last_n)
        self.summary_target_ratio = clamp_target_ratio(section.target_ratio)
        self.tail_token_budget = 0
        self.max_summary_tokens = 0
        self.last_real_prompt_tokens = 0
        self.awaiting_real_usage_after_compression = False
        self.last_compression_rough_tokens = 0
        self.last_rough_tokens_when_real_prompt_fit: int | None = None
        self._guard = AntiThrash()
        self._previous_summary: str | None = None
        self._summarizers: dict[str, Any] = {}
        self._redacted_output = False  # whether the last summary came redacted (``_clean_output``)
        self._summary_model_failed = False
        self._runtime: tuple[Any, ...] | None = None
        self._window_warned = False
        self._call_tokens: int | None = None

    # --- state that outlives the process (stored by the Session, see ContextEngine) ------

    def export_state(self) -> dict[str, Any]:
        guard = self._guard
        state = super().export_state()
        state.update(
            ineffective_count=guard.ineffective_count, block_base_tokens=guard.block_base_tokens,
            # The cooldown clock is per process: stored as wall-clock time.
            cooldown_until_wall=time.time() + max(0.0, guard.cooldown_until - self.clock()),
            timeout_streak=guard.timeout_streak, last_failure=guard.last_failure,
            previous_summary=self._previous_summary,
        )
        return state

    def import_state(self, state: Any) -> None:
        super().import_state(state)
        guard = self._guard
        if isinstance(state.get("ineffective_count"), int):
            guard.ineffective_count = state["ineffective_count"]
        if isinstance(state.get("block_base_tokens"), int) or state.get("block_base_tokens") is None:
            guard.block_base_tokens = state.get("block_base_tokens")
        if isinstance(state.get("cooldown_until_wall"), (int, float)):
            guard.cooldown_until = self.clock() + max(0.0, state["cooldown_until_wall"] - time.time())
        if isinstance(state.get("timeout_streak"), int):
            guard.timeout_streak = state["timeout_streak"]
        if isinstance(state.get("last_failure"), str):
            guard.last_failure = state["last_failure"]
        if isinstance(state.get("previous_summary"), str):
            self._previous_summary = state["previous_summary"]

    # --- configuration --------------------------------------------------------------------

    def update_model(
        self,
        model: str,
        context_length: int,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str | None = None,
        api_mode: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Adopt a model and window and derive every size figure (§5).

        An unknown window (``context_length`` 0) keeps ``context_length`` at 0 for the host but
        sizes thresholds for a 256,000-token window, with a one-time warning when the engine
        first has to decide something (a session that only builds its prompt never warns).
        """
        section = self.config.compression
        runtime = (model or "", provider or self.provider, base_url, api_mode)
        self.model = model or ""
        self.provider = provider or self.provider
        self.context_length = max(0, int(context_length or 0))
        if max_tokens is not None:
            self.max_tokens = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None
        window = self.context_length
        if window <= 0:
            window = UNKNOWN_WINDOW_FALLBACK
        percent = resolve_model_threshold(
            self.model, section.model_thresholds, self._config_threshold_percent
        )
        figures = derive_thresholds(
            window,
            percent,
            max_tokens=self.max_tokens,
            cap=section.threshold_tokens,
            target_ratio=section.target_ratio,
        )
        self.threshold_percent = figures.threshold_percent
        self.threshold_tokens = figures.threshold_tokens
        self.tail_token_budget = figures.tail_token_budget
        self.max_summary_tokens = figures.max_summary_tokens
        self.summary_target_ratio = figures.target_ratio
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.last_real_prompt_tokens = 0
        self.last_compression_rough_tokens = 0
        self.last_rough_tokens_when_real_prompt_fit = None
        self.awaiting_real_usage_after_compression = False
        self._guard.clear_ineffective()
        self._guard.pending_verification = None
        if self._runtime is not None and runtime != self._runtime:
            self._guard.clear_cooldown()
            self._summarizers.clear()
            self._summary_model_failed = False
        self._runtime = runtime

    # --- usage and decisions ----------------------------------------------------------------

    @property
    def ineffective_compression_count(self) -> int:
        return self._guard.ineffective_count

    def update_from_response(self, usage: Any) -> None:
        """Record one response's usage (§6.1). Only prompt tokens decide anything.

        Also settles a pending savings verdict: when a compression was judged effective from
        estimates, the first real prompt figure after it confirms or overturns that.
        """
        u = coerce_usage(usage)
        self.last_prompt_tokens = u.prompt_tokens
        self.last_completion_tokens = u.completion_tokens
        self.last_total_tokens = u.total_tokens
        guard = self._guard
        guard.turn += 1
        prompt = u.prompt_tokens
        if prompt > 0:
            self.last_real_prompt_tokens = prompt
            before = guard.pending_verification
            if before:
                savings = (before - prompt) / before * 100
                if guard.record_verdict(savings, prompt):
                    log.info("compression_ineffective", basis="provider", savings_percent=round(savings, 1),
                             count=guard.ineffective_count)
                    if guard.blocked:
                        self._warn_blocked()
            if prompt < self.threshold_tokens:
                if self.awaiting_real_usage_after_compression and self.last_compression_rough_tokens:
                    self.last_rough_tokens_when_real_prompt_fit = self.last_compression_rough_tokens
                guard.clear_ineffective()
            else:
                self.last_rough_tokens_when_real_prompt_fit = None
        guard.pending_verification = None
        self.awaiting_real_usage_after_compression = False

    def _note_unknown_window(self) -> None:
        if self.context_length <= 0 and not self._window_warned:
            self._window_warned = True
            record_warning(
                "compression_window_unknown",
                f"the context window of model {self.model or '(unnamed)'!r} is unknown; "
                f"compression thresholds assume {UNKNOWN_WINDOW_FALLBACK:,} tokens",
                plugin="compressor",
                model=self.model,
            )

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """``(should, block_reason)`` for a token figure (default: the last real prompt).

        Reasons: ``cooldown:<seconds>`` while a summariser failure cools down, ``ineffective``
        after two compressions that saved under 10% (lifted by enough growth since).
        """
        self._note_unknown_window()
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        if self.threshold_tokens <= 0 or tokens < self.threshold_tokens:
            return False, None
        remaining = self._guard.cooldown_remaining(self.clock())
        if remaining > 0:
            return False, f"cooldown:{remaining:.0f}"
        if self._guard.blocked:
            margin = float(self.config.compression.ineffective_recovery_margin)
            if not self._guard.lifts_block(tokens, self.threshold_tokens, margin):
                return False, "ineffective"
            log.info("compression_block_lifted", tokens=tokens, base=self._guard.block_base_tokens)
            self._guard.clear_ineffective()
        return True, None

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        """Whether a rough pre-request estimate should wait for the provider's figure (§6.3)."""
        if rough_tokens < self.threshold_tokens:
            return False
        if self.awaiting_real_usage_after_compression:
            return True
        if self.last_real_prompt_tokens <= 0 or self.last_real_prompt_tokens >= self.threshold_tokens:
            return False
        baseline = self.last_rough_tokens_when_real_prompt_fit or self.last_compression_rough_tokens
        if not baseline:
            return False
        tolerated = max(DEFER_TOLERANCE_MIN, int(self.threshold_tokens * DEFER_TOLERANCE_SHARE))
        if max(0, rough_tokens - baseline) > tolerated:
            return False
        self.last_rough_tokens_when_real_prompt_fit = max(baseline, rough_tokens)
        return True

    def recent_compressions(self, window: int | None = None) -> int:
        """How many compressions ran in the last ``window`` turns (default
        ``compression.thrash_window_turns``); a turn is one ``update_from_response``."""
        return self._guard.recent(window or int(self.config.compression.thrash_window_turns))

    def get_status(self) -> dict[str, Any]:
        status = super().get_status()
        blocked = None
        if self._guard.cooldown_remaining(self.clock()) > 0:
            blocked = f"cooldown:{self._guard.cooldown_remaining(self.clock()):.0f}"
        elif self._guard.blocked:
            blocked = "ineffective"
        window = int(self.config.compression.thrash_window_turns)
        status.update(
            tail_token_budget=self.tail_token_budget,
            max_summary_tokens=self.max_summary_tokens,
            threshold_percent=self.threshold_percent,
            ineffective_compression_count=self._guard.ineffective_count,
            blocked_reason=blocked,
            recent_compressions=self._guard.recent(window),
            thrash_window_turns=window,
            has_previous_summary=self._previous_summary is not None,
            last_compression_status=(self.last_compression_report or {}).get("status"),
        )
        return status

    # --- lifecycle --------------------------------------------------------------------------

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        previous = self.session_id
        super().on_session_start(session_id, **kwargs)
        if kwargs.get("boundary_reason") is None and previous and previous != session_id:
            self._reset_session_state()

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._reset_session_state()

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self._reset_session_state()

    def _reset_session_state(self) -> None:
        self._previous_summary = None
        self._guard.reset()
        self._summary_model_failed = False
        self.compression_count = 0
        self.last_real_prompt_tokens = 0
        self.last_compression_rough_tokens = 0
        self.last_rough_tokens_when_real_prompt_fit = None
        self.awaiting_real_usage_after_compression = False
        self.last_compression_report = None

    # --- boundaries ---------------------------------------------------------------------------

    def _effective_protect_first_n(self, messages: list[dict[str, Any]]) -> int:
        """``protect_first_n`` until the session has been compressed, then 0 (§8.1)."""
        if self.compression_count >= 1 or self._previous_summary is not None:
            return 0
        first = 1 if messages and messages[0].get("role") == "system" else 0
        for i in range(first, min(len(messages), first + self.protect_first_n + RESUMED_HEAD_SLACK)):
            if messages[i].get("role") != "tool" and is_summary_message(messages[i]):
                return 0
        return self.protect_first_n

    def _head_end(self, messages: list[dict[str, Any]]) -> int:
        """End of the verbatim head: the system message and ``protect_first_n`` messages, up to
        the first one over a tenth of the threshold (a 19 kB demonstration is condensed like
        the middle; protecting it would leave nothing to gain on a short history)."""
        system = 1 if messages and messages[0].get("role") == "system" else 0
        end = min(len(messages), system + self._effective_protect_first_n(messages))
        limit = self.threshold_tokens * HEAD_MESSAGE_SHARE if self.threshold_tokens > 0 else 0
        if limit:
            for i in range(system, end):
                if message_tokens(messages[i]) > limit:
                    # A big result goes with its call: the head ends before that assistant.
                    while i > system and messages[i].get("role") == "tool":
                        i -= 1
                    return i
        return end

    def _budget(self) -> int:
        if self.tail_token_budget > 0:
            return self.tail_token_budget
        return int(derive_thresholds(UNKNOWN_WINDOW_FALLBACK, self.threshold_percent).tail_token_budget)

    def _tail_floor(self, force: bool) -> int:
        """Messages the tail keeps at least: 3 when forced (manual, overflow), else up to 8."""
        if force:
            return MIN_TAIL_MESSAGES
        return max(MIN_TAIL_MESSAGES, min(self.protect_last_n, MAX_TAIL_MESSAGE_FLOOR))

    def _too_few(self, messages: list[dict[str, Any]], head_end: int, force: bool = False) -> bool:
        return len(messages) <= head_end + self._tail_floor(force) + 1

    def _trusting_text(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """An unmarked earlier summary at the first position, marked - only in a fresh engine
        (after a restart); once this engine has compressed, its summaries carry metadata."""
        if self.compression_count or self._previous_summary is not None:
            return messages
        return mark_restart_summary(messages)

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """Whether anything outside the protected head and tail could be summarised (§13)."""
        if not messages:
            return False
        messages = self._trusting_text(messages)
        # Asked before a manual compression, which has the forced floor.
        start = align_forward(messages, self._head_end(messages))
        if not self._too_few(messages, start, force=True):
            cut = find_tail_cut(messages, start, self._budget(), self._tail_floor(True),
                                free_at_least=self._budget())
            if any(not is_summary_message(messages[i]) for i in range(start, min(cut, len(messages)))):
                return True
        # All protected: still something to do when a result is over the limit (clipped
        # wherever it sits, issue 28).
        return bool(limit_oversized_results(messages, self.result_limit())[1])

    # --- compress -------------------------------------------------------------------------------

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        """Compact ``messages``; see the module docstring for the phases and the report."""
        started = time.perf_counter()
        self._note_unknown_window()
        report = new_report(messages, force, focus_topic, self.input_estimate(messages))
        self.last_compression_report = report
        self._call_tokens = current_tokens
        if force:
            self._guard.clear_cooldown()
            self._guard.clear_ineffective()
        try:
            # The host's own pass may have shown the input valid already (``known_input``).
            repaired, repairs = (messages, 0) if self.input_valid(messages) else sanitize_tool_pairs(messages)
            if repairs:
                # Invalid on the way in: everything below works on (and returns) the repair.
                report["tool_pairs_repaired"] = repairs
                self._warn(
                    report, "tool_pairs_repaired",
                    f"the messages given to compression broke the tool-call pairing rule; "
                    f"{repairs} repair(s) made before compressing (see the notes in the "
                    "assistant messages)",
                    repairs=repairs,
                )
            work = self._trusting_text(repaired)
            limited = self._limit_results(work, report)
            result = self._compress(limited, current_tokens, focus_topic, force, report)
            if result is limited and limited is not work:
                # Nothing else to do, but the oversized results were limited: that stands
                # (unless the run aborted, which leaves the conversation untouched).
                result = repaired if report["aborted"] else \
                    self._commit_limited(messages, limited, report, current_tokens)
            elif result is work:
                result = repaired
        finally:
            report["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 2)
        log.info(
            "compression_finished",
            engine=self.name,
            status=report["status"],
            before_tokens=report["before"]["tokens"],
            after_tokens=report["after"]["tokens"],
            before_messages=report["before"]["messages"],
            after_messages=report["after"]["messages"],
            fallback=report["fallback_used"],
            elapsed_ms=report["elapsed_ms"],
        )
        return result

    def result_limit(self) -> int:
        """Characters of text one tool result may hold in the context, wherever it sits: the
        tool pipeline's per-result budget for this window (15% of it, 8,000..100,000
        characters, ``hermes_plugins.tools.budget``), so a result that came in past the
        pipeline (a host's own tool loop, an old transcript) is held as a new one would be."""
        return budget_for_context_window(self.context_length or None).default_result_size

    def _limit_results(self, messages: list[dict[str, Any]], report: dict[str, Any]) -> list[dict[str, Any]]:
        """Tool results over ``result_limit`` clipped, in the protected head and tail too
        (counted in the report and a warning); the same list when none is."""
        cap = self.result_limit()
        limited, count, cut = limit_oversized_results(messages, cap)
        if count:
            report["phases"]["results_limited"] = count
            report["phases"]["result_chars_cut"] = cut
            self._warn(
                report, "tool_results_limited",
                f"{count} tool result(s) over the {cap:,}-character limit of one result were "
                f"clipped ({cut:,} characters cut; the session archive keeps the full text)",
                results=count, chars=cut,
            )
        return limited

    def _commit_limited(
        self, messages: list[dict[str, Any]], limited: list[dict[str, Any]], report: dict[str, Any],
        current_tokens: int | None,
    ) -> list[dict[str, Any]]:
        """The limited results alone, committed (nothing else could be condensed)."""
        after = estimate_messages_tokens(limited)
        report.pop("note", None)
        return self._commit(messages, limited, report, report["before"]["tokens"], after, current_tokens)

    def fit_to(self, messages: list[dict[str, Any]], target_tokens: int) -> list[dict[str, Any]]:
        """Further passes when a compaction left the request over ``target_tokens`` (this
        engine's own estimate of messages, which the host scales from its counted figure):
        (1) every tool result, protected or not, held to a share of the target; (2) the tail:
        compressed again, forced, with the tail budget halved each round, until the estimate
        is within the target or a round makes no progress. Returns the same list when
        nothing could be done."""
        report = self.last_compression_report if isinstance(self.last_compression_report, dict) else None
        current = messages
        # (1) no single result may take more than a quarter of what the request may hold.
        cap = max(2_000, min(self.result_limit(), target_tokens))
        limited, count, cut = limit_oversized_results(current, cap)
        if count:
            current = limited
            if report is not None:
                phases = report.setdefault("phases", {})
                phases["results_limited"] = phases.get("results_limited", 0) + count
                phases["result_chars_cut"] = phases.get("result_chars_cut", 0) + cut
        if estimate_messages_tokens(current) <= target_tokens:
            return current
        # (2) the tail. These runs are part of the same compaction: the counters the
        # anti-thrash guard keeps (compressions per turn, ineffective verdicts) are left as the
        # first run set them.
        saved = self.tail_token_budget
        guard = self._guard
        stamps, compressions = len(guard.compression_turns), self.compression_count
        verdicts = (guard.ineffective_count, guard.block_base_tokens)
        budget = self._budget()
        try:
            for _ in range(6):
                budget //= 2
                if budget < 500:
                    break
                self.tail_token_budget = budget
                out = self.compress(current, force=True)
                if out is current:
                    continue
                current = out
                if estimate_messages_tokens(current) <= target_tokens:
                    break
        finally:
            self.tail_token_budget = saved
            while len(guard.compression_turns) > stamps:
                guard.compression_turns.pop()
            self.compression_count = compressions
            guard.ineffective_count, guard.block_base_tokens = verdicts
        if report is not None and self.last_compression_report is not report:
            # Each compress wrote a report of its own; the caller (``compaction_fit.settle_fit``)
            # keeps the first run's and notes what these did inside it.
            self.last_compression_report = {**self.last_compression_report, "before": report["before"]} \
                if isinstance(self.last_compression_report, dict) else report
        return current

    def _step(self, index: int) -> None:
        if self.progress is not None:
            try:
                self.progress(PHASES[index], index, len(PHASES))
            except Exception:  # noqa: BLE001 - a display callback must not break compression
                self.progress = None

    def _compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
        report: dict[str, Any],
    ) -> list[dict[str, Any]]:
        before_tokens = report["before"]["tokens"]
        head_end = self._head_end(messages)
        if not messages or self._too_few(messages, head_end, force):
            return self._unchanged(messages, report, force, "too few messages outside the protected head and tail")

        self._step(0)
        timings = report["timings_ms"]
        mark = time.perf_counter()
        # The one-liners of old results are planned, not built: most fall in the condensed
        # part. The boundaries read sizes through ``plan.view`` (which builds what it reads);
        # what is returned is built after the summary (head and tail), or all of it when the
        # free passes alone are committed (``_all_free_passes``).
        plan = plan_free_passes(
            messages,
            protect_tail_count=self.protect_last_n,
            protect_tail_tokens=self._budget(),
        )
        record_phase1(report, plan.stats)
        mark = lap(timings, "free_passes", mark)

        self._step(1)
        span = self._span(messages, plan, head_end, force)
        mark = lap(timings, "boundaries", mark)
        if not any(m.get("role") != "system" and m is not span.pinned for m in span.middle):
            return self._phase1_only(messages, plan, report, force, before_tokens)

        self._step(2)
        middle = self._summary_turns(plan, span)
        try:
            body, provider, fallback, error = self._summarize(middle, focus_topic, force, report)
        except SummaryAborted as exc:
            report.update(status="aborted", aborted=True, error=str(exc), error_kind=exc.kind)
            report["after"] = dict(report["before"])
            message = (
                f"compression aborted: the summariser failed ({exc.kind}: {shorten(str(exc))}); "
                "no messages were removed"
            )
            self._warn(report, "compression_aborted", message, error_kind=exc.kind)
            return messages
        mark = lap(timings, "summary", mark)

        self._step(3)
        assembled = assemble_span(plan, span, body, fallback, report)
        after_tokens = estimate_messages_tokens(assembled)
        lap(timings, "assemble", mark)
        if after_tokens >= before_tokens:
            if not (self._forced_growth_ok(force, before_tokens, after_tokens)
                    and not span.merged and len(assembled) < len(messages)):
                return self._refuse_growth(messages, plan, report, before_tokens, after_tokens)
            report["forced_growth"] = after_tokens - before_tokens

        self.compression_count += 1
        self._previous_summary = body
        index = next((i for i, m in enumerate(assembled) if m.get("_compressed_summary")), None)
        report["summary"] = {"index": index, "provider": provider, "chars": len(body), "fallback": fallback}
        report["fallback_used"] = fallback
        if error is not None:
            report["error"], report["error_kind"] = error
        return self._commit(messages, assembled, report, before_tokens, after_tokens, current_tokens)

    def _span(self, messages: list[dict[str, Any]], plan: PrunePlan, head_end: int, force: bool) -> Span:
        """Where the condensed middle starts and ends, and the request kept live beside it."""
        pruned = plan.messages
        start = align_forward(pruned, head_end)
        floor = self._tail_floor(force)
        # A forced run (manual, overflow) frees at least a tail budget when the history has it,
        # counting what the free passes freed already.
        free = max(0, self._budget() - _freed(messages, plan, self._budget())) if force else 0
        cut = find_tail_cut(plan.view, start, self._budget(), floor, free_at_least=free)
        pin = pinned_request(pruned, start, cut)
        if pin >= 0:
            # The newest request stays live and whole (a user message is never cut, issue 28),
            # counted against the tail budget; one that alone is too large for the window is
            # the session's to report (user_message_too_large, would_not_fit).
            rest = max(1, self._budget() - message_tokens(pruned[pin]))
            cut = max(cut, find_tail_cut(plan.view, start, rest, floor, free_at_least=free))
        handoffs = _summary_positions(pruned, messages, self.input_scan(messages))
        if handoffs and all(h >= cut for h in handoffs):
            # The last summary sits in the tail: move it into the middle so it gets updated.
            cut = align_forward(pruned, handoffs[-1] + 1)
        cut = keep_bridge(pruned, start, cut)
        self._note_previous_summary(pruned, handoffs)
        if pin >= 0 and not start <= pin < cut:
            pin = -1
        if pin < 0 and cut < len(pruned) and cut == last_actionable_user(pruned, start):
            # The tail would open with the newest request, and a summary may be merged into
            # the first tail message: keep the request apart, right before the summary.
            pin = cut
            cut += 1
        merged = any(start <= h < cut for h in handoffs)
        # Merged summaries reduced to their text; where the planned results land is noted in
        # the same walk (a second walk of a 100k middle cost ~1% of a compaction).
        positions: dict[int, int] = {}
        middle = _middle_turns(pruned, start, cut, plan.planned, positions) if merged else pruned[start:cut]
        return Span(start, cut, pruned[pin] if pin >= 0 else None, merged, middle, positions)

    def _note_previous_summary(self, pruned: list[dict[str, Any]], handoffs: list[int]) -> None:
        """The previous summary is the transcript's: taken from it, or dropped when it lacks one."""
        bodies = [found[1] for h in handoffs if (found := classify_message(pruned[h])) and found[1]]
        if handoffs and self._previous_summary is None:
            self._previous_summary = "\n\n".join(bodies) or None
        elif not handoffs and self._previous_summary is not None:
            # A summary we hold but the transcript lacks belongs to another conversation.
            log.info("previous_summary_discarded", reason="not in transcript")
            self._previous_summary = None

    def _summary_turns(self, plan: PrunePlan, span: Span) -> list[dict[str, Any]]:
        """The middle as the summariser reads it: results the free passes planned to demote
        handed raw to one that judges them itself, else their lines built."""
        if not plan.planned:
            return span.middle
        start, cut = span.start, span.cut
        if self._reads_planned(self.config.compression.summary.provider):
            # Handed raw with where the planned ones are: the summariser judges each result
            # once (its verdict is needed anyway) and builds the lines it shows.
            middle = PlannedTurns(span.middle)
            positions = span.positions if span.merged else {i - start: i for i in plan.planned if start <= i < cut}
            middle.demotions = TurnDemotions(plan, positions)
            return middle
        # Anything else reads the lines, exactly as the free passes make them.
        plan.materialize_range(start, cut)
        return _middle_turns(plan.messages, start, cut) if span.merged else plan.messages[start:cut]

    def _forced_growth_ok(self, force: bool, before_tokens: int, after_tokens: int) -> bool:
        """Whether a forced run (``/compress``, an overflow) uses a summary that grew the
        estimate: asked to condense a short history, it condenses what lies between the
        protected head and tail as the reference does, even when the framed notes are a little
        denser than the few short messages they replace - by no more than the summary's own
        minimum budget, and only while the result is within the threshold (the feedback says
        the estimate rose; the report's ``forced_growth`` says by how much). A summariser that
        writes far more is still refused, and so is rewriting an earlier summary of a history
        this short, or a result with as many messages as before (churn, nothing condensed)."""
        return (
            force and after_tokens - before_tokens <= SUMMARY_MIN_TOKENS
            and (self.threshold_tokens <= 0 or after_tokens <= self.threshold_tokens)
        )

def _summary_positions(messages: list[dict[str, Any]], source: list[dict[str, Any]] | None = None,
                       scan: Any = None) -> list[int]:
    """Indices of the messages that carry a summary (``is_summary_message``, tool results
    aside), in one pass with the two metadata reads inlined (this walks the whole history).

    ``source``: the list the free passes made ``messages`` from (position for position: they
    replace messages by copies that keep every key). When the session's pass over it is held
    (``scan``, ``ContextEngine.input_scan``), only its messages that are not plain are looked at - a plain message has
    no key but its role, content and call id - instead of every dict of a long history."""
    summary_key, owner_key = SUMMARY_KEY, OWNER_KEY
    if source is None or len(source) != len(messages):
        scan = None
    return [
        i for i in (scan.odd if scan is not None else range(len(messages)))
        if ((m := messages[i]).get(summary_key) or m.get(owner_key)) and m.get("role") != "tool"
    ]


def _middle_turns(
    messages: list[dict[str, Any]], start: int, cut: int,
    planned: Any = None, positions: dict[int, int] | None = None,
) -> list[dict[str, Any]]:
    """The messages to summarise: old summaries dropped, merged ones reduced to their own text.
    With ``planned`` (indices), ``positions`` gets the position each of those takes."""
    out: list[dict[str, Any]] = []
    anchored = False
    for i in range(*slice(start, cut).indices(len(messages))):
        message = messages[i]
        if message.get("role") != "tool" and is_summary_message(message):
            if not anchored and out:
                out.append({"role": "system", "content": SUMMARY_ANCHOR})
            anchored = True
            kept = unwrap(message)
            if kept is not None:
                out.append(kept)
        else:
            if positions is not None and i in planned:
                positions[len(out)] = i
            out.append(message)
    return out


def _freed(messages: list[dict[str, Any]], plan: PrunePlan, enough: int) -> int:
    """Tokens the free passes took off, counted up to ``enough`` (only the messages they
    replaced are measured, oldest first: on a long history the first few demotions suffice;
    the planned ones among them are built here)."""
    planned = plan.planned
    freed = 0
    i = -1
    for before, after in zip(messages, plan.messages):
        i += 1
        if before is not after or i in planned:
            after = plan.at(i)
            if before is after:
                continue
            freed += message_tokens(before) - message_tokens(after)
            if freed >= enough:
                break
    return freed


#END
