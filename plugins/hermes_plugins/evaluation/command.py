"""``hermes-ctx eval FILE... [--engine A,B] [--context-length N ...] [--format F] [--index N]
[--json] [--judge]``.

Offline and deterministic (elapsed times aside): for each transcript, engine and window it
reports tokens before/after, the time the compression took, whether the output is valid by the
provider pairing rule, whether the last user request is still there verbatim, and per probe
category the share kept in context, recoverable through the archive, and lost, with the most
important losses. ``--json`` prints ``{"files": [{"file", "messages", "tokens", "runs": [...]}]}``
where each run is the dict ``runner.evaluate`` returns (plus ``judge`` with ``--judge``).

Windows: ``--context-length`` (repeatable); without it 32,000, 64,000 and the model's window
(the transcript's model, or ``--model``: the engine's window for it when the engine knows one,
else the published window of its family in ``MODEL_WINDOWS``, else 128,000).
``--format`` names the transcript format of every file (default: detected per file);
``--index N`` evaluates only the N-th (0-based) conversation of files that hold several, the
one labelled ``file#N`` in a report of the whole file.
Each run also shows its result's tokens **counted** (tiktoken for OpenAI models, else the same
count plus a stated margin; ``fit.py``) against the engine's threshold - ``fits`` NO is a failed
run, listed under the table and in ``failed`` of its JSON - and the error items its summary states
with no evidence in the transcript (``invented``; a failed run too).

Nothing eval prints holds a secret: the probes are taken from redacted text, and every string
of the table, the losses, the warnings and the JSON goes through ``hermes_core.redaction`` on
its way out. Progress shows on stderr while it runs, only when stderr is a terminal.
Exit codes: 0 done (a file that cannot be read is a warning, one line, when others could be
evaluated); 2 when no file could be evaluated (an empty folder, nothing readable: one line per
file says why), an unknown format or engine.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import (
    emit_json,
    fail,
    format_option,
    get_logger,
    guarded,
    html_option,
    record_warning,
    redact,
    write_report_html,
)
from hermes_plugins.evaluation.probes import CATEGORIES
from hermes_plugins.evaluation.runner import evaluate, share

log = get_logger(__name__)

DEFAULT_WINDOWS = (32_000, 64_000)
FALLBACK_MODEL_WINDOW = 128_000
#: Published context windows (tokens) of the model families real transcripts name, matched as
#: substrings of the model name (the longest match wins): "the model's window" of the report.
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude", 200_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini", 1_048_576),
)
SHORT = {
    "requests": "req",
    "errors": "err",
    "files_modified": "files",
    "failed_commands": "cmds",
    "decisions": "dec",
    "identifiers": "ids",
}


def read_conversations(
    path: Path, fmt: str = "auto", index: int | None = None, host: Any = None
) -> list[tuple[str, list[dict[str, Any]], str]]:
    """(label, messages, model) of each conversation in a transcript, in any format the
    transcript readers know (``fmt`` names one, else it is detected). A file that holds several
    (a tau-bench list) gives one per conversation, labelled ``file#N`` with the 0-based ``N``
    that ``--index N`` selects; ``index`` keeps only that one."""
    from hermes_core.plugin import InvalidMessagesError, read_transcripts

    found = read_transcripts(path, fmt, host=host)
    picked = list(enumerate(found))
    if index is not None:
        if not 0 <= index < len(found):
            raise InvalidMessagesError(
                f"{path}: index {index} out of range (0..{len(found) - 1}, {len(found)} conversation(s))")
        picked = [picked[index]]
    return [(str(path) if len(found) == 1 else f"{path}#{n}", list(item.chat_messages()), str(item.model or ""))
            for n, item in picked]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{round(value * 100):d}%"


def known_window(model: str) -> int:
    """The published window of ``model`` (the longest key of ``MODEL_WINDOWS`` that starts it
    or one of its parts), else 0."""
    import re

    name = model.lower()
    # A family name starts the model name or one of its parts (``openai/o3``, ``us.anthropic.claude``).
    found = [(len(key), window) for key, window in MODEL_WINDOWS
             if re.search(rf"(?:^|[/:._\s-]){re.escape(key)}", name)]
    return max(found)[1] if found else 0


def _model_window(state: Any, engine: str, model: str) -> int:
    """The window of the transcript's model: the engine's when it knows one, else the table's,
    else 128,000."""
    if not model:
        return FALLBACK_MODEL_WINDOW
    try:
        probe = state.host.create_engine(engine, state.config)
        probe.update_model(model, 0)
        window = int(getattr(probe, "context_length", 0) or 0)
    except Exception:  # noqa: BLE001 - an engine that cannot say keeps the fallback
        window = 0
    return window or known_window(model) or FALLBACK_MODEL_WINDOW


def _out(line: str) -> None:
    """One line of the table on stdout, redacted (the net for anything a probe let through)."""
    click.echo(redact(line))


def redacted(value: Any) -> Any:
    """``value`` (the JSON report) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v) for v in value]
    return value


