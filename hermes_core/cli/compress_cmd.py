"""``hermes-ctx compress``: run the selected engine over a transcript and report what it did.

The engine's ``compress`` step runs through the host with ``force=True``; the result is counted
as a session counts a request (``compaction_fit.settle_fit``) and checked against the threshold.
Exit codes: 0 compressed, nothing to do or ineffective; 1 aborted or would_not_fit; 2 invalid
input or configuration.
"""

from __future__ import annotations

import contextvars
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.app import CliState, cli, emit_json, fail, guarded
from hermes_core.cli.html_out import html_option, write_report_html
from hermes_core.cli.transcripts_cmd import format_option, load_for_cli
from hermes_core.diagnostics import collecting
from hermes_core.engine import CompressionReport
from hermes_core.redaction import redact_data
from hermes_core.tokens import estimate_messages_tokens

#: The window assumed when neither ``--context-length`` nor anything else says (the
#: reference's fallback for unknown models).
DEFAULT_CONTEXT_LENGTH = 256_000
#: Show a progress bar on stderr once a compression has run this long.
PROGRESS_AFTER_SECONDS = 1.0
STATUSES = ("compressed", "nothing_to_compress", "ineffective", "aborted", "would_not_fit")


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the resulting messages here (a JSON array).")
@click.option("--context-length", type=click.IntRange(min=1), default=None,
              help=f"Model window in tokens (default: --model's from the model data, else {DEFAULT_CONTEXT_LENGTH:,}).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="Output tokens reserved from the window.")
@click.option("--model", default="", help="Model name (per-model thresholds, summariser fallback).")
@click.option("--focus", default=None, metavar="TEXT", help="Topic the summary should keep in detail.")
@click.option("--engine", "engine_name", default=None, metavar="NAME",
              help="Engine to use (default: context.engine).")
@click.option("--json", "as_json", is_flag=True,
              help="JSON report: {status, before, after, phases, summary, warnings}.")
@html_option
@format_option
@click.pass_obj
@guarded
def compress(
    state: CliState,
    file: Path,
    out: Path | None,
    context_length: int | None,
    max_tokens: int | None,
    model: str,
    focus: str | None,
    engine_name: str | None,
    as_json: bool,
    transcript_format: str,
    transcript_index: int | None,
    html_out: Path | None = None,
) -> None:
    """Compress a transcript (any format `hermes-ctx formats` lists; detected by content)."""
    messages = load_for_cli(state, file, transcript_format, transcript_index).chat_messages()
    config = state.config
    name = engine_name or config.context.engine
    engine = state.host.create_engine(name, config)
    if not context_length and model:
        from hermes_core.model_data import lookup

        known = lookup(model)  # the model's window from the model data, when it knows the model
        context_length = known.context_window if known is not None else None
    engine.update_model(model, context_length or DEFAULT_CONTEXT_LENGTH, max_tokens=max_tokens)
    with collecting() as bucket:
        state.host.engine_step("on_session_start", engine, session_id="hermes-ctx-compress",
                               boundary_reason=None)
        result = _run_with_progress(state, engine, messages, focus)
        if not isinstance(result, list):
            result = messages
        typed = _typed_report(engine)
        aborted = typed is not None and typed.aborted
        fit = None
        if not aborted:
            result, fit = _settle_fit(state, engine, model, result)
    report = _report(engine, messages, result)
    if fit is not None:
        report["fit"] = fit
        if not fit["fits"]:
            report["status"] = "would_not_fit"
    report["warnings"] = list(report.get("warnings") or [])
    for warning in [*state.warnings, *bucket]:
        text = getattr(warning, "message", str(warning))
        if text not in report["warnings"]:
            report["warnings"].append(text)
    report["engine"] = name
    state.warnings_shown = True  # they are part of the report
    if out is not None:
        try:
            out.write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str) + "\n",
                           encoding="utf-8")
        except OSError as exc:
            fail(f"{out}: cannot write the output: {exc}")
        report["output"] = str(out)
    # What the report quotes (warnings, an error, the summariser's reason) may hold a secret
    # of the transcript: on screen it is masked (the -o file is the data asked for, as is).
    report = redact_data(report)
    if html_out is not None:
        write_report_html(state.host, html_out, command="compress", source=str(file), report=report,
                          before=messages, after=result, engine=engine)
    if as_json:
        emit_json(report)
    else:
        _print_report(report)
    if report["status"] in ("aborted", "would_not_fit"):
        sys.exit(1)


