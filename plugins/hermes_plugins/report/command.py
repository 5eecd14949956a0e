"""``hermes-ctx report TRANSCRIPT [--html FILE] [--json]``: the useful reports of one session together.

It replays the transcript request by request with the first engine of ``--engine`` at the
window (``--context-length``, else the model's window as ``eval`` finds it), compacting where
the engine's threshold is crossed (``report.replay``), evaluates every engine of ``--engine``
at that window (``eval``'s runner: probes kept / recoverable / lost), and prices the
transcript's requests under the provider's prompt cache (``cache-report``'s simulator).
``--json`` prints the data; ``--html FILE`` writes it as one offline page; without either a
few lines say what was found. Exit codes: 0 done, 2 bad input (one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import format_option, guarded, load_for_cli
from hermes_plugins.cache_rules import cache_ttl


def build_report(state: Any, path: Path, *, engines: list[str], window: int | None, provider: str,
                 model: str, transcript_format: str = "auto", transcript_index: int | None = None,
                 ttl: str | None = None) -> dict[str, Any]:
    """The report dict of ``hermes-ctx report`` (``--json`` prints it, ``--html`` renders it)."""
    from hermes_core.plugin import PayloadContext, estimate_messages_tokens
    from hermes_plugins.cache_report import CacheSimulator, read_rates, usd_prices
    from hermes_plugins.evaluation.command import _model_window, failed_runs
    from hermes_plugins.replay_requests import RequestSpec, replay
    from hermes_plugins.report.data import limit_detail, timeline
    from hermes_plugins.report.pages import _redacted
    from hermes_plugins.report.replay import lived_requests

    transcript = load_for_cli(state, path, transcript_format, transcript_index)
    messages = list(transcript.chat_messages())
    if not messages:
        from hermes_core.plugin import fail

        fail(f"{path}: holds no message to report on")
    model = model or str(transcript.model or "")
    size = window or _model_window(state, engines[0], model)
    # The cache is priced on the requests of the replayed session: after a compaction the
    # history is rewritten, and the prefix break it causes is what the section explains.
    lived: dict[str, Any] = {}
    requests = lived_requests(messages, engine=engines[0], context_length=size, config=state.config,
                              host=state.host, model=model, home=state.home_path, into=lived)
    tools = tuple(transcript.tools)

    def specs() -> Any:
        for sent in requests:
            if sent and sent[0].get("role") == "system" and isinstance(sent[0].get("content"), str):
                yield RequestSpec(system=sent[0]["content"], tools=tools, messages=sent[1:])
            else:
                yield RequestSpec(system=transcript.system_prompt or "", tools=tools, messages=sent)

    ctx = PayloadContext(provider=provider, model=model, session_id="hermes-ctx-report", config=state.config,
                         cache_ttl=cache_ttl(ttl, state.config))
    # The model's own prices: the cached-read rate, and dollars when the model data has them.
    rates = read_rates(provider, model)
    simulator = CacheSimulator(provider, read_price=rates["read"], usd=usd_prices(provider, model))
    for payload in replay(specs(), state.host.payload_cache_layout, ctx):
        simulator.add(payload)
    cache: dict[str, Any] | None = simulator.report() if simulator.turns else None
    if cache is not None:
        cache["ttl"] = ctx.cache_ttl
        cache["rates"] = rates

    runs, details = _runs(state, messages, engines, size, model)
    item = {"file": str(path), "messages": len(messages), "tokens": estimate_messages_tokens(messages),
            "runs": runs}
    ev: dict[str, Any] = {"files": [item]}
    ev["failed_runs"] = failed_runs(ev)
    compactions = lived["compactions"]
    hidden = limit_detail(compactions)
    note = _compactions_note(engines[0], size, lived, hidden)
    piped = lived["tool_results"]
    return _redacted({
        "command": "report",
        "source": str(path),
        "engine": engines[0],
        "model": model,
        "timeline": timeline(messages, window=lived["window"], threshold=lived["threshold"],
                             context=lived["context"], compactions=compactions),
        "compactions": compactions,
        "compactions_note": note,
        "tool_results": piped,
        "warnings": [f"the replay's tool-result pipeline: {w}" for w in piped["warnings"]],
        "eval": ev,
        "probes": details,
        "cache": cache,
    })


def _runs(state: Any, messages: list[dict[str, Any]], engines: list[str], size: int,
          model: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """``(eval runs, probe sections)``: each engine evaluated on the messages; the probes are
    listed once, in the probes section (the eval section keeps the counts and losses)."""
    from hermes_plugins.evaluation.runner import evaluate
    from hermes_plugins.report.probes import probe_section

    runs = []
    details = []
    for name in engines:
        run = evaluate(messages, engine=name, context_length=size, config=state.config, host=state.host,
                       model=model, home=state.home_path)
        run.pop("_after", None)
        run.pop("_probes", None)
        details.append(probe_section(run))
        run.pop("probe_detail", None)
        run.pop("probe_detail_not_shown", None)
        runs.append(run)
    return runs, details


def _compactions_note(engine: str, size: int, lived: dict[str, Any], hidden: int) -> str:
    """What the compactions section says about how the session was replayed."""
    from hermes_plugins.report.data import DETAIL_EACH_END

    note = (f"The session replayed request by request with the {engine} engine at a {size:,}-token window: "
            f"a compaction fires where the context reaches the threshold ({lived['threshold']:,} tokens).")
    piped = lived["tool_results"]
    note += (f" Tool results went through the tool-result pipeline as they arrived, as in a host that routes them "
             f"through hermes: {piped['spilled']:,} spilled to a file (replaced by a preview), {piped['limited']:,} "
             f"held to the output limits ({piped['after_last_compaction']['spilled']:,} and "
             f"{piped['after_last_compaction']['limited']:,} of them after the last compaction); the spill files were "
             "written to a temporary folder, removed after the replay, so the paths the previews name do not exist.")
    note += (" The cache economy below prices the requests of this replay, so each compaction's rewrite of the "
             "history shows as a prefix break.")
    if hidden:
        note += (f" The summary text and spans of {hidden} compaction(s) in the middle are not shown (the first "
                 f"and last {DETAIL_EACH_END} are); their figures are in the table.")
    return note


@click.command("report")
@click.argument("transcript", type=click.Path(exists=True, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report as one self-contained HTML file (opens offline).")
@click.option("--json", "as_json", is_flag=True, help="Print the report's data as JSON.")
@click.option("--engine", "engines", default=None, metavar="A,B",
              help="Engines, comma-separated (default: context.engine); the first one is replayed.")
@click.option("--context-length", "window", type=click.IntRange(min=1_000), default=None,
              help="Window in tokens (default: the model's window).")
@click.option("--provider", type=click.Choice(["anthropic", "openai"]), default="anthropic", show_default=True,
              help="Whose prompt-cache rules price the requests.")
@click.option("--ttl", type=click.Choice(["5m", "1h"]), default=None,
              help="Cache TTL (default: prompt_caching.cache_ttl).")
@click.option("--model", default="", help="Model name when the transcript does not say.")
@format_option
@click.pass_obj
@guarded
def report_command(state: Any, transcript: Path, html_out: Path | None, as_json: bool, engines: str | None,
                   window: int | None, provider: str, ttl: str | None, model: str, transcript_format: str,
                   transcript_index: int | None) -> None:
    """One report of a session: timeline, compactions, probes, cache economy (--html FILE: one offline page)."""
    from hermes_core.plugin import emit_json, fail
    from hermes_plugins.evaluation.command import show_warnings
    from hermes_plugins.report.html import render_html

    names = [n.strip() for n in (engines or state.config.context.engine).split(",") if n.strip()]
    known = state.host.context_engines()
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"unknown engine {unknown[0]!r}; available engines: {', '.join(sorted(known))}")
    try:
        data = build_report(state, transcript, engines=names, window=window, provider=provider, model=model,
                            transcript_format=transcript_format, transcript_index=transcript_index, ttl=ttl)
    finally:
        show_warnings(state)
    if html_out is not None:
        try:
            html_out.write_text(render_html(data), encoding="utf-8")
        except OSError as exc:
            fail(f"{html_out}: cannot write the HTML report: {exc}")
    if as_json:
        emit_json(data)
    elif html_out is None:
        tl = data["timeline"]
        click.echo(f"{transcript}: {tl['messages']:,} messages, ~{tl['tokens']:,} tokens; "
                   f"{len(data['compactions'])} compaction(s) at a {tl['window']:,}-token window "
                   f"(threshold {tl['threshold']:,}); write the page with --html FILE")
    if html_out is not None and not as_json:
        click.echo(f"wrote {html_out}", err=True)
