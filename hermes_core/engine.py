"""The ContextEngine base class: what a context engine must keep and may override.

A third party subclasses ``ContextEngine``, overrides methods by name and registers the class
through ``hermes_context_engines``; one instance per session, its public counters read by the
host. Lifecycle: ``on_session_start`` -> (``update_from_response``, ``should_compress``,
``compress`` when it says yes)* -> ``on_session_end``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from hermes_core.config import Config
from hermes_core.records import Usage
from hermes_core.tokens import estimate_messages_tokens

MINIMUM_CONTEXT_LENGTH = 64_000


class EngineHost(Protocol):
    """What an engine uses of the plugin host that built it (``host.PluginHost``, which stands
    on this module): the summariser factories by provider name."""

    def summarizers(self) -> dict[str, Any]: ...


@attrs.frozen(kw_only=True, eq=False)
class KnownInput:
    """What the host read of a ``compress`` call's input in a pass of its own
    (``Session.compress``, ``hermes_core.intake``), handed to the engine as
    ``ContextEngine.known_input`` so that it need not read the list again: ``estimate`` is
    ``estimate_messages_tokens(messages)``; ``valid``: ``pairing_problems(messages) == []``
    (pending calls allowed) was shown (``False`` says "not shown"); ``scan``: the columns a
    compaction recorder reads (``hermes_core.history_scan.HistoryScan``), when a
    ``hermes_session_compacted`` plugin is there to read them. It speaks of that list object at
    that length only."""

    messages: Any
    length: int
    estimate: int | None = None
    valid: bool = False
    scan: Any = None

    def describes(self, messages: Any) -> bool:
        return messages is self.messages and len(messages) == self.length


def coerce_usage(usage: Any) -> Usage:
    """Normalise a provider's usage (a dict or an SDK object) into ``Usage``.

    Reads ``prompt_tokens`` (OpenAI) or ``input_tokens`` (Anthropic, where cached input is
    reported apart and added back), ``completion_tokens``/``output_tokens`` and
    ``total_tokens``. Missing or non-numeric fields count as 0.
    """
    if isinstance(usage, Usage):
        return usage

    def read(*names: str) -> int:
        for name in names:
            value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
            if isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                return int(value)
        return 0

    if usage is None:
        return Usage()
    cache_read = read("cache_read_input_tokens")
    cache_write = read("cache_creation_input_tokens")
    prompt = read("prompt_tokens")
    if not prompt:
        prompt = read("input_tokens")
        if prompt:
            prompt += cache_read + cache_write
    completion = read("completion_tokens", "output_tokens")
    total = read("total_tokens") or prompt + completion
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def model_threshold(model: str, overrides: Mapping[str, float], default: float) -> float:
    """``compression.model_thresholds``: the longest key contained in ``model`` wins."""
    best: str | None = None
    name = model or ""
    for key in overrides:
        if key and key in name and (best is None or len(key) > len(best)):
            best = key
    return float(overrides[best]) if best is not None else float(default)


def _int_or(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@attrs.frozen(kw_only=True)
class CompressionReport:
    """What the last ``compress`` did, as the host reads it (any engine, same fields).

    ``status`` is ``compressed``, ``nothing_to_compress``, ``ineffective``, ``aborted`` or
    ``would_not_fit`` (the engine ran, and every further pass too, but the request counted
    after it is still over the threshold: a warning says so); ``details`` keeps the engine's
    full report (``hermes-ctx compress --json`` shows it).

    ``tokens_after`` is the whole request after the compaction (system prompt, messages, tool
    schemas) counted as ``counted_by`` says (``hermes_core.tokens.counting_method``: an exact
    tokenizer, a stand-in, or an estimate with its margin), against ``threshold_tokens``;
    ``None`` when no compaction ran in the request loop (an engine called on its own).
    """

    status: str = "nothing_to_compress"
    aborted: bool = False
    fallback_used: bool = False
    refused_would_grow: bool = False
    error: str | None = None
    error_kind: str | None = None
    dropped_count: int | None = None
    before_messages: int | None = None
    after_messages: int | None = None
    tokens_after: int | None = None
    counted_by: str | None = None
    threshold_tokens: int | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def fits(self) -> bool | None:
        """Whether the counted request is within the threshold (``None``: not counted)."""
        if self.tokens_after is None or self.threshold_tokens is None:
            return None
        return self.tokens_after <= self.threshold_tokens

    @classmethod
    def coerce(cls, report: CompressionReport | Mapping[str, Any] | None) -> CompressionReport:
        """A report from an engine's mapping (tolerant: wrong types read as absent)."""
        if isinstance(report, CompressionReport):
            return report
        raw: Mapping[str, Any] = report if isinstance(report, Mapping) else {}
        before = raw.get("before") if isinstance(raw.get("before"), Mapping) else {}
        after = raw.get("after") if isinstance(raw.get("after"), Mapping) else {}
        error = raw.get("error")
        kind = raw.get("error_kind")
        fit = raw.get("fit") if isinstance(raw.get("fit"), Mapping) else {}
        method = fit.get("counted_by")  # type: ignore[union-attr]
        return cls(
            status=str(raw.get("status") or "nothing_to_compress"),
            aborted=raw.get("aborted") is True,
            fallback_used=raw.get("fallback_used") is True,
            refused_would_grow=raw.get("refused_would_grow") is True,
            error=error if isinstance(error, str) else None,
            error_kind=kind if isinstance(kind, str) else None,
            dropped_count=_int_or(raw.get("dropped_count"), None),
            before_messages=_int_or(before.get("messages"), None),  # type: ignore[union-attr]
            after_messages=_int_or(after.get("messages"), None),  # type: ignore[union-attr]
            tokens_after=_int_or(fit.get("tokens_after"), None),  # type: ignore[union-attr]
            counted_by=method if isinstance(method, str) else None,
            threshold_tokens=_int_or(fit.get("threshold_tokens"), None),  # type: ignore[union-attr]
            details=dict(raw),
        )


