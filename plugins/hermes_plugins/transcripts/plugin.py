"""Declares the built-in transcript formats (each lives in its own module)."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_core.plugin import TranscriptFormat, hookimpl
from hermes_plugins.transcripts import (
    aider,
    anthropic,
    atif,
    claude_code,
    cline,
    codex,
    gemini_cli,
    goose,
    goose_db,
    hermes_agent,
    mini_swe_agent,
    openai_chat,
    openhands,
    openhands_events,
    openhands_jsonl,
    qwen_code,
    request_log,
    responses,
    swe_agent,
    tau_bench,
)


@hookimpl(trylast=True)
def hermes_transcript_formats() -> Iterator[TranscriptFormat]:
    yield openai_chat.FORMAT
    yield anthropic.FORMAT
    yield claude_code.FORMAT
    yield responses.FORMAT
    yield codex.FORMAT
    yield hermes_agent.FORMAT
    yield hermes_agent.DB_FORMAT
    yield swe_agent.FORMAT
    yield tau_bench.FORMAT
    yield openhands.FORMAT
    yield aider.FORMAT
    yield atif.FORMAT
    yield mini_swe_agent.FORMAT
    yield gemini_cli.FORMAT
    yield qwen_code.FORMAT
    yield cline.CLINE
    yield cline.ROO_CODE
    yield goose.FORMAT
    yield goose_db.FORMAT
    yield openhands_jsonl.FORMAT
    yield openhands_events.FORMAT
    yield request_log.FORMAT
