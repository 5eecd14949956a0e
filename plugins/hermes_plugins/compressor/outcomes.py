"""How a compaction ends: committed (the savings judged, two ineffective runs in a row block
automatic ones), the free passes' result alone, refused (a summary that would grow the
conversation) or unchanged - and the report fields each outcome sets.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_core.plugin import (
    estimate_messages_tokens,
    get_logger,
)
from hermes_plugins.compressor.assemble import (
    sanitize_tool_pairs,
    strip_historical_media,
)
from hermes_plugins.compressor.plan import PrunePlan, PruneStats
from hermes_plugins.compressor.summary_step import SummaryStep

log = get_logger(__name__)


class CompactionOutcomes(SummaryStep):
    """The ends of ``CompressorEngine``'s compaction run (its base; see there for the state)."""

    _call_tokens: int | None
    awaiting_real_usage_after_compression: bool

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


def _all_free_passes(plan: PrunePlan, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The free passes' whole output (every planned one-liner built), counted in the report."""
    pruned = plan.materialize_all()
    report["phases"]["demoted"] = plan.stats.demoted
    report["phases"]["demoted_in_summary"] = 0
    return pruned


def new_report(messages: list[dict[str, Any]], force: bool, focus_topic: str | None, tokens: int) -> dict[str, Any]:
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


def lap(timings: dict[str, float], phase: str, mark: float) -> float:
    now = time.perf_counter()
    timings[phase] = round((now - mark) * 1000, 3)
    return now


def record_phase1(report: dict[str, Any], stats: PruneStats) -> None:
    phases = report["phases"]
    phases["deduplicated"] = stats.deduplicated
    phases["arguments_shortened"] = stats.arguments_shortened
    phases["media_stripped"] = stats.media_stripped
