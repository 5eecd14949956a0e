"""Transcripts in and out through the installed formats: detect, read, write.

``read_transcript`` returns a ``Transcript`` (OpenAI chat messages, system prompt, tools, model,
and a ``ConversionReport`` of every record and change) whose pairing is valid. The most confident
format (``transcript_format``) wins; a file none accepts is an ``UnknownTranscriptFormatError``
listing each refusal. Repairs (orphans, missing results): docs/transcripts.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError, InvalidMessagesError
from hermes_core.host import PluginHost
from hermes_core.logging import get_logger
from hermes_core.messages import content_text
from hermes_core.pairing import early_answers, match_results, pairing_problems, pending_calls
from hermes_core.text_repair import binary_detail
from hermes_core.transcript_format import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    UnknownTranscriptFormatError,
)

log = get_logger("hermes_core.transcripts")

__all__ = [
    "MISSING_RESULT_TEXT",
    "detect_format",
    "load_transcript",
    "normalize_pairing",
    "read_transcript",
    "read_transcripts",
    "sniff_format",
    "transcript_formats",
    "write_transcript",
]

#: Detections below this are refusals even when a reader returned a number.
MIN_CONFIDENCE = 0.2
MISSING_RESULT_TEXT = "[no result was recorded for this tool call]"


# --- registry and detection -------------------------------------------------------------------

def _host(host: PluginHost | None) -> PluginHost:
    # The process's shared host, not one of this module's: ``refresh_plugins()`` renews it.
    return host if host is not None else PluginHost.shared()


def transcript_formats(host: PluginHost | None = None) -> dict[str, TranscriptFormat]:
    """Every installed format by name (from ``hermes_transcript_formats``)."""
    return _host(host).transcript_formats()


def detect_format(
    source: TranscriptSource, formats: Mapping[str, TranscriptFormat]
) -> tuple[TranscriptFormat, dict[str, Detection]]:
    """The most confident format for ``source`` and every format's answer."""
    answers: dict[str, Detection] = {}
    for name, fmt in formats.items():
        try:
            answer = fmt.detect(source)
        except InvalidMessagesError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken detector costs its own format only
            record_warning(
                "transcript_detector_failed",
                f"format {name!r} (plugin {fmt.plugin or '?'}) failed to inspect {source.name}: "
                f"{type(exc).__name__}: {exc}",
                plugin=fmt.plugin or None, path=source.name,
            )
            answer = Detection.refuse(f"detector failed: {type(exc).__name__}")
        if not isinstance(answer, Detection):
            answer = Detection.refuse("detector returned no Detection")
        answers[name] = answer
    ranked = sorted(
        ((d.confidence, name) for name, d in answers.items()
         if d.confidence is not None and d.confidence >= MIN_CONFIDENCE),
        key=lambda item: (-item[0], item[1]),
    )
    if not ranked:
        if source.kind == "binary":
            # One line a person can act on, not every format's refusal of the same bytes.
            raise UnknownTranscriptFormatError(source.name, {}, binary_detail(source.head_bytes))
        if source.kind == "json":
            source.document()  # a document that does not parse: say so rather than "no format"
        raise UnknownTranscriptFormatError(source.name, {n: d.reason for n, d in answers.items()})
    return formats[ranked[0][1]], answers


def sniff_format(path_or_text: str | Path | bytes, *, host: PluginHost | None = None) -> str | None:
    """The format auto-detection would pick for the input, or ``None`` (unreadable, unknown)."""
    try:
        source = TranscriptSource.open(path_or_text)
        if source.kind == "empty":
            return None
        return detect_format(source, transcript_formats(host))[0].name
    except InvalidMessagesError:
        return None


# --- reading ----------------------------------------------------------------------------------


