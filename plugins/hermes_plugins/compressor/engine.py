"""``CompressorEngine``: the built-in context engine (``context.engine: compressor``).

Cheap before expensive. ``compress`` runs four phases and stops spending as soon as it can:

1. free passes (``prune``): dedupe, one-line demotion of old tool results, screenshot
   placeholders, argument shortening, tail pressure - no model involved, and their result
   stands even when the summary later fails;
2. boundaries (``boundaries``): a verbatim head and a token-budgeted verbatim tail that never
   splits a tool call from its results and always keeps the latest user request and reply;
3. summary (``serialize``, ``redact``, ``prompt``): the redacted middle goes to the summariser
   named by ``compression.summary.provider`` (offline ``extractive`` by default), updating the
   previous summary rather than summarising it again;
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
    ABORTING_KINDS,
    ContextEngine,
    HermesPluginError,
    SummarizerError,
    SummaryRequest,
    coerce_usage,
    estimate_message_tokens,
    estimate_messages_tokens,
    get_logger,
    record_warning,
    redact,
)
from hermes_plugins._common.injected import request_text
from hermes_plugins._common.reasoning import strip_reasoning
from hermes_plugins.compressor.antithrash import AntiThrash
from hermes_plugins.compressor.assemble import (
    assemble,
    sanitize_tool_pairs,
    strip_historical_media,
)
from hermes_plugins.compressor.boundaries import (
    MIN_TAIL_MESSAGES,
    RESUMED_HEAD_SLACK,
    align_forward,
    find_tail_cut,
    is_actionable_user,
    keep_bridge,
    last_actionable_user,
    pinned_request,
)
from hermes_plugins.compressor.extractive import (
    LATEST,
    MAX_CHARS,
    ExtractiveSummarizer,
    build_handoff,
    verbatim,
)
from hermes_plugins.compressor.framing import (
    OWNER_KEY,
    SUMMARY_ANCHOR,
    SUMMARY_KEY,
    classify_message,
    is_summary_message,
    mark_restart_summary,
    strip_answer_banner,
    unwrap,
)
from hermes_plugins.compressor.plan import PlannedTurns, PrunePlan, TurnDemotions
from hermes_plugins.compressor.prompt import build_summary_prompt
from hermes_plugins.compressor.prune import (
    MAX_TAIL_MESSAGE_FLOOR,
    PruneStats,
    limit_oversized_results,
    message_tokens,
    plan_free_passes,
)
from hermes_plugins.compressor.serialize import (
    bound_text,
    message_text,
    prepare_turns,
    serialize_turns,
)
from hermes_plugins.compressor.thresholds import (
    UNKNOWN_WINDOW_FALLBACK,
    clamp_target_ratio,
    derive_thresholds,
    resolve_model_threshold,
)
from hermes_plugins.tools.budget import budget_for_context_window

log = get_logger(__name__)

SUMMARY_RATIO = 0.20
SUMMARY_MIN_TOKENS = 2_000
PREVIOUS_SUMMARY_MAX = 20_000
#: The grounded "Latest user request" quotes at most this much of the request.
GROUNDED_REQUEST_MAX = 2_500
#: A head message over this share of the threshold is condensed rather than protected.
HEAD_MESSAGE_SHARE = 0.10
DEFER_TOLERANCE_MIN = 4_096
DEFER_TOLERANCE_SHARE = 0.05
PHASES = ("prune", "boundaries", "summary", "assemble")
_NO_NEW_KINDS = frozenset({"missing_dependency"})


class _Abort(Exception):
    """The summariser failed in a way that must leave the conversation untouched."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class CompressorEngine(ContextEngine):
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
        report = _new_report(messages, force, focus_topic, self.input_estimate(messages))
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
        pruned = plan.messages
        _record_phase1(report, plan.stats)
        mark = _lap(timings, "free_passes", mark)

        self._step(1)
        start = align_forward(pruned, head_end)
        floor = self._tail_floor(force)
        # A forced run (manual, overflow) frees at least a tail budget when the history has it,
        # counting what the free passes freed already.
        free = max(0, self._budget() - _freed(messages, plan, self._budget())) if force else 0
        cut = find_tail_cut(plan.view, start, self._budget(), floor, free_at_least=free)
        pin = pinned_request(pruned, start, cut)
        pinned: dict[str, Any] | None = None
        if pin >= 0:
            # The newest request stays live and whole (a user message is never cut, issue 28),
            # counted against the tail budget; one that alone is too large for the window is
            # the session's to report (user_message_too_large, would_not_fit).
            pinned = pruned[pin]
            rest = max(1, self._budget() - message_tokens(pinned))
            cut = max(cut, find_tail_cut(plan.view, start, rest, floor, free_at_least=free))
        handoffs = _summary_positions(pruned, messages, self.input_scan(messages))
        if handoffs and all(h >= cut for h in handoffs):
            # The last summary sits in the tail: move it into the middle so it gets updated.
            cut = align_forward(pruned, handoffs[-1] + 1)
        cut = keep_bridge(pruned, start, cut)
        bodies = [found[1] for h in handoffs if (found := classify_message(pruned[h])) and found[1]]
        if handoffs and self._previous_summary is None:
            self._previous_summary = "\n\n".join(bodies) or None
        elif not handoffs and self._previous_summary is not None:
            # A summary we hold but the transcript lacks belongs to another conversation.
            log.info("previous_summary_discarded", reason="not in transcript")
            self._previous_summary = None

        if pin >= 0 and not start <= pin < cut:
            pin, pinned = -1, None
        if pin < 0 and cut < len(pruned) and cut == last_actionable_user(pruned, start):
            # The tail would open with the newest request, and a summary may be merged into
            # the first tail message: keep the request apart, right before the summary.
            pin, pinned = cut, pruned[cut]
            cut += 1
        merged = any(start <= h < cut for h in handoffs)
        # Merged summaries reduced to their text; where the planned results land is noted in
        # the same walk (a second walk of a 100k middle cost ~1% of a compaction).
        positions: dict[int, int] = {}
        middle = _middle_turns(pruned, start, cut, plan.planned, positions) if merged else pruned[start:cut]
        mark = _lap(timings, "boundaries", mark)
        if not any(m.get("role") != "system" and (pin < 0 or m is not pruned[pin]) for m in middle):
            return self._phase1_only(messages, plan, report, force, before_tokens)

        self._step(2)
        if plan.planned:
            if self._reads_planned(self.config.compression.summary.provider):
                # Handed raw with where the planned ones are: the summariser judges each result
                # once (its verdict is needed anyway) and builds the lines it shows.
                middle = PlannedTurns(middle)
                if not merged:
                    positions = {i - start: i for i in plan.planned if start <= i < cut}
                middle.demotions = TurnDemotions(plan, positions)
            else:
                # Anything else reads the lines, exactly as the free passes make them.
                plan.materialize_range(start, cut)
                middle = _middle_turns(pruned, start, cut) if merged else pruned[start:cut]
        try:
            body, provider, fallback, error = self._summarize(middle, focus_topic, force, report)
        except _Abort as exc:
            report.update(status="aborted", aborted=True, error=str(exc), error_kind=exc.kind)
            report["after"] = dict(report["before"])
            message = (
                f"compression aborted: the summariser failed ({exc.kind}: {_short(str(exc))}); "
                "no messages were removed"
            )
            self._warn(report, "compression_aborted", message, error_kind=exc.kind)
            return messages
        mark = _lap(timings, "summary", mark)

        self._step(3)
        # The tail the cut measured is built already; this builds what it did not read.
        plan.materialize_range(0, start)
        plan.materialize_range(cut, len(pruned))
        phases = report["phases"]
        phases["demoted"] = plan.demoted_between(0, start) + plan.demoted_between(cut, len(pruned))
        phases["demoted_in_summary"] = plan.demoted_between(start, cut) + plan.planned_between(start, cut)
        head, tail = pruned[:start], pruned[cut:]
        if pinned is not None:
            if head and head[-1].get("role") == "user":
                # Right after a head that ends on a user message the kept request would touch
                # it: it opens the tail instead, and the summary (an assistant turn) stands
                # between the two (a forced /compress of a short history, issue 29).
                tail = [pinned, *tail]
            else:
                head = [*head, pinned]
        assembled = assemble(head, body, tail, compress_start=len(head), fallback=fallback)
        assembled, repairs = sanitize_tool_pairs(assembled)
        assembled, stripped = strip_historical_media(assembled)
        after_tokens = estimate_messages_tokens(assembled)
        report["phases"]["media_stripped"] += stripped
        report["phases"]["summarized_messages"] = cut - start - (1 if pinned is not None else 0)
        report["tool_pairs_repaired"] += repairs
        _lap(timings, "assemble", mark)
        if after_tokens >= before_tokens:
            if not (self._forced_growth_ok(force, before_tokens, after_tokens)
                    and not merged and len(assembled) < len(messages)):
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

    # --- outcomes ------------------------------------------------------------------------------

    def _unchanged(
        self, messages: list[dict[str, Any]], report: dict[str, Any], force: bool, why: str
    ) -> list[dict[str, Any]]:
        report["status"] = "nothing_to_compress"
        report["note"] = why
        if not force and messages:
            # An automatic trigger that finds nothing to do must not fire again every turn.
            self._count_no_progress(report, report["before"]["tokens"])
        return messages

    def _count_no_progress(self, report: dict[str, Any], before_tokens: int) -> None:
        """A pass that saved nothing counts as ineffective (two in a row block automatic runs)."""
        self._guard.record_verdict(0.0, self._tokens_for_block(self._call_tokens, before_tokens))
        if self._guard.blocked:
            self._warn_blocked(report)

    def _commit_free_passes(
        self,
        messages: list[dict[str, Any]],
        pruned: list[dict[str, Any]],
        report: dict[str, Any],
        before_tokens: int,
    ) -> list[dict[str, Any]] | None:
        """The free passes' result (pairs repaired, old media stripped), committed when it is
        smaller than before; ``None`` when it is not."""
        result, repairs = sanitize_tool_pairs(pruned)
        result, stripped = strip_historical_media(result)
        after = estimate_messages_tokens(result)
        if after >= before_tokens:
            return None
        report["phases"]["media_stripped"] += stripped
        report["tool_pairs_repaired"] += repairs
        return self._commit(messages, result, report, before_tokens, after, None)

    def _phase1_only(
        self,
        messages: list[dict[str, Any]],
        plan: PrunePlan,
        report: dict[str, Any],
        force: bool,
        before_tokens: int,
    ) -> list[dict[str, Any]]:
        pruned = _all_free_passes(plan, report)
        if pruned is messages:
            return self._unchanged(messages, report, force, "no messages between the protected head and tail")
        committed = self._commit_free_passes(messages, pruned, report, before_tokens)
        if committed is None:
            return self._unchanged(messages, report, force, "the free passes found nothing to shrink")
        return committed

    def _refuse_growth(
        self,
        messages: list[dict[str, Any]],
        plan: PrunePlan,
        report: dict[str, Any],
        before_tokens: int,
        after_tokens: int,
    ) -> list[dict[str, Any]]:
        """A summary that would not shrink the conversation is not used (§14.1 "refused")."""
        report["refused_would_grow"] = True
        report["phases"]["summarized_messages"] = 0
        self._warn(
            report,
            "compression_refused",
            f"the summary would not shrink the conversation (~{after_tokens:,} >= "
            f"~{before_tokens:,} tokens); kept the messages instead",
        )
        pruned = _all_free_passes(plan, report)
        if pruned is not messages:
            committed = self._commit_free_passes(messages, pruned, report, before_tokens)
            if committed is not None:
                return committed
        report["status"] = "ineffective"
        report["after"] = dict(report["before"])
        self._count_no_progress(report, before_tokens)
        return messages

    def _commit(
        self,
        messages: list[dict[str, Any]],
        result: list[dict[str, Any]],
        report: dict[str, Any],
        before_tokens: int,
        after_tokens: int,
        current_tokens: int | None,
    ) -> list[dict[str, Any]]:
        savings = (before_tokens - after_tokens) / before_tokens * 100 if before_tokens else 0.0
        report["after"] = {"messages": len(result), "tokens": after_tokens}
        report["savings_percent"] = round(savings, 2)
        report["dropped_count"] = max(0, len(messages) - len(result))
        real_before = current_tokens if current_tokens and current_tokens > 0 else (
            self.last_prompt_tokens if self.last_prompt_tokens > 0 else None
        )
        ineffective = self._guard.record_verdict(savings, self._tokens_for_block(current_tokens, before_tokens)) \
            if savings < 10.0 else False
        if ineffective:
            report["status"] = "ineffective"
            log.info("compression_ineffective", basis="estimate", savings_percent=round(savings, 1),
                     count=self._guard.ineffective_count)
            if self._guard.blocked:
                self._warn_blocked(report)
        else:
            report["status"] = "compressed"
            if real_before:
                self._guard.pending_verification = real_before
            else:
                self._guard.clear_ineffective()
        self._guard.record_compression()
        self.last_prompt_tokens = -1
        self.last_completion_tokens = 0
        self.awaiting_real_usage_after_compression = True
        self.last_compression_rough_tokens = after_tokens
        return result

    def _tokens_for_block(self, current_tokens: int | None, before_tokens: int) -> int:
        if current_tokens and current_tokens > 0:
            return current_tokens
        if self.last_prompt_tokens > 0:
            return self.last_prompt_tokens
        return before_tokens

    # --- the summary -----------------------------------------------------------------------------

    def _summary_budget(self, middle: list[dict[str, Any]]) -> int:
        """20% of the condensed content, within [2,000, max_summary_tokens] (the floor wins).

        Counted only until the cap is certain: a long middle reaches it within its first
        messages, and the rest would not change the figure.
        """
        cap = self.max_summary_tokens
        if cap > 0:
            enough = int(cap / SUMMARY_RATIO) + 1
            total = 0
            for message in middle:
                total += estimate_message_tokens(message)
                if total >= enough:
                    break
        else:
            total = estimate_messages_tokens(middle)
        budget = int(total * SUMMARY_RATIO)
        return max(SUMMARY_MIN_TOKENS, min(budget, cap or budget))

    def _summarize(
        self,
        middle: list[dict[str, Any]],
        focus_topic: str | None,
        force: bool,
        report: dict[str, Any],
    ) -> tuple[str, str, bool, tuple[str, str] | None]:
        """``(body, provider, fallback_used, (error, kind) | None)``; raises ``_Abort``."""
        section = self.config.compression
        provider = section.summary.provider
        previous = bound_text(redact(self._previous_summary), PREVIOUS_SUMMARY_MAX) \
            if self._previous_summary else None
        focus = redact(focus_topic.strip()) if focus_topic and focus_topic.strip() else None
        budget = self._summary_budget(middle)
        if self._reads_raw_turns(provider):
            # It redacts what it writes: no redacted copy of every turn, no prompt.
            turns: list[dict[str, Any]] = middle
            prompt = ""
        else:
            turns = prepare_turns(middle)
            prompt = build_summary_prompt(
                serialize_turns(turns), previous_summary=previous, focus_topic=focus,
                budget_tokens=budget, has_user_turn=any(is_actionable_user(m) for m in middle),
            )
        request = SummaryRequest(
            prompt=prompt,
            turns=turns,
            previous_summary=previous,
            focus_topic=focus,
            budget_tokens=budget,
            max_chars=MAX_CHARS,
            model=None,
        )
        now = self.clock()
        remaining = self._guard.cooldown_remaining(now)
        if remaining > 0 and not force:
            reason = f"cooling down for {remaining:.0f}s after: {self._guard.last_failure or 'a failure'}"
            return self._fallback(request, provider, "cooldown", reason, report), provider, True, (reason, "cooldown")

        summary_model = section.summary.model
        use_summary_model = bool(summary_model) and summary_model != self.model and not self._summary_model_failed
        model = summary_model if use_summary_model else (self.model or summary_model)
        try:
            text = self._call_summarizer(provider, model, request)
        except SummarizerError as exc:
            kind = exc.kind
            if kind in ABORTING_KINDS or section.abort_on_summary_failure:
                self._note_failure(kind, str(exc), provider)
                raise _Abort(kind, redact(str(exc))) from exc
            if use_summary_model and kind not in _NO_NEW_KINDS and self.model:
                log.info("summary_model_fallback", summary_model=summary_model, model=self.model, kind=kind)
                self._summary_model_failed = True
                report["summary_model_fallback"] = True
                report["summary_model_error"] = _short(redact(str(exc)))
                try:
                    text = self._call_summarizer(provider, self.model, request)
                except SummarizerError as retry_exc:
                    return self._failed(request, provider, retry_exc, report)
            else:
                return self._failed(request, provider, exc, report)
        self._guard.clear_cooldown()
        self._guard.last_failure = None
        return self._clean_output(text, request, redacted=self._redacted_output), provider, False, None

    def _failed(
        self, request: SummaryRequest, provider: str, exc: SummarizerError, report: dict[str, Any]
    ) -> tuple[str, str, bool, tuple[str, str]]:
        kind = exc.kind
        if kind in ABORTING_KINDS or self.config.compression.abort_on_summary_failure:
            self._note_failure(kind, str(exc), provider)
            raise _Abort(kind, redact(str(exc))) from exc
        message = _short(redact(str(exc)))
        seconds = self._note_failure(kind, message, provider)
        report["cooldown_seconds"] = seconds
        reason = f"{kind}: {message}"
        return self._fallback(request, provider, kind, reason, report), provider, True, (message, kind)

    def _note_failure(self, kind: str, message: str, provider: str) -> float:
        missing = kind == "provider_missing"
        seconds = self._guard.start_cooldown(kind, self.clock(), provider_missing=missing)
        self._guard.last_failure = f"{kind}: {_short(redact(message))}"
        log.warning("summary_failed", provider=provider, kind=kind, cooldown_seconds=seconds)
        return seconds

    def _fallback(
        self, request: SummaryRequest, provider: str, kind: str, reason: str, report: dict[str, Any]
    ) -> str:
        note = (
            f"Note: the summariser {provider!r} was unavailable ({_short(redact(reason))}); these "
            "notes were built deterministically from the condensed turns."
        )
        self._warn(
            report,
            "compression_summary_fallback",
            f"compression used a deterministic handoff: summariser {provider!r} unavailable "
            f"({_short(redact(reason))})",
            error_kind=kind,
        )
        try:
            return build_handoff(
                request.turns, previous_summary=request.previous_summary,
                focus_topic=request.focus_topic, max_chars=MAX_CHARS, note=note,
                demotions=getattr(request.turns, "demotions", None),
            )
        except Exception as exc:  # noqa: BLE001 - the last resort must not fail
            log.warning("fallback_handoff_failed", error=f"{type(exc).__name__}: {exc}")
            return f"{note}\n{len(request.turns)} earlier messages were condensed."

    def _call_summarizer(self, provider: str, model: str | None, request: SummaryRequest) -> str:
        summarizer = self._get_summarizer(provider, model)
        try:
            text = summarizer.summarize(request if model == request.model else _with_model(request, model))
        except SummarizerError:
            raise
        except Exception as exc:  # noqa: BLE001 - a third-party summariser may raise anything
            raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="other") from exc
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        if not text.strip():
            raise SummarizerError("the summariser returned an empty summary", kind="empty")
        # Ours, not a subclass: its handoff is redacted as a whole as its last step.
        self._redacted_output = type(summarizer) is ExtractiveSummarizer
        return text

    def _factory(self, provider: str) -> Any:
        factories: dict[str, Any] = {}
        if self.host is not None:
            try:
                factories = dict(self.host.summarizers())
            except HermesPluginError as exc:
                raise SummarizerError(str(exc), kind="other") from exc
        factory = factories.get(provider)
        if factory is None and provider == "extractive":
            factory = ExtractiveSummarizer
        if factory is None:
            known = ", ".join(sorted(factories)) or "(none)"
            raise SummarizerError(
                f"no summariser is registered as {provider!r} (known: {known})", kind="provider_missing"
            )
        return factory

    def _reads_raw_turns(self, provider: str) -> bool:
        """Whether ``provider``'s summariser takes the condensed messages unredacted (it says
        so with ``reads_raw_turns = True`` and redacts what it writes, as the extractive one)."""
        try:
            return getattr(self._factory(provider), "reads_raw_turns", False) is True
        except SummarizerError:
            return False  # the call itself reports it

    def _reads_planned(self, provider: str) -> bool:
        """Whether ``provider``'s summariser takes results the free passes planned to demote
        raw, with their ``demotions`` (``reads_planned_demotions = True``, the extractive one:
        it reads each as it would read the one-liner, and builds only the lines it shows)."""
        if not self._reads_raw_turns(provider):
            return False
        try:
            return getattr(self._factory(provider), "reads_planned_demotions", False) is True
        except SummarizerError:
            return False

    def _get_summarizer(self, provider: str, model: str | None) -> Any:
        key = f"{provider}\0{model or ''}"
        cached = self._summarizers.get(key)
        if cached is not None:
            return cached
        factory = self._factory(provider)
        try:
            summarizer = factory(self.config, model=model)
        except SummarizerError:
            raise
        except ImportError as exc:
            raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="missing_dependency") from exc
        except Exception as exc:  # noqa: BLE001
            raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="other") from exc
        self._summarizers[key] = summarizer
        return summarizer

    def _clean_output(self, text: str, request: SummaryRequest, *, redacted: bool = False) -> str:
        """The summary as it goes into the context: reasoning, secrets and banner removed, cut
        to size, its latest request grounded. ``redacted``: the summariser redacted ``text``
        itself (the built-in extractive one); a second pass would change nothing (redaction is
        idempotent, tested) and cost as much as the first (~8,000 characters of triggers), so
        it is skipped unless removing reasoning changed the text (joined parts are new text)."""
        stripped = strip_reasoning(text)
        text = strip_answer_banner(stripped if redacted and stripped == text else redact(stripped))
        limit = max(MAX_CHARS, self.max_summary_tokens * 6)
        if len(text) > limit:
            cut = text.rfind("\n", 0, limit)
            text = text[: cut if cut > limit // 2 else limit].rstrip() + "\n…"
        return ground_latest_request(text, request.turns)

    # --- warnings -------------------------------------------------------------------------------

    def _warn(self, report: dict[str, Any], kind: str, message: str, **details: Any) -> None:
        report["warnings"].append(message)
        record_warning(kind, message, plugin="compressor", **details)

    def _warn_blocked(self, report: dict[str, Any] | None = None) -> None:
        message = (
            "automatic compression is paused: the last two compressions saved under 10%; it "
            "resumes once the conversation has grown, or run /compress (optionally with a "
            "focus topic) or start a new session"
        )
        if report is not None:
            self._warn(report, "compression_blocked", message)
        else:
            record_warning("compression_blocked", message, plugin="compressor")


def ground_latest_request(text: str, turns: Any) -> str:
    """The summary with its "Latest user request" section set to the real latest request.

    A model paraphrases, and the paraphrase of the one thing that must survive verbatim is
    where summaries go wrong; so the section is rebuilt from the newest real user turn of the
    condensed turns (redacted here; turns older than a previous summary do not count).
    Without such a turn the summary is left as written.
    """
    # From the newest turn back to the previous summary's anchor (``split_at_anchor``; there
    # is at most one): a walk of a few turns, not of the whole middle. Injected text
    # (reminders, notifications, another agent's summary) is not a request.
    latest = None
    for turn in reversed(turns):
        if turn.get("role") == "system" and turn.get("content") == SUMMARY_ANCHOR:
            break
        # The person's words only (issue 29): a Cline result's <answer>, not its harness text.
        words = request_text(turn, text=message_text(turn)) if turn.get("role") == "user" else None
        if words is not None:
            latest = words
            break
    if latest is None:
        return text
    section = f"## {LATEST}\n{verbatim(redact(latest), GROUNDED_REQUEST_MAX)}\n"
    start = text.find(f"## {LATEST}")
    if start == -1:
        return f"{section}\n{text}"
    end = text.find("\n## ", start + 3)
    grounded = text[:start] + section
    if end != -1:
        grounded += "\n" + text[end + 1:]
    return grounded.rstrip()


def _with_model(request: SummaryRequest, model: str | None) -> SummaryRequest:
    import attrs

    return attrs.evolve(request, model=model)


def _short(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _new_report(messages: list[dict[str, Any]], force: bool, focus_topic: str | None, tokens: int) -> dict[str, Any]:
    return {
        "status": "nothing_to_compress",
        "before": {"messages": len(messages), "tokens": tokens},
        "after": {"messages": len(messages), "tokens": tokens},
        "phases": {
            "deduplicated": 0,
            "demoted": 0,
            "arguments_shortened": 0,
            "media_stripped": 0,
            "summarized_messages": 0,
            "demoted_in_summary": 0,
        },
        "summary": {"index": None, "provider": None, "chars": 0, "fallback": False},
        "warnings": [],
        "aborted": False,
        "fallback_used": False,
        "refused_would_grow": False,
        "summary_model_fallback": False,
        "error": None,
        "error_kind": None,
        "cooldown_seconds": None,
        "savings_percent": 0.0,
        "dropped_count": 0,
        "tool_pairs_repaired": 0,
        "forced": force,
        "focus_topic": focus_topic,
        # Milliseconds per phase that ran (free_passes, boundaries, summary, assemble; the
        # session adds archive): where a slow compaction spends its time.
        "timings_ms": {},
    }


def _lap(timings: dict[str, float], phase: str, mark: float) -> float:
    now = time.perf_counter()
    timings[phase] = round((now - mark) * 1000, 3)
    return now


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


def _all_free_passes(plan: PrunePlan, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The free passes' whole output (every planned one-liner built), counted in the report."""
    pruned = plan.materialize_all()
    report["phases"]["demoted"] = plan.stats.demoted
    report["phases"]["demoted_in_summary"] = 0
    return pruned


def _record_phase1(report: dict[str, Any], stats: PruneStats) -> None:
    phases = report["phases"]
    phases["deduplicated"] = stats.deduplicated
    phases["arguments_shortened"] = stats.arguments_shortened
    phases["media_stripped"] = stats.media_stripped