def _fits(run: Mapping[str, Any]) -> str:
    counted = run.get("tokens_counted")
    if counted is None:
        return "-"
    return f"{'yes' if run['fits'] else 'NO'} {counted:,}/{run['fit_limit']:,}"


def render(report: dict[str, Any]) -> None:
    """The human table: one block per file, one row per engine x window, losses below."""
    for item in report["files"]:
        _out(f"{item['file']}  ({item['messages']:,} messages, {item['tokens']:,} tokens)")
        header = [
            "engine",
            "window",
            "tokens after",
            "fits (counted/limit)",
            "saved",
            "ms",
            "valid",
            "invented",
            "last req",
        ]
        header += [f"{SHORT[c]} k/r/l" for c in CATEGORIES]
        rows = []
        for run in item["runs"]:
            row = [
                run["engine"],
                f"{run['context_length']:,}",
                f"{run['tokens_after']:,}",
                _fits(run),
                _pct(run["savings"]),
                f"{run['elapsed_ms']:.0f}",
                "yes" if run["valid"] else "NO",
                str(run.get("invented_failures", "-")),
                "yes" if run["last_request_verbatim"] else "NO",
            ]
            for category in CATEGORIES:
                counts = run["probes"][category]
                row.append(
                    "-"
                    if not counts["total"]
                    else f"{_pct(share(counts, 'kept'))}/{_pct(share(counts, 'recoverable'))}/"
                    f"{_pct(share(counts, 'lost'))} of {counts['total']}"
                )
            rows.append(row)
        widths = [
            max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))
        ]
        for row in [header, *rows]:
            _out("  " + "  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        for run in item["runs"]:
            for reason in run.get("failed") or ():
                _out(f"  FAILED {run['engine']} @ {run['context_length']:,}: {reason}")
            for invented in run.get("invented") or ():
                _out(f"    - invented: {invented}")
            if run.get("judge"):
                judge = run["judge"]
                _out(
                    f"  judge {run['engine']} @ {run['context_length']:,}: "
                    + ", ".join(
                        f"{name} {_pct(score)}"
                        for name, score in judge["scores"].items()
                    )
                )
            if run["losses"]:
                _out(f"  most important losses, {run['engine']} @ {run['context_length']:,}:")
                for loss in run["losses"]:
                    _out(f"    - {loss['category']}: {loss['probe']} (message {loss['message']})")
        _out("")
    runs = [run for item in report["files"] for run in item["runs"]]
    failed = [run for run in runs if run.get("failed")]
    _out(f"{len(runs)} run(s), {len(failed)} failed"
         + (": " + ", ".join(f"{r['engine']} @ {r['context_length']:,}" for r in failed[:10]) if failed else ""))


def failed_runs(report: Mapping[str, Any]) -> int:
    """How many runs of ``report`` failed a check (fit, validity, invented failures)."""
    return sum(1 for item in report["files"] for run in item["runs"] if run.get("failed"))


@click.command("eval")
@click.argument(
    "files",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=True, path_type=Path),
)
@click.option(
    "--engine",
    "engines",
    default=None,
    metavar="A,B",
    help="Engines to compare, comma-separated (default: context.engine).",
)
@click.option(
    "--context-length",
    "windows",
    type=click.IntRange(min=1_000),
    multiple=True,
    help="Window in tokens; repeat for several (default 32,000, 64,000 and the model's).",
)
@click.option(
    "--model", default="", help="Model name when the transcript does not say."
)
@format_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@html_option
@click.option(
    "--judge",
    is_flag=True,
    help="Also ask the configured summary provider questions about the compacted context.",
)
@click.pass_obj
@guarded
def eval_command(state: Any, **options: Any) -> None:
    """Measure what compaction keeps: probes from the condensed part of each transcript.

    FILES are transcripts in any format `hermes-ctx formats` lists, or folders of them; a file
    that holds several conversations (a tau-bench list) is evaluated per conversation
    (labelled file#N), or only the one --index N names.
    """
    try:
        _eval_command(state, **options)  # the options as click names them (see the decorators)
    finally:
        show_warnings(state)


