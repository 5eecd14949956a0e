"""Transcripts on the command line: ``hermes-ctx formats``, ``hermes-ctx convert``, and the
``--format`` / ``--index`` options every command that reads a transcript shares.

``load_for_cli`` is the one way a command reads a transcript (detected unless ``--format``
says; a progress bar on a terminal); unreadable input exits 2 with each format's refusal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.app import CliState, cli, emit_json, emit_table, fail, guarded
from hermes_core.transcript_format import ReportBuilder, Transcript, UnknownTranscriptFormatError
from hermes_core.transcripts import read_transcript, sniff_format, write_transcript

#: Draw the reading progress bar only for inputs at least this large.
PROGRESS_MIN_BYTES = 4 * 1024 * 1024
TARGETS = ("openai", "anthropic", "responses")
#: ``--to`` names that differ from the transcript format's own name.
TARGET_FORMATS = {"responses": "openai-responses"}


def format_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--format auto|NAME`` and ``--index N`` for a command that reads a transcript."""
    fn = click.option(
        "--index", "transcript_index", type=click.IntRange(min=0), default=None, metavar="N",
        help="Which conversation of a file that holds several (tau-bench lists), 0-based.",
    )(fn)
    return click.option(
        "--format", "transcript_format", default="auto", show_default=True, metavar="auto|NAME",
        help="Transcript format (see `hermes-ctx formats`); auto detects it from the content.",
    )(fn)


def load_for_cli(state: CliState, path: Path, fmt: str = "auto", index: int | None = None) -> Transcript:
    """Read ``path`` for a command; every failure exits 2 with a one-line reason."""
    bar: Any = None
    shown = [0]

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label=f"Reading {path.name}", file=sys.stderr)
            bar.__enter__()
        bar.update(max(0, done - shown[0]))
        shown[0] = done

    # A folder (one event a file) reports progress in files; its reader calls only past 512.
    show = _stderr_is_tty() and (path.is_dir() or (path.is_file() and path.stat().st_size >= PROGRESS_MIN_BYTES))
    try:
        return read_transcript(path, fmt, host=state.host, index=index,
                               progress=progress if show else None)
    except UnknownTranscriptFormatError as exc:
        if not exc.refusals:  # binary data: one line, no list of formats refusing the same bytes
            fail(str(exc))
        lines = [f"{path}: not a transcript in any known format; formats tried:"]
        lines += [f"  {name}: {why}" for name, why in exc.refusals.items()]
        fail("\n".join(lines))
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)


def resolve_format(state: CliState, path: Path, fmt: str = "auto") -> str | None:
    """The format ``--format`` names, or the detected one (``None`` when nothing accepts it)."""
    if fmt and fmt != "auto":
        return fmt
    return sniff_format(path, host=state.host)


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@cli.command("formats")
@click.option("--json", "as_json", is_flag=True,
              help="JSON rows: {name, description, versions, plugin, writes}.")
@click.pass_obj
@guarded
def formats_command(state: CliState, as_json: bool) -> None:
    """List the transcript formats that can be read (and written), with the tool versions each
    reader was written against."""
    formats = state.host.transcript_formats()
    rows = [
        {"name": f.name, "description": f.description, "versions": f.versions, "plugin": f.plugin,
         "writes": f.write is not None}
        for f in sorted(formats.values(), key=lambda f: f.name)
    ]
    if as_json:
        emit_json(rows)
        return
    emit_table(["NAME", "WRITES", "VERSIONS", "PLUGIN", "DESCRIPTION"],
               [[r["name"], "yes" if r["writes"] else "-", r["versions"] or "-", r["plugin"], r["description"]]
                for r in rows])


@cli.command("convert")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the converted transcript here (default: stdout).")
@click.option("--to", "target", type=click.Choice(TARGETS), default="openai", show_default=True,
              help="Format to write.")
@format_option
@click.option("--json", "as_json", is_flag=True, help="Print the conversion report as JSON.")
@click.pass_obj
@guarded
def convert_command(state: CliState, file: Path, out: Path | None, target: str,
                    transcript_format: str, transcript_index: int | None, as_json: bool) -> None:
    """Convert a transcript in any known format to OpenAI chat, Anthropic Messages or an
    OpenAI Responses request body (--to responses).

    The conversion report (what was merged, dropped, relabelled, with counts) goes to stderr,
    or to stdout as JSON with --json (then -o is required for the transcript itself).
    """
    if as_json and out is None:
        fail("--json prints the report on stdout: give -o FILE for the converted transcript")
    transcript = load_for_cli(state, file, transcript_format, transcript_index)
    notes = ReportBuilder(format=target, source=str(out or "<stdout>"))
    text = write_transcript(transcript, TARGET_FORMATS.get(target, target), host=state.host,
                            notes=notes)
    if out is not None:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"{out}: cannot write the output: {exc}")
    else:
        click.echo(text, nl=False)
    assert transcript.conversion is not None
    report = transcript.conversion.to_dict()
    written = notes.build()
    report["written"] = {"format": target, "output": str(out) if out else None,
                         "changed": dict(written.changed), "relabelled": dict(written.relabelled),
                         "dropped": dict(written.dropped)}
    if as_json:
        emit_json(report)
    else:
        _print_report(report)


def _print_report(report: dict[str, Any]) -> None:
    def echo(line: str) -> None:
        click.echo(line, err=True)  # the transcript may be on stdout
    echo(f"Read {report['source']} as {report['format']}: {report['records']:,} records -> "
         f"{report['messages']:,} messages, {report['tool_calls']:,} tool calls")
    for key in ("merged", "absorbed", "dropped", "relabelled", "changed"):
        for reason, count in report[key].items():
            echo(f"  {key:<10} {count:>7,}  {reason}")
    if report["unaccounted"]:
        echo(f"  UNACCOUNTED {report['unaccounted']:,} records")
    written = report["written"]
    for key in ("changed", "relabelled", "dropped"):
        for reason, count in written[key].items():
            echo(f"  written    {count:>7,}  {reason} ({written['format']})")
    for warning in report["warnings"]:
        echo(f"  warning    {warning}")
