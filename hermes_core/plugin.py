"""The plugin API: the one module built-in and third-party plugins import (besides the public
``hermes_core`` package). Re-exports only; the rest of the core is private to it.

Hooks and host state, the records that cross hook boundaries, configuration sections and field
checkers, engines, the message model, transcript readers, token counting, bounded reads, logging,
errors and CLI helpers (docs/plugin-guide.md lists them). Names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core import bounded
    from hermes_core.aio import run_on_host_loop
    from hermes_core.cli.app import CliState, emit_json, emit_table, fail, guarded
    from hermes_core.cli.html_out import html_option, write_report_html
    from hermes_core.cli.transcripts_cmd import format_option, load_for_cli, resolve_format
    from hermes_core.config import Config, ConfigSection, load_config, resolve_home
    from hermes_core.config_fields import (
        boolean,
        clamped,
        field,
        free_mapping,
        gate,
        integer,
        name_list,
        number,
        section,
        string,
        string_list,
        tri_state,
    )
    from hermes_core.content_tokens import content_tokens
    from hermes_core.conversion import ANTHROPIC_CONTENT, takes_marker
    from hermes_core.diagnostics import HostWarning, collecting, drain_warnings, record_warning
    from hermes_core.engine import (
        MINIMUM_CONTEXT_LENGTH,
        CompressionReport,
        ContextEngine,
        coerce_usage,
        model_threshold,
    )
    from hermes_core.errors import (
        ConfigError,
        ContextOverflowError,
        HermesError,
        HermesPluginError,
        InvalidMessagesError,
        StoreError,
    )
    from hermes_core.files import (
        DEFAULT_MAX_BYTES,
        FileRefused,
        max_read_bytes,
        open_regular,
        read_bytes_bounded,
        read_fd_bounded,
        read_text_bounded,
    )
    from hermes_core.frozen import FrozenTools, all_frozen, as_frozen_tools, freeze_tools
    from hermes_core.history import ProcessedHistory
    from hermes_core.history_scan import REF_KEY, REFS_KEY, HistoryScan
    from hermes_core.hookspecs.markers import hookimpl, hookspec
    from hermes_core.host import host_state
    from hermes_core.logging import get_logger
    from hermes_core.messages import (
        ROLES,
        content_text,
        parse_transcript,
        read_transcript_text,
        tool_call_fields,
        validate_messages,
    )
    from hermes_core.model_data import lookup, snapshot_info
    from hermes_core.pairing import (
        TOOL_CALL_REMOVED,
        Match,
        answered_in_order,
        is_valid_pairing,
        match_results,
        pairing_problems,
        pending_calls,
        repair_pairing,
    )
    from hermes_core.payload import assemble_payload, canonical_tools
    from hermes_core.records import (
        ContextFile,
        ContextFileLoader,
        EngineSpec,
        PayloadContext,
        PromptBlock,
        PromptContext,
        SkillSource,
        ToolCallContext,
        ToolsContext,
        Usage,
    )
    from hermes_core.redaction import MASK, Redactor, plain_masks, redact, redact_data, redact_text
    from hermes_core.responses import responses_input, responses_tool
    from hermes_core.safeyaml import load_yaml
    from hermes_core.steer import steer_marker_example
    from hermes_core.store_guard import budgeted
    from hermes_core.summarizer import (
        ABORTING_KINDS,
        Summarizer,
        SummarizerAuthError,
        SummarizerEmptyError,
        SummarizerError,
        SummarizerMissingDependencyError,
        SummarizerModelNotFoundError,
        SummarizerNetworkError,
        SummarizerTimeoutError,
        SummaryRequest,
    )
    from hermes_core.text_repair import escape_surrogates_of
    from hermes_core.tokens import (
        IMAGE_TOKEN_ESTIMATE,
        MEDIA_PART_TYPES,
        RequestCounter,
        count_tokens,
        estimate_message_tokens,
        estimate_messages_tokens,
    )
    from hermes_core.transcript_format import (
        Detection,
        ReportBuilder,
        Transcript,
        TranscriptFormat,
        TranscriptSource,
        check_depth,
        image_placeholder,
        make_tool_call,
    )
    from hermes_core.transcripts import MISSING_RESULT_TEXT, read_transcript, read_transcripts, sniff_format
    from hermes_core.wire import anthropic_blocks

#: Module -> the names it gives the plugin API (imported on first access).
_FROM: dict[str, str] = {
    "hermes_core.aio": "run_on_host_loop",
    "hermes_core.cli.app": "CliState emit_json emit_table fail guarded",
    "hermes_core.cli.html_out": "html_option write_report_html",
    "hermes_core.cli.transcripts_cmd": "format_option load_for_cli resolve_format",
    "hermes_core.config": "Config ConfigSection load_config resolve_home",
    "hermes_core.config_fields": "boolean clamped field free_mapping gate integer name_list number section"
    " string string_list tri_state",
    "hermes_core.content_tokens": "content_tokens",
    "hermes_core.conversion": "ANTHROPIC_CONTENT takes_marker",
    "hermes_core.diagnostics": "HostWarning collecting drain_warnings record_warning",
    "hermes_core.engine": "MINIMUM_CONTEXT_LENGTH CompressionReport ContextEngine coerce_usage model_threshold",
    "hermes_core.errors": "ConfigError ContextOverflowError HermesError HermesPluginError InvalidMessagesError"
    " StoreError",
    "hermes_core.files": "DEFAULT_MAX_BYTES FileRefused max_read_bytes open_regular read_bytes_bounded"
    " read_fd_bounded read_text_bounded",
    "hermes_core.frozen": "FrozenTools all_frozen as_frozen_tools freeze_tools",
    "hermes_core.history": "ProcessedHistory",
    "hermes_core.history_scan": "REFS_KEY REF_KEY HistoryScan",
    "hermes_core.hookspecs.markers": "hookimpl hookspec",
    "hermes_core.host": "host_state",
    "hermes_core.logging": "get_logger",
    "hermes_core.messages": "ROLES content_text parse_transcript read_transcript_text tool_call_fields"
    " validate_messages",
    "hermes_core.model_data": "lookup snapshot_info",
    "hermes_core.pairing": "TOOL_CALL_REMOVED Match answered_in_order is_valid_pairing match_results"
    " pairing_problems pending_calls repair_pairing",
    "hermes_core.payload": "assemble_payload canonical_tools",
    "hermes_core.records": "ContextFile ContextFileLoader EngineSpec PayloadContext PromptBlock"
    " PromptContext SkillSource ToolCallContext ToolsContext Usage",
    "hermes_core.redaction": "MASK Redactor plain_masks redact redact_data redact_text",
    "hermes_core.responses": "responses_input responses_tool",
    "hermes_core.safeyaml": "load_yaml",
    "hermes_core.steer": "steer_marker_example",
    "hermes_core.store_guard": "budgeted",
    "hermes_core.summarizer": "ABORTING_KINDS SummarizerAuthError SummarizerEmptyError SummarizerError"
    " SummarizerMissingDependencyError SummarizerModelNotFoundError SummarizerNetworkError"
    " SummarizerTimeoutError SummaryRequest Summarizer",
    "hermes_core.tokens": "IMAGE_TOKEN_ESTIMATE MEDIA_PART_TYPES RequestCounter count_tokens"
    " estimate_message_tokens estimate_messages_tokens",
    "hermes_core.text_repair": "escape_surrogates_of",
    "hermes_core.transcript_format": "Detection ReportBuilder Transcript TranscriptFormat TranscriptSource"
    " check_depth image_placeholder make_tool_call",
    "hermes_core.transcripts": "MISSING_RESULT_TEXT read_transcript read_transcripts sniff_format",
    "hermes_core.wire": "anthropic_blocks",
}
_LAZY = {name: module for module, names in _FROM.items() for name in names.split()}

__all__ = [
    # hooks and host
    "hookimpl", "hookspec", "host_state",
    # records
    "ContextFile", "ContextFileLoader", "EngineSpec", "HostWarning", "PayloadContext", "PromptBlock",
    "PromptContext", "SkillSource", "ToolCallContext", "ToolsContext", "Usage",
    # configuration and field checkers
    "Config", "ConfigSection", "load_config", "resolve_home", "section", "field",
    "boolean", "clamped", "free_mapping", "gate", "integer", "name_list", "number", "string", "string_list",
    "tri_state",
    # engines and summarizers
    "ContextEngine", "CompressionReport", "MINIMUM_CONTEXT_LENGTH", "coerce_usage", "model_threshold",
    "ABORTING_KINDS", "Summarizer", "SummaryRequest", "SummarizerError", "SummarizerAuthError", "SummarizerEmptyError",
    "SummarizerMissingDependencyError", "SummarizerModelNotFoundError", "SummarizerNetworkError",
    "SummarizerTimeoutError",
    # the message model
    "ROLES", "ANTHROPIC_CONTENT", "content_text", "validate_messages", "parse_transcript", "read_transcript_text",
    "tool_call_fields",
    "ProcessedHistory", "REF_KEY", "REFS_KEY", "HistoryScan", "budgeted", "bounded", "responses_input", "responses_tool",
    "anthropic_blocks", "assemble_payload", "canonical_tools", "takes_marker",
    "TOOL_CALL_REMOVED", "Match", "answered_in_order", "is_valid_pairing", "match_results", "pairing_problems",
    "pending_calls", "repair_pairing",
    "MASK", "Redactor", "plain_masks", "redact", "redact_data", "redact_text", "steer_marker_example",
    # tools
    "FrozenTools", "all_frozen", "as_frozen_tools", "freeze_tools",
    # transcript readers
    "Detection", "MISSING_RESULT_TEXT", "ReportBuilder", "Transcript", "TranscriptFormat", "TranscriptSource",
    "check_depth", "escape_surrogates_of", "image_placeholder", "make_tool_call", "read_transcript",
    "read_transcripts", "sniff_format",
    # tokens and model data
    "IMAGE_TOKEN_ESTIMATE", "MEDIA_PART_TYPES", "RequestCounter", "content_tokens", "count_tokens",
    "estimate_message_tokens", "estimate_messages_tokens", "lookup", "snapshot_info",
    # files, YAML
    "DEFAULT_MAX_BYTES", "FileRefused", "max_read_bytes", "open_regular", "read_bytes_bounded", "read_fd_bounded",
    "read_text_bounded", "load_yaml",
    # logging, warnings, errors, async
    "get_logger", "record_warning", "collecting", "drain_warnings", "run_on_host_loop",
    "HermesError", "HermesPluginError", "ConfigError", "ContextOverflowError", "InvalidMessagesError", "StoreError",
    # CLI helpers for plugin-provided commands
    "CliState", "emit_json", "emit_table", "fail", "guarded", "html_option", "write_report_html",
    "format_option", "load_for_cli", "resolve_format",
]


def __getattr__(name: str) -> Any:
    import importlib

    if name == "bounded":  # a module: ``bounded.loads`` reads as what it does
        value: Any = importlib.import_module("hermes_core.bounded")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'hermes_core.plugin' has no attribute {name!r}")
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