#: Warnings about the sessions eval opens for itself (their archive masked a secret, as any
#: session's does): true of every run and of nothing the user keeps, so not shown.
EVAL_OWN_SESSIONS_ONLY = frozenset({"secrets_masked_in_archive"})


def show_warnings(state: Any) -> None:
    """The run's warnings on stderr, each once and redacted (a reader's or an engine's message
    may quote the transcript); the CLI then prints none of them again."""
    from hermes_core.plugin import drain_warnings

    seen: set[tuple[str, str]] = set()
    for warning in [*(getattr(state, "warnings", None) or ()), *drain_warnings()]:
        key = (str(getattr(warning, "kind", "")), str(getattr(warning, "message", warning)))
        if key[0] in EVAL_OWN_SESSIONS_ONLY:
            continue  # about the throwaway sessions eval opens, not the user's data
        if key not in seen:
            seen.add(key)
            click.echo(f"warning: {redact(key[1])}", err=True)
    if hasattr(state, "warnings_shown"):
        state.warnings_shown = True


def _eval_command(
    state: Any,
    files: tuple[Path, ...],
    engines: str | None,
    windows: tuple[int, ...],
    model: str,
    as_json: bool,
    judge: bool,
    transcript_format: str,
    transcript_index: int | None,
    html_out: Path | None = None,
) -> None:
    names = _engine_names(state, engines, transcript_format)
    paths, empty = _transcript_paths(files, transcript_format, state.host)
    report: dict[str, Any] = {"files": []}
    unreadable = 0
    reasons: list[str] = []
    with progress(len(paths)) as bar:
        for path in paths:
            bar.show(path.name)
            try:
                conversations = read_conversations(path, transcript_format, transcript_index, state.host)
            except Exception as exc:  # noqa: BLE001 - any reader failure is bad input for this file
                # One line, printed once with the other warnings at the end (not logged too).
                unreadable += 1
                log.debug("eval_transcript_unreadable", path=str(path), error=redact(str(exc)))
                reason = str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}"
                reasons.append(reason)
                if len(paths) > 1:  # one file alone: its reason is the error line itself
                    record_warning("eval_unreadable", redact(f"cannot read the transcript {reason}"),
                                   plugin="evaluation")
                bar.file_done()
                continue
            if not conversations:
                unreadable += 1
                record_warning("eval_unreadable", redact(f"{path}: holds no conversation to evaluate"),
                               plugin="evaluation")
            for label, messages, found_model in conversations:
                report["files"].append(
                    _evaluate_file(state, label, messages, found_model, names, windows, model, judge,
                                   lambda run, label=label: bar.show(f"{Path(label).name} {run}"))
                )
            bar.file_done()
    if not report["files"]:
        if unreadable == 1 and len(paths) == 1 and reasons:
            why = [redact(f"cannot read the transcript {reasons[0]}")]  # one file: the reason is the error
        else:
            why = [f"{unreadable} file(s), none readable (each one's reason is below)"] if unreadable else []
        why += [f"{path}: no transcript files in the folder" for path in empty]
        fail("no file could be evaluated: " + "; ".join(why or ["no transcript files given"]))
    report["failed_runs"] = failed_runs(report)
    if html_out is not None:
        write_report_html(state.host, html_out, command="eval", source=", ".join(str(p) for p in files),
                          report=redacted(report))
    if as_json:
        emit_json(redacted(report))
    else:
        render(report)
    if report["failed_runs"]:
        # A run that does not fit, invents a failure or is invalid fails the evaluation: a
        # script (CI) sees it in the exit code, the reasons are in the output above.
        sys.exit(1)