def _run_with_progress(state: CliState, engine: Any, messages: list[dict[str, Any]],
                       focus: str | None) -> Any:
    """Run the compress step in a worker; draw a progress bar on stderr if it takes a while."""
    phase = {"done": 0, "total": 4}
    if hasattr(engine, "progress"):
        def progress(name: str, done: int, total: int) -> None:
            phase["done"], phase["total"] = done, total

        engine.progress = progress
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def work() -> None:
        try:
            box["result"] = state.host.engine_step(
                "compress", engine, messages=messages, current_tokens=None, focus_topic=focus,
                force=True,
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=context.run, args=(work,), daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(PROGRESS_AFTER_SECONDS)
    if worker.is_alive():
        with click.progressbar(length=phase["total"], label="Compressing", file=sys.stderr) as bar:
            shown = 0
            while worker.is_alive():
                worker.join(0.1)
                if phase["done"] > shown:
                    bar.update(phase["done"] - shown)
                    shown = phase["done"]
            bar.update(max(0, phase["total"] - shown))
    worker.join()
    if hasattr(engine, "progress"):
        engine.progress = None
    if "error" in box:
        raise box["error"]
    box.setdefault("elapsed", time.monotonic() - started)
    return box.get("result")


def _settle_fit(state: CliState, engine: Any, model: str, result: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    """The result counted as the session counts a request (``compaction_fit.settle_fit``: the
    model's tokenizer, or cl100k_base with a stated margin), with the engine's further passes
    when it is over the threshold."""
    from hermes_core.compaction_fit import settle_fit
    from hermes_core.tokens import RequestCounter

    try:
        tokenizer = state.host.tokenizer(model)
    except Exception:  # noqa: BLE001 - a failing tokenizer plugin: count with ours
        tokenizer = None
    counter = RequestCounter(model, "", tokenizer)

    def further(current: list[dict[str, Any]], target: int, tokens: int) -> list[dict[str, Any]]:
        fit_to = getattr(engine, "fit_to", None)
        return fit_to(current, target) if callable(fit_to) else current

    return settle_fit(engine, result, counter, further=further)


def _typed_report(engine: Any) -> CompressionReport | None:
    """The engine's last report as a ``CompressionReport`` (``None``: an engine without one)."""
    report = engine.compression_report() if callable(getattr(engine, "compression_report", None)) else None
    return None if report is None else CompressionReport.coerce(report)


def _report(engine: Any, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    typed = _typed_report(engine)
    if typed is not None and typed.status in STATUSES:
        # The engine's details are the document (--json); what the CLI decides on is typed.
        report = dict(typed.details)
        report["status"] = typed.status
        if typed.error is not None:
            report["error"] = typed.error
        report["after"] = {"messages": len(after), "tokens": estimate_messages_tokens(after)}
        return report
    before_tokens = estimate_messages_tokens(before)
    after_tokens = estimate_messages_tokens(after)
    status = "nothing_to_compress" if after is before else (
        "compressed" if after_tokens < before_tokens * 0.9 else "ineffective"
    )
    return {
        "status": status,
        "before": {"messages": len(before), "tokens": before_tokens},
        "after": {"messages": len(after), "tokens": after_tokens},
        "phases": {"deduplicated": 0, "demoted": 0, "arguments_shortened": 0, "media_stripped": 0,
                   "summarized_messages": 0},
        "summary": {"index": None, "provider": None, "chars": 0, "fallback": False},
        "warnings": [],
    }


def _print_report(report: dict[str, Any]) -> None:
    before, after = report["before"], report["after"]
    headline = {
        "compressed": "Compressed",
        "nothing_to_compress": "Nothing to compress",
        "ineffective": "Compressed, but saved under 10% (ineffective)",
        "aborted": "Compression aborted: no messages were removed",
        "would_not_fit": "Compressed, but the result does not fit under the threshold (would_not_fit)",
    }[report["status"]]
    click.echo(f"{headline} (engine {report.get('engine', '?')})")
    click.echo(f"  messages  {before['messages']:,} -> {after['messages']:,}")
    click.echo(f"  tokens    ~{before['tokens']:,} -> ~{after['tokens']:,} (estimate)")
    fit = report.get("fit")
    if fit:
        verdict = "fits" if fit["fits"] else "does NOT fit"
        click.echo(f"  counted   {fit['tokens_after']:,} tokens ({fit['counted_by']}); threshold "
                   f"{fit['threshold_tokens']:,}: {verdict}")
    phases = report.get("phases") or {}
    done = [f"{key.replace('_', ' ')} {value:,}" for key, value in phases.items() if value]
    if done:
        click.echo(f"  phases    {', '.join(done)}")
    summary = report.get("summary") or {}
    if summary.get("index") is not None:
        kind = "fallback handoff" if summary.get("fallback") else "summary"
        click.echo(
            f"  {kind:<9} message {summary['index']} by {summary.get('provider')}, "
            f"{summary.get('chars', 0):,} chars"
        )
    if report.get("error"):
        click.echo(f"  reason    {report['error']}")
    if report.get("output"):
        click.echo(f"  written   {report['output']}")
    for warning in report.get("warnings") or ():
        click.echo(f"  warning   {warning}")
