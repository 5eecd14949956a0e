"""``hermes-ctx cache-report``: replay a transcript or request log and print what a provider's
prompt cache would read, write and charge for each request (``cache_report`` prices them).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import (
    CliState,
    InvalidMessagesError,
    PayloadContext,
    emit_json,
    emit_table,
    fail,
    format_option,
    html_option,
    load_for_cli,
    resolve_format,
    write_report_html,
)
from hermes_plugins.cache_report import PROVIDERS, CacheSimulator, read_rates, usd_prices
from hermes_plugins.cache_rules import cache_ttl
from hermes_plugins.replay_requests import RequestSpec, load_report_input, replay, specs_from_transcript
from hermes_plugins.request_log_stream import open_request_log

# --- CLI ------------------------------------------------------------------------------------


def _break_text(brk: Mapping[str, Any] | None) -> str:
    if brk is None:
        return "-"
    where = f" (message {brk['message']})" if brk.get("message") is not None else ""
    return f"{brk['cause']} @ byte {brk['byte']}{where}"


def _progress_target() -> Any:
    """Where a progress bar goes: stderr when it is a terminal (a person watching), else
    nowhere (pipes, logs and CI get the data alone)."""
    return sys.stderr if sys.stderr.isatty() else None


@click.command("cache-report")
@click.argument("file", type=click.Path())
@click.option("--provider", type=click.Choice(PROVIDERS), default="anthropic", show_default=True,
              help="Whose cache rules and layout to replay under.")
@click.option("--model", default="", help="Model name passed to the layout hook.")
@click.option("--ttl", type=click.Choice(["5m", "1h"]), default=None,
              help="Cache TTL (default: prompt_caching.cache_ttl).")
@click.option("--json", "as_json", is_flag=True,
              help="JSON: {turns: [{index, prefix_tokens, cache_write_tokens, cache_read_tokens, "
                   "uncached_tokens, break}], total: {input_tokens, cost_ratio}}.")
@html_option
@format_option
@click.pass_obj
def cache_report_command(state: CliState, file: str, provider: str, model: str,
                         ttl: str | None, as_json: bool, transcript_format: str = "auto",
                         transcript_index: int | None = None, html_out: Path | None = None) -> None:
    """Replay a transcript request by request and price it under a provider's prompt cache.

    Takes the report's own shapes (OpenAI chat, ``{"requests": [...]}``) or a transcript in any
    format ``hermes-ctx formats`` lists (``--format``; detected by content)."""
    config = state.config
    ctx = PayloadContext(
        provider=provider, model=model, session_id="cache-report", config=config,
        cache_ttl=cache_ttl(ttl, config),
    )
    rates = read_rates(provider, model)
    simulator = CacheSimulator(provider, read_price=rates["read"], usd=usd_prices(provider, model))
    terminal = _progress_target()
    with contextlib.ExitStack() as stack:
        try:
            specs, bar, streamed = _requests(state, file, transcript_format, transcript_index, terminal, stack)
            for payload in replay(specs, state.host.payload_cache_layout, ctx, consume=True):
                simulator.add(payload)
                if bar is not None and not streamed:
                    bar.update(1)
        except InvalidMessagesError as exc:
            fail(str(exc))
    if not simulator.turns:
        fail(f"{file}: no request to replay (no user message or tool result)")
    report = simulator.report()
    report["ttl"] = ctx.cache_ttl
    report["rates"] = rates
    if html_out is not None:
        write_report_html(state.host, html_out, command="cache-report", source=file, report=report)
    if as_json:
        emit_json(report, redact=True)
        return
    _print_report(report, provider)


def _requests(state: CliState, file: str, transcript_format: str, transcript_index: int | None,
              terminal: Any, stack: contextlib.ExitStack) -> tuple[Iterable[RequestSpec], Any, bool]:
    """``(requests, progress bar or None, streamed)``: a request log streams, one request at a
    time (memory follows the largest request, not the file; the bar counts the file's bytes);
    anything else is read whole (the bar counts requests)."""
    path = Path(file)
    if transcript_format in ("auto", "request-log") and not transcript_index and path.is_file():
        bar: Any = None
        if terminal is not None:
            bar = stack.enter_context(click.progressbar(
                length=path.stat().st_size, label="replaying requests", file=terminal))
        log = open_request_log(file, on_bytes=bar.update if bar is not None else None)
        if log is not None:
            stack.callback(log.close)
            return log.specs(), bar, True
    fmt = resolve_format(state, path, transcript_format)
    specs: list[RequestSpec]
    if path.is_dir():  # a session folder: the readers take it, or name every format tried
        specs = specs_from_transcript(load_for_cli(state, path, fmt or "auto", transcript_index))
    elif fmt in (None, "openai", "request-log"):  # its own shapes: every request as logged
        if transcript_index:
            fail(f"{file}: holds one conversation; there is no index {transcript_index} (0 is the only one)")
        specs = load_report_input(file)
    else:
        specs = specs_from_transcript(load_for_cli(state, path, fmt, transcript_index))
    bar = None
    if terminal is not None:
        bar = stack.enter_context(click.progressbar(length=len(specs), label="replaying requests", file=terminal))
    return specs, bar, False


def _print_report(report: dict[str, Any], provider: str) -> None:
    """The report as a table of requests and its totals, for a person."""
    emit_table(
        # The keys of the JSON turns, upper-cased.
        ["INDEX", "MESSAGES", "INPUT_TOKENS", "PREFIX_BYTES", "PREFIX_TOKENS", "CACHE_READ_TOKENS",
         "CACHE_WRITE_TOKENS", "UNCACHED_TOKENS", "COST_RATIO", "BREAK"],
        [
            [t["index"], t["messages"], t["input_tokens"], t["prefix_bytes"], t["prefix_tokens"],
             t["cache_read_tokens"], t["cache_write_tokens"], t["uncached_tokens"],
             f"{t['cost_ratio']:.2f}", _break_text(t["break"])]
            for t in report["turns"]
        ],
        redact=True,
    )
    total, rates = report["total"], report["rates"]
    click.echo(
        f"\n{total['requests']} requests, {total['input_tokens']:,} input tokens "
        f"({report['counter']}); provider {provider}, ttl {report['ttl']}: "
        f"read {total['cache_read_tokens']:,}, written {total['cache_write_tokens']:,}, "
        f"uncached {total['uncached_tokens']:,}; cost with caching / without = "
        f"{total['cost_ratio']:.3f} (saving {(1 - total['cost_ratio']) * 100:.1f}%), "
        f"{total['breaks']} prefix break(s)"
    )
    write = (f"written at {rates['write_5m']:g}x (5m) / {rates['write_1h']:g}x (1h)"
             if provider == "anthropic" else "no write charge")
    click.echo(f"rates: cached input read at {rates['read']:g}x the input price ({rates['read_source']}); {write}")
    if report.get("prices"):
        click.echo(f"in dollars: ${total['cost_usd']:,.6f} with caching, ${total['cost_usd_without_caching']:,.6f} "
                   f"without, saving ${total['saving_usd']:,.6f} ({report['prices']['source']})")