def _engine_names(state: Any, engines: str | None, transcript_format: str) -> list[str]:
    """The engines to evaluate (``--engines``, else the configured one); exits 2 naming an
    unknown engine or transcript format."""
    names = [n.strip() for n in (engines or state.config.context.engine).split(",") if n.strip()]
    known_formats = state.host.transcript_formats()
    if transcript_format.strip().lower() not in ("auto", *known_formats):
        fail(f"unknown transcript format {transcript_format!r}; installed: "
             f"{', '.join(sorted(known_formats)) or '(none)'}")
    known_engines = state.host.context_engines()
    unknown = [n for n in names if n not in known_engines]
    if unknown:
        fail(f"unknown engine {unknown[0]!r}; available engines: {', '.join(sorted(known_engines))}")
    return names


def _transcript_paths(
    files: tuple[Path, ...], transcript_format: str, host: Any
) -> tuple[list[Path], list[Path]]:
    """(the transcripts to read, the folders that hold none): each file given; a folder a reader
    takes as one transcript (an OpenHands session folder); else every file of a folder and every
    subfolder that is itself one transcript."""
    paths: list[Path] = []
    empty: list[Path] = []
    for path in files:
        if path.is_dir() and not _is_transcript_folder(path, transcript_format, host):
            found = sorted(p for p in path.iterdir() if not p.name.startswith(("README", "."))
                           and (p.is_file() or (p.is_dir() and _is_transcript_folder(p, transcript_format, host))))
            paths.extend(found)
            if not found:
                empty.append(path)
        else:
            paths.append(path)
    return paths, empty


def _is_transcript_folder(path: Path, fmt: str, host: Any) -> bool:
    """Whether a reader takes the folder itself as one transcript (an OpenHands session folder:
    one event a numbered file) rather than as a folder of transcript files."""
    from hermes_core.plugin import sniff_format

    if fmt.strip().lower() != "auto":
        formats = host.transcript_formats()
        chosen = formats.get(fmt.strip().lower())
        return chosen is not None and _detects(chosen, path)
    return sniff_format(path, host=host) is not None


def _detects(fmt: Any, path: Path) -> bool:
    from hermes_core.plugin import InvalidMessagesError, TranscriptSource

    try:
        return fmt.detect(TranscriptSource.open(path)).confidence is not None
    except InvalidMessagesError:
        return False


class Progress:
    """A progress bar on stderr over the files, naming the run in progress; silent when
    stderr is not a terminal (logs and pipes stay clean)."""

    def __init__(self, bar: Any = None) -> None:
        self.bar = bar
        self.label = ""

    def show(self, label: str) -> None:
        if self.bar is not None:
            self.label = redact(label)
            self.bar.render_progress()

    def file_done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)


def _stderr() -> Any:
    return sys.stderr


@contextmanager
def progress(total: int) -> Iterator[Progress]:
    stream = _stderr()
    if total <= 0 or not stream.isatty():
        yield Progress()
        return
    shown = Progress()
    bar: Any
    with click.progressbar(length=total, label="eval", file=stream,
                           item_show_func=lambda _item: shown.label) as bar:
        shown.bar = bar
        yield shown


def _evaluate_file(
    state: Any,
    label: str,
    messages: list[dict[str, Any]],
    found_model: str,
    names: list[str],
    windows: tuple[int, ...],
    model: str,
    judge: bool,
    step: Any = None,
) -> dict[str, Any]:
    from hermes_core.plugin import estimate_messages_tokens

    item: dict[str, Any] = {
        "file": label,
        "messages": len(messages),
        "tokens": estimate_messages_tokens(messages),
        "runs": [],
    }
    for name in names:
        sizes = list(windows) or [
            *DEFAULT_WINDOWS,
            _model_window(state, name, model or found_model),
        ]
        for size in dict.fromkeys(sizes):
            if step is not None:
                step(f"{name} @ {size:,}")
            run = evaluate(
                messages,
                engine=name,
                context_length=size,
                config=state.config,
                host=state.host,
                model=model or found_model,
                home=state.home_path,
            )
            if judge:
                from hermes_plugins.evaluation.judge import JudgeUnavailable, judge_run

                try:
                    run["judge"] = judge_run(messages, run, engine=name, context_length=size,
                                             state=state, model=model or found_model)
                except JudgeUnavailable as exc:
                    fail(str(exc))
            run.pop("_after", None)
            run.pop("_probes", None)
            item["runs"].append(run)
    return item