def read_transcripts(
    path_or_text: str | Path | bytes,
    format: str = "auto",
    *,
    host: PluginHost | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Transcript]:
    """Every conversation in the input (several for a tau-bench list or a ``state.db``)."""
    formats = transcript_formats(host)
    source = TranscriptSource.open(path_or_text, options=options, progress=progress)
    if source.kind == "empty":
        raise InvalidMessagesError(f"{source.name}: empty transcript")
    wanted = (format or "auto").strip().lower()
    if wanted == "auto":
        fmt, _ = detect_format(source, formats)
    elif wanted in formats:
        fmt = formats[wanted]
    else:
        raise InvalidMessagesError(
            f"unknown transcript format {format!r}; installed: {', '.join(sorted(formats)) or '(none)'}"
        )
    source.report.format = fmt.name
    source.report.source = source.name
    try:
        result = fmt.read(source)
    except RecursionError:
        raise InvalidMessagesError(f"{source.name}: nested too deeply to read as {fmt.name}") from None
    except HermesPluginError:
        raise
    except InvalidMessagesError as exc:
        # A reader that fails midway names the record; the reader's name says which reading failed.
        text = str(exc)
        if f"as {fmt.name}" not in text and f"{fmt.name} transcript" not in text:
            text = f"{text} (read as {fmt.name})"
        raise InvalidMessagesError(text + _forced_hint(source, fmt, formats, wanted), index=exc.index) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InvalidMessagesError(
            f"{source.name}: not a valid {fmt.name} transcript ({type(exc).__name__}: {exc})"
            + _forced_hint(source, fmt, formats, wanted)
        ) from None
    runs = result if isinstance(result, list) else [result]
    run_index = source.options.get("index")
    if not isinstance(result, list) and isinstance(run_index, int) and run_index != 0:
        # A one-conversation format ignores the index: a run that does not exist is an error,
        # never silently the only one there is.
        raise InvalidMessagesError(
            f"{source.name}: holds one conversation ({fmt.name}); there is no index {run_index} (0 is the only one)"
        )
    out = [_finish(run, fmt, source, single=len(runs) == 1) for run in runs]
    for transcript in out:
        report = transcript.conversion
        assert report is not None
        log.info("transcript_read", path=source.name, format=fmt.name, records=report.records,
                 messages=report.messages, unaccounted=report.unaccounted)
        for warning in report.warnings:
            record_warning("transcript_conversion", f"{source.name}: {warning}", path=source.name,
                           format=fmt.name)
    return out


def _forced_hint(
    source: TranscriptSource, fmt: TranscriptFormat, formats: Mapping[str, TranscriptFormat], wanted: str
) -> str:
    """When ``--format`` forced a reader that fails: what its detector says, and which format
    detection would pick (a mini-swe-agent file forced as swe-agent says so)."""
    if wanted == "auto":
        return ""
    try:
        own = fmt.detect(source)
        picked, _ = detect_format(source, formats)
    except Exception:  # noqa: BLE001 - a hint only; the reader's own error is what matters
        return ""
    hint = f"; its detector says: {own.reason}" if own.confidence is None else ""
    if picked.name != fmt.name:
        hint += f"; detected as {picked.name} (try --format {picked.name} or auto)"
    return hint