class ContextEngine:
    """Base class of every context engine (``hermes_core.ContextEngine``).

    Subclasses must implement ``compress``; the defaults of everything else are usable. Engines
    are constructed by the host as ``EngineClass(config=..., host=...)`` and then configured
    for the model with ``update_model``.
    """

    #: The engine's registered name; subclasses set it.
    name: str = "base"

    def __init__(self, *, config: Config | None = None, host: EngineHost | None = None) -> None:
        self.config: Config = config if config is not None else Config()
        section = self.config.compression
        self.host = host
        self.model = ""
        self.provider = ""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.threshold_tokens = 0
        self.context_length = 0
        self.max_tokens: int | None = None
        self.compression_count = 0
        # compression.* is the user's word for every engine, not only the built-in one.
        self.configured_threshold_percent = float(section.threshold)
        self.threshold_percent = float(section.threshold)
        self.protect_first_n = int(section.protect_first_n)
        self.protect_last_n = int(section.protect_last_n)
        self.target_ratio = float(section.target_ratio)
        #: The rough size of the request right after the last compaction (set by the host).
        self.last_compression_rough_tokens = 0
        self.emit_automatic_compaction_status = True
        self.session_id = ""
        #: The last compression's report (engine-defined mapping), or None.
        self.last_compression_report: Mapping[str, Any] | None = None
        #: What the host already read of the input of the ``compress`` call in progress
        #: (set around a manual compression; read it through ``input_estimate`` / ``input_valid``).
        self.known_input: KnownInput | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A conversation begins (or continues after a compaction, ``boundary_reason``)."""
        self.session_id = session_id

    def update_from_response(self, usage: Any) -> None:
        """Record the provider's usage of the last call. Only prompt tokens drive decisions."""
        u = coerce_usage(usage)
        self.last_prompt_tokens = u.prompt_tokens
        self.last_completion_tokens = u.completion_tokens
        self.last_total_tokens = u.total_tokens

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether to compress now (the first element of ``should_compress_info``)."""
        return self.should_compress_info(prompt_tokens)[0]

    def should_compress_info(self, prompt_tokens: int | None = None) -> tuple[bool, str | None]:
        """``(should, block_reason)``; the default compares with ``threshold_tokens``."""
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        if self.threshold_tokens <= 0 or tokens < self.threshold_tokens:
            return False, None
        return True, None

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        """Whether a rough pre-request estimate should wait for real provider usage."""
        return False

    def input_estimate(self, messages: list[dict[str, Any]]) -> int:
        """``estimate_messages_tokens(messages)``; from ``known_input`` when it describes them."""
        known = getattr(self, "known_input", None)
        if known is not None and known.estimate is not None and known.describes(messages):
            return int(known.estimate)
        return estimate_messages_tokens(messages)

    def input_valid(self, messages: list[dict[str, Any]]) -> bool:
        """Whether ``known_input`` shows ``messages`` valid by the pairing rule (pending calls
        allowed); ``False`` when it was not shown (check it yourself)."""
        known = getattr(self, "known_input", None)
        return known is not None and known.valid and known.describes(messages)

    def input_scan(self, messages: Any) -> Any:
        """The ``HistoryScan`` of ``messages`` from ``known_input`` when it describes them, else
        None (read the messages yourself)."""
        known = getattr(self, "known_input", None)
        return known.scan if known is not None and known.describes(messages) else None

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """Whether anything lies outside the protected regions (answers /compress cheaply)."""
        return True

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        """Return a compacted copy of ``messages`` (never mutate the input).

        Returning the very same list object means "no progress".
        """
        raise NotImplementedError(f"{type(self).__name__} must implement compress()")

    def fit_to(self, messages: list[dict[str, Any]], target_tokens: int) -> list[dict[str, Any]]:
        """Further passes after a ``compress`` whose request the host counted over the
        threshold: shrink ``messages`` to about ``target_tokens`` of this engine's own
        estimate (the host scales its counted target to it). Returns the same list object
        when nothing more can be done, and the host reports ``would_not_fit``. The default
        does nothing; the built-in compressor limits oversized results, then the tail."""
        return messages

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """A real session boundary (exit, /reset): never called per turn."""

    def on_session_reset(self) -> None:
        """Forget usage and counters (``last_prompt_tokens`` back to 0, not -1)."""
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
        self.compression_count = 0

    def export_state(self) -> dict[str, Any]:
        """What of this engine must outlive the process (JSON-able): the Session stores it after
        every compaction attempt and gives it back to ``import_state`` when another process
        opens the same session. Subclasses add their counters, blocks and cooldowns."""
        return {"compression_count": self.compression_count}

    def import_state(self, state: Mapping[str, Any]) -> None:
        """Take back what ``export_state`` gave (unknown or ill-typed keys are ignored)."""
        count = state.get("compression_count")
        if isinstance(count, int) and not isinstance(count, bool):
            self.compression_count = count

    def compression_report(self) -> CompressionReport | None:
        """The last ``compress`` call's report; the default reads ``last_compression_report``."""
        if self.last_compression_report is None:
            return None
        return CompressionReport.coerce(self.last_compression_report)

    def note_compacted_size(self, rough_tokens: int) -> None:
        """The host's rough estimate of the whole request right after a compaction."""
        self.last_compression_rough_tokens = int(rough_tokens)

    def recent_compressions(self, window: int | None = None) -> int:
        """Compressions within the last ``compression.thrash_window_turns`` turns (0 = unknown)."""
        return 0

    # --- tools an engine may expose to the model -----------------------------------------

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Tool definitions this engine adds to the request (none by default)."""
        return []

    def handle_tool_call(self, name: str, args: Mapping[str, Any], **kwargs: Any) -> str:
        """Handle a call to one of this engine's tools; returns a JSON string."""
        return json.dumps({"error": f"Unknown context engine tool: {name}"})

    # --- status and model switches -------------------------------------------------------

    def get_status(self) -> dict[str, Any]:
        """Usage figures for display."""
        last = max(0, self.last_prompt_tokens)
        usage = min(100.0, last / self.context_length * 100) if self.context_length else 0
        return {
            "last_prompt_tokens": last,
            "threshold_tokens": self.threshold_tokens,
            "context_length": self.context_length,
            "usage_percent": usage,
            "compression_count": self.compression_count,
        }

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
        """Adopt a (new) model and window; recompute the threshold.

        The base rule reads config: ``threshold_percent`` is ``compression.threshold`` (or the
        longest matching ``compression.model_thresholds`` key), ``threshold_tokens =
        int(context_length * threshold_percent)``, capped by ``compression.threshold_tokens``.
        The compressor overrides it with the reference's full derivation.
        """
        self.model = model or ""
        self.provider = provider or self.provider
        self.context_length = int(context_length or 0)
        if max_tokens is not None:
            self.max_tokens = max_tokens
        section = self.config.compression
        self.threshold_percent = model_threshold(
            self.model, section.model_thresholds, self.configured_threshold_percent
        )
        self.threshold_tokens = int(self.context_length * self.threshold_percent)
        cap = section.threshold_tokens
        if cap is not None and cap > 0 and self.threshold_tokens > cap:
            self.threshold_tokens = cap
        self.last_prompt_tokens = 0
        self.last_completion_tokens = 0
        self.last_total_tokens = 0
