"""The summary step of a compaction (phase 3): which summariser, the budget and request it
gets, its failures (cooldown, a summary model that falls back to the main one, abort) and the
deterministic handoff used when it is unavailable; the output cleaned and grounded.

``SummaryStep`` is the part of ``CompressorEngine`` that talks to summarisers; the engine
(``compressor/engine.py``) decides when to call it and what to do with the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_core.plugin import (
    ABORTING_KINDS,
    ContextEngine,
    HermesPluginError,
    SummarizerError,
    SummaryRequest,
    estimate_message_tokens,
    estimate_messages_tokens,
    get_logger,
    record_warning,
    redact,
)
from hermes_plugins._common.injected import request_text
from hermes_plugins._common.reasoning import strip_reasoning
from hermes_plugins.compressor.antithrash import AntiThrash
from hermes_plugins.compressor.boundaries import (
    is_actionable_user,
)
from hermes_plugins.compressor.extractive import ExtractiveSummarizer, build_handoff
from hermes_plugins.compressor.framing import (
    SUMMARY_ANCHOR,
    strip_answer_banner,
)
from hermes_plugins.compressor.prompt import build_summary_prompt
from hermes_plugins.compressor.sections import LATEST, MAX_CHARS, verbatim
from hermes_plugins.compressor.serialize import (
    bound_text,
    message_text,
    prepare_turns,
    serialize_turns,
)

log = get_logger(__name__)

SUMMARY_RATIO = 0.20
SUMMARY_MIN_TOKENS = 2_000
PREVIOUS_SUMMARY_MAX = 20_000
#: The grounded "Latest user request" quotes at most this much of the request.
GROUNDED_REQUEST_MAX = 2_500
_NO_NEW_KINDS = frozenset({"missing_dependency"})


class SummaryAborted(Exception):
    """The summariser failed in a way that must leave the conversation untouched."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class SummaryStep(ContextEngine):
    """The summariser calls of ``CompressorEngine`` (its base; see there for the state)."""

    clock: Callable[[], float]
    max_summary_tokens: int
    _guard: AntiThrash
    _previous_summary: str | None
    _summarizers: dict[str, Any]
    _redacted_output: bool
    _summary_model_failed: bool

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
        """``(body, provider, fallback_used, (error, kind) | None)``; raises ``SummaryAborted``."""
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
                raise SummaryAborted(kind, redact(str(exc))) from exc
            if use_summary_model and kind not in _NO_NEW_KINDS and self.model:
                log.info("summary_model_fallback", summary_model=summary_model, model=self.model, kind=kind)
                self._summary_model_failed = True
                report["summary_model_fallback"] = True
                report["summary_model_error"] = shorten(redact(str(exc)))
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
            raise SummaryAborted(kind, redact(str(exc))) from exc
        message = shorten(redact(str(exc)))
        seconds = self._note_failure(kind, message, provider)
        report["cooldown_seconds"] = seconds
        reason = f"{kind}: {message}"
        return self._fallback(request, provider, kind, reason, report), provider, True, (message, kind)

    def _note_failure(self, kind: str, message: str, provider: str) -> float:
        missing = kind == "provider_missing"
        seconds = self._guard.start_cooldown(kind, self.clock(), provider_missing=missing)
        self._guard.last_failure = f"{kind}: {shorten(redact(message))}"
        log.warning("summary_failed", provider=provider, kind=kind, cooldown_seconds=seconds)
        return seconds

    def _fallback(
        self, request: SummaryRequest, provider: str, kind: str, reason: str, report: dict[str, Any]
    ) -> str:
        note = (
            f"Note: the summariser {provider!r} was unavailable ({shorten(redact(reason))}); these "
            "notes were built deterministically from the condensed turns."
        )
        self._warn(
            report,
            "compression_summary_fallback",
            f"compression used a deterministic handoff: summariser {provider!r} unavailable "
            f"({shorten(redact(reason))})",
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


def shorten(text: str, limit: int = 220) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