def read_transcript(
    path_or_text: str | Path | bytes,
    format: str = "auto",
    *,
    host: PluginHost | None = None,
    index: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Transcript:
    """Read one conversation from a file path, text or bytes, in any installed format.

    ``format`` is ``"auto"`` (detect by content) or a format name; ``index`` picks one run of a
    file that holds several (a tau-bench result list): without it such a file is an error that
    says how many runs it holds.
    """
    opts = dict(options or {})
    if index is not None:
        opts["index"] = index
    runs = read_transcripts(path_or_text, format, host=host, options=opts, progress=progress)
    if len(runs) != 1:
        name = runs[0].conversion.source if runs and runs[0].conversion else str(path_or_text)[:80]
        raise InvalidMessagesError(
            f"{name}: holds {len(runs)} conversations; choose one with index=N (--index N, 0-based)"
            " or read them all with read_transcripts"
        )
    return runs[0]


def _finish(transcript: Transcript, fmt: TranscriptFormat, source: TranscriptSource, *, single: bool) -> Transcript:
    # A reader of a multi-run file may keep a report per run; otherwise runs share the file's.
    report = source.run_reports.get(id(transcript), source.report)
    messages = normalize_pairing(_name_unnamed_calls(list(transcript.messages), report), report)
    problems = pairing_problems(messages)
    if problems:  # pragma: no cover - normalize_pairing leaves none; a guard for third parties
        report.warn(f"tool pairing still invalid after repair: {problems[0]}")
    return attrs.evolve(
        transcript, messages=messages, format=fmt.name, conversion=report.build(messages)
    )


def _name_unnamed_calls(messages: list[dict[str, Any]], report: ReportBuilder) -> list[dict[str, Any]]:
    """Give a tool call without an id one (``call_missing_<message>_<position>``), and the
    id-less results right after its message the ids of those calls in order: a call without an
    id can be neither answered nor sent. Counted as ``tool_call_ids_generated``."""
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not isinstance(calls, list):
            continue
        made: list[str] = []
        for position, call in enumerate(calls):
            if isinstance(call, dict) and not (call.get("id") or call.get("call_id")):
                call["id"] = f"call_missing_{index}_{position}"
                made.append(call["id"])
        if not made:
            continue
        report.changed("tool_call_ids_generated", len(made))
        following = index + 1
        while made and following < len(messages) and messages[following].get("role") == "tool":
            if not messages[following].get("tool_call_id"):
                messages[following]["tool_call_id"] = made.pop(0)
            following += 1
    return messages


def normalize_pairing(messages: list[dict[str, Any]], report: ReportBuilder) -> list[dict[str, Any]]:
    """Make ``messages`` valid by the pairing rule, counting every change in ``report``.

    Results move right after the assistant message whose call they answer (Claude Code writes
    the results of parallel calls between later blocks of the same response; a result recorded
    just before its call is moved after it, ``early_answers``); an orphan result
    becomes a user message marked ``_injected: "orphan-tool-result"``; a call with no result
    (other than the newest message's, which may be in flight) gets a placeholder result.
    """
    if not any(m.get("role") == "tool" or m.get("tool_calls") for m in messages):
        return messages
    if not pairing_problems(messages):
        return messages
    answers, unanswered = match_results(messages)
    early = early_answers(messages, answers, unanswered)
    if early:  # results recorded just before their call go after it (see ``early_answers``)
        answers = {**answers, **early}
        reattached = set(early.values())
        unanswered = [match for match in unanswered if match not in reattached]
    pending = set(pending_calls(messages))
    if pending and any(
        i not in answers for i in range(next(iter(pending))[0] + 1, len(messages))
    ):  # an orphan result after the newest calls becomes a user message: they are not in flight
        pending = set()
    results_for: dict[int, list[int]] = defaultdict(list)
    for result_index, (assistant_index, _pos) in answers.items():
        results_for[assistant_index].append(result_index)
    missing: dict[int, list[int]] = defaultdict(list)
    for assistant_index, position in unanswered:
        if (assistant_index, position) not in pending:
            missing[assistant_index].append(position)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if index in answers:
                continue
            header = f"[tool result {message.get('tool_call_id')!r} answers no call]"
            content = message.get("content")
            # Parts (an image a tool returned) stay parts: flattening to text would drop them.
            body: Any = (
                [{"type": "text", "text": header}, *content] if isinstance(content, list)
                else f"{header}\n{content_text(content)}"
            )
            out.append({"role": "user", "content": body, "_injected": "orphan-tool-result"})
            report.relabelled("orphan_tool_result_to_user")
            continue
        out.append(message)
        if role == "assistant" and (index in results_for or index in missing):
            placed = sorted(results_for.get(index, ()))
            expected = index + 1
            for result_index in placed:
                if result_index != expected:
                    report.changed("tool_results_moved_after_their_call")
                expected = result_index + 1
                out.append(messages[result_index])
            calls = message.get("tool_calls") or []
            for position in missing.get(index, ()):
                call = calls[position] if position < len(calls) else {}
                out.append({
                    "role": "tool",
                    "tool_call_id": str(call.get("id") or call.get("call_id") or ""),
                    "content": MISSING_RESULT_TEXT,
                    "_is_error": True,
                })
                report.changed("missing_tool_results_filled")
    return out


def load_transcript(path: str | Path, format: str = "auto") -> list[dict[str, Any]]:
    """A transcript file in any installed format as OpenAI chat messages (system prompt first)."""
    return read_transcript(Path(path), format).chat_messages()


# --- writing ----------------------------------------------------------------------------------


def write_transcript(
    transcript: Transcript,
    format: str,
    *,
    host: PluginHost | None = None,
    notes: ReportBuilder | None = None,
) -> str:
    """``transcript`` as text in ``format`` (a format with a writer: ``openai``, ``anthropic``).

    Changes the target forces (renamed duplicate ids ...) are counted on ``notes``.
    """
    formats = transcript_formats(host)
    fmt = formats.get((format or "").strip().lower())
    writable = sorted(name for name, f in formats.items() if f.write is not None)
    if fmt is None or fmt.write is None:
        raise InvalidMessagesError(
            f"cannot write transcript format {format!r}; formats with a writer: {', '.join(writable)}"
        )
    return fmt.write(transcript, notes if notes is not None else ReportBuilder(format=fmt.name))
