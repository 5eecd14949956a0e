"""One self-contained HTML file from a report's data (``report.data``): tables in the HTML itself
(readable without JavaScript, one behind every chart), charts drawn by Apache ECharts, whose
build is inlined with the data, so the file opens offline and asks the network for nothing.

Why ECharts (measured, minified builds from their registries, 2026-12): plotly.min.js 4,815,814
bytes (plotly 7.1.0, PyPI) leaves no room in a 5 MB report; bokeh.min.js 1,268,134 bytes
(bokeh 3.9.2) needs bokeh and numpy in the Python environment; uPlot 51,081 bytes (1.6.32, npm)
has no stacked bars, mark lines or category axes; ECharts' common build (5.6.0, npm) is 664,311
bytes with stacked bars, mark lines and points, data zoom, tooltips and a canvas renderer that
stays fast at thousands of bars.

Every figure shown in a table cell carries ``data-path``: where the same figure sits in the
report's JSON (the browser test compares the two).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

ECHARTS_VERSION = "5.6.0"
ECHARTS_FILE = "echarts.common.min.js"
#: Table rows rendered for a per-request list before the rest goes into a closed <details>.
OPEN_ROWS = 200

CAUSE_TEXT = {
    "tool_list_changed": "the tool definitions changed, so every cached prefix after them is invalid",
    "system_prompt_changed": "the system prompt changed (a compaction rebuilds it, or a volatile block moved)",
    "history_rewritten": "an earlier message changed (a compaction or an edit rewrote the history)",
}

_CSS = """
:root{--fg:#1d2430;--muted:#5b6575;--line:#d7dce3;--bg:#fff;--accent:#2456a6}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:1200px;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:2px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}p.meta{color:var(--muted);margin:0 0 12px}
nav a{margin-right:14px;color:var(--accent)}figure{margin:8px 0}.plot{width:100%;height:380px}
figcaption{color:var(--muted);font-size:13px}table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}thead th{background:#f2f4f7}
pre{white-space:pre-wrap;background:#f7f8fa;border:1px solid var(--line);padding:8px;max-height:420px;
overflow:auto;font-size:12px}details{margin:6px 0}summary{cursor:pointer;color:var(--accent)}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}.card{border:1px solid var(--line);border-radius:6px;
padding:8px 12px;min-width:150px}.card b{display:block;font-size:18px}.warn{color:#8a4b00}
.scroll{overflow-x:auto}
"""

_JS = """
(function(){
var data=JSON.parse(document.getElementById('hermes-report-data').textContent);
var view=JSON.parse(document.getElementById('hermes-report-view').textContent);
var charts=[];
function chart(id,option){var el=document.getElementById(id);if(!el)return;
 var c=echarts.init(el,null,{renderer:'canvas'});option.aria={enabled:true};option.animation=false;
 c.setOption(option);charts.push(c);el.setAttribute('data-rendered','1');}
window.addEventListener('resize',function(){charts.forEach(function(c){c.resize();});});
var fmt=function(v){return typeof v==='number'?v.toLocaleString('en-US'):v;};
var tl=data.timeline;
if(tl){
 var labels=tl.buckets.map(function(b){return b[0]===b[1]?String(b[0]):b[0]+'-'+b[1];});
 var size=tl.bucket_size||1;
 var series=tl.kinds.map(function(k){return {name:k,type:'bar',stack:'kinds',yAxisIndex:0,
   large:true,data:tl.series[k]};});
 if(tl.context&&tl.context.length){
  var marks=[];
  if(tl.window)marks.push({name:'window',yAxis:tl.window,label:{formatter:'window '+fmt(tl.window)}});
  if(tl.threshold)marks.push({name:'threshold',yAxis:tl.threshold,label:{formatter:'threshold '+fmt(tl.threshold)}});
  series.push({name:'context (tokens in the window)',type:'line',yAxisIndex:1,showSymbol:false,
   color:'#111',lineStyle:{width:2},
   data:tl.context.map(function(p){return [Math.floor(p.message/size),p.tokens];}),
   markLine:{symbol:'none',lineStyle:{type:'dashed',color:'#b3261e'},label:{position:'insideEndTop'},data:marks},
   markPoint:{symbol:'pin',symbolSize:38,data:tl.compactions.map(function(c,i){
     return {name:'compaction '+(i+1),coord:[Math.floor(c.message/size),c.before],value:i+1,itemStyle:{color:'#b3261e'},
       tooltip:{formatter:'compaction '+(i+1)+' at message '+c.message+': '+fmt(c.before)+' \\u2192 '+fmt(c.after)+' tokens'}};})}});
 }
 chart('chart-timeline',{tooltip:{trigger:'axis'},legend:{type:'scroll',top:0},grid:{top:40,left:60,right:70,bottom:70},
  xAxis:{type:'category',data:labels,name:'message'},
  yAxis:[{type:'value',name:size>1?'tokens per '+size+' messages':'tokens per message'},{type:'value',name:'context tokens',
   max:function(v){return Math.max(v.max,tl.window||0);}}],
  dataZoom:[{type:'inside'},{type:'slider'}],series:series});
}
var comps=data.compactions||[];
if(comps.length){
 var names=comps.map(function(c,i){return '#'+(i+1)+' @'+c.message;});
 var keys=['deduplicated','demoted','summarized_messages','kept_unchanged'];
 if(comps[0].spilled!==undefined)keys.splice(3,0,'spilled');
 chart('chart-compactions',{tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:60,right:20,bottom:40},
  xAxis:{type:'category',data:names},yAxis:{type:'value',name:'messages'},
  series:keys.map(function(k){return {name:k.replace('_',' '),type:'bar',
   data:comps.map(function(c){return k==='kept_unchanged'||k==='spilled'?c[k]:(c.phases[k]||0);})};})});
}
var ev=data.eval;
if(ev){
 var runs=[],rn=[],many=ev.files.length>1;
 ev.files.forEach(function(f){f.runs.forEach(function(r){runs.push(r);
  rn.push((many?f.file.split('/').pop()+': ':'')+r.engine+' @ '+r.context_length.toLocaleString('en-US'));});});
 var tot=function(r,v){var s=0;for(var k in r.probes){s+=r.probes[k][v];}return s;};
 chart('chart-eval-probes',{tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:60,right:20,bottom:60},
  xAxis:{type:'category',data:rn},yAxis:{type:'value',name:'probes'},
  series:['kept','recoverable','lost'].map(function(v){return {name:v,type:'bar',stack:'p',
   color:{kept:'#2e7d32',recoverable:'#f9a825',lost:'#c62828'}[v],
   data:runs.map(function(r){return tot(r,v);})};})});
 chart('chart-eval-tokens',{tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:70,right:20,bottom:60},
  xAxis:{type:'category',data:rn},yAxis:{type:'value',name:'tokens'},
  series:[{name:'tokens before',type:'bar',data:runs.map(function(r){return r.tokens_before;})},
   {name:'tokens after',type:'bar',data:runs.map(function(r){return r.tokens_after;})}]});
}
var cv=view.cache;
if(cv){
 chart('chart-cache',{tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:70,right:60,bottom:70},
  color:['#2e7d32','#f9a825','#c62828','#111'],
  xAxis:{type:'category',data:cv.labels,name:'request'},
  yAxis:[{type:'value',name:'tokens'},cv.cumulative_saving_usd?{type:'value',name:'saving, USD'}:
   {type:'value',name:'saving %',max:100,min:function(v){return Math.min(0,Math.floor(v.min/10)*10);}}],
  dataZoom:[{type:'inside'},{type:'slider'}],
  series:[{name:'cache read',type:'bar',stack:'t',large:true,data:cv.read},
   {name:'cache write',type:'bar',stack:'t',large:true,data:cv.write},
   {name:'uncached',type:'bar',stack:'t',large:true,data:cv.uncached},
   {name:cv.cumulative_saving_usd?'cumulative saving, USD':'cumulative saving %',type:'line',yAxisIndex:1,
    showSymbol:false,data:cv.cumulative_saving_usd||cv.saving,
    markPoint:{data:cv.breaks.map(function(slot){
     return {name:'break',coord:[slot,0],value:'break',symbol:'triangle',symbolSize:12};})}}]});
}
document.body.setAttribute('data-charts',String(charts.length));
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _shown(value: Any, *, pct: bool = False) -> str:
    """A figure as the page shows it: thousands separated, a share as a percentage."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if pct and isinstance(value, (int, float)):
        return f"{value * 100:.1f}%"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}"
    return str(value)


def _num(value: Any, path: str | None = None, *, pct: bool = False) -> str:
    """A right-aligned figure cell; ``path`` names where it is in the JSON."""
    attr = f' data-path="{_e(path)}"' if path else ""
    return f'<td class="n"{attr}>{_e(_shown(value, pct=pct))}</td>'


def _td(value: Any, path: str | None = None) -> str:
    attr = f' data-path="{_e(path)}"' if path else ""
    return f"<td{attr}>{_e(value)}</td>"


def _table(headers: Sequence[str], rows: Sequence[str], *, caption: str, numeric_from: int = 1) -> str:
    numeric = ' class="n"'
    head = "".join(f'<th scope="col"{numeric if i >= numeric_from else ""}>{_e(h)}</th>'
                   for i, h in enumerate(headers))
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    return (f'<div class="scroll"><table><caption class="sr">{_e(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def _rows_table(headers: Sequence[str], rows: Sequence[str], *, caption: str, numeric_from: int = 1) -> str:
    """A long table: the first OPEN_ROWS rows open, the rest in a closed <details>."""
    if len(rows) <= OPEN_ROWS:
        return _table(headers, rows, caption=caption, numeric_from=numeric_from)
    return (_table(headers, rows[:OPEN_ROWS], caption=caption, numeric_from=numeric_from)
            + f"<details><summary>{len(rows) - OPEN_ROWS:,} more rows</summary>"
            + _table(headers, rows[OPEN_ROWS:], caption=caption + " (continued)", numeric_from=numeric_from)
            + "</details>")


def _figure(chart_id: str, label: str, caption: str) -> str:
    return (f'<figure><div id="{chart_id}" class="plot" role="img" aria-label="{_e(label)}"></div>'
            f"<figcaption>{_e(caption)} The table below holds the same figures.</figcaption></figure>")


def _money_card(title: str, value: Any, path: str) -> str:
    return f'<div class="card">{_e(title)}<b data-path="{_e(path)}">{_e(money(value))}</b></div>'


def _card(title: str, value: Any, path: str | None = None, *, pct: bool = False) -> str:
    attr = f' data-path="{_e(path)}"' if path else ""
    return f'<div class="card">{_e(title)}<b{attr}>{_e(_shown(value, pct=pct))}</b></div>'


# --- sections ------------------------------------------------------------------------------


def _timeline(tl: Mapping[str, Any]) -> str:
    size = tl.get("bucket_size") or 1
    note = (f"{tl['messages']:,} messages in buckets of {size:,} (tokens summed per bucket)." if size > 1
            else f"{tl['messages']:,} messages, one bar each.")
    out = ['<section id="timeline"><h2>Timeline: tokens per message by kind</h2>',
           f'<p class="meta">{_e(note)} Tool output is split by tool. Token figures are the core\'s '
           "estimate (characters / 4 + overhead), the figure the engine's threshold is compared with.</p>",
           '<div class="cards">', _card("messages", tl["messages"], "timeline.messages"),
           _card("tokens", tl["tokens"], "timeline.tokens")]
    if tl.get("window"):
        out.append(_card("window", tl["window"], "timeline.window"))
    if tl.get("threshold"):
        out.append(_card("threshold", tl["threshold"], "timeline.threshold"))
    out.append(_card("compactions", len(tl.get("compactions") or ())))
    out.append("</div>")
    out.append(_figure("chart-timeline", "Tokens per message stacked by kind, with the context size, the window, "
                       "the threshold and each compaction", "Bars: tokens per message by kind (left axis). Line: "
                       "tokens in the context at each request (right axis), dashed: window and threshold; pins: "
                       "compactions."))
    rows = [f"<td>{_e(kind)}</td>" + _num(tl["kind_counts"][kind], f"timeline.kind_counts.{kind}")
            + _num(tl["kind_totals"][kind], f"timeline.kind_totals.{kind}") for kind in tl["kinds"]]
    out.append("<h3>Tokens by kind</h3>")
    out.append(_table(["kind", "messages", "tokens"], rows, caption="Tokens by kind"))
    if tl.get("compactions"):
        rows = [_num(i + 1) + _num(c["message"], f"timeline.compactions.{i}.message")
                + _num(c["before"], f"timeline.compactions.{i}.before")
                + _num(c["after"], f"timeline.compactions.{i}.after")
                for i, c in enumerate(tl["compactions"])]
        out.append("<h3>Compactions on the timeline</h3>")
        out.append(_table(["#", "at message", "tokens before", "tokens after"], rows,
                          caption="Compactions", numeric_from=0))
    kinds = tl["kinds"]
    rows = []
    for slot, (first, last) in enumerate(tl["buckets"]):
        label = str(first) if first == last else f"{first}-{last}"
        rows.append(f"<td>{_e(label)}</td>" + "".join(
            _num(tl["series"][k][slot], f"timeline.series.{k}.{slot}") for k in kinds))
    out.append("<h3>Tokens per " + ("bucket" if size > 1 else "message") + "</h3>")
    out.append(_rows_table(["message" + ("s" if size > 1 else ""), *kinds], rows, caption="Tokens per message"))
    if tl.get("context"):
        rows = [_num(p["message"], f"timeline.context.{i}.message") + _num(p["tokens"], f"timeline.context.{i}.tokens")
                for i, p in enumerate(tl["context"])]
        out.append("<h3>Context size at each request</h3>")
        out.append(_rows_table(["after message", "context tokens"], rows, caption="Context size", numeric_from=0))
    out.append("</section>")
    return "".join(out)


def _span(rows: Mapping[str, Any], path: str, title: str) -> str:
    body = []
    for i, row in enumerate(rows["rows"]):
        refs = ", ".join(row.get("archive_refs") or ())
        if row.get("archive_refs_not_shown"):
            refs += f" and {row['archive_refs_not_shown']:,} more"
        text = ("[summary] " if row.get("summary") else "") + row["text"]
        body.append(_num(row["index"], f"{path}.rows.{i}.index") + _td(row["role"])
                    + _num(row["tokens"], f"{path}.rows.{i}.tokens") + _td(refs) + _td(text))
    more = (f'<p class="meta">{rows["not_shown"]:,} more rows not shown.</p>' if rows["not_shown"] else "")
    return (f"<h4>{_e(title)} ({len(rows['rows']) + rows['not_shown']:,} messages)</h4>"
            + _table(["#", "role", "tokens", "archive refs", "text"], body, caption=title, numeric_from=5) + more)


def _compactions(comps: Sequence[Mapping[str, Any]], intro: str) -> str:
    out = ['<section id="compactions"><h2>What each compaction did</h2>', f'<p class="meta">{_e(intro)}</p>']
    spilled = any("spilled" in c for c in comps)
    out.append(_figure("chart-compactions", "Messages deduplicated, demoted, summarised and kept per compaction",
                       "Messages each compaction deduplicated, demoted to one-liners, summarised, and kept unchanged"
                       + ("; tool results spilled to files since the previous compaction." if spilled else ".")))
    phase_keys = sorted({k for c in comps for k in c["phases"]})
    # The replay's tool-result pipeline (report): results spilled / limited since the previous compaction.
    piped = [k for k in ("spilled", "limited") if any(k in c for c in comps)]
    rows = []
    for i, c in enumerate(comps):
        p = f"compactions.{i}"
        rows.append(_num(i + 1) + _num(c["message"], f"{p}.message") + _td(c.get("status") or "-")
                    + _num(c["before"]["messages"], f"{p}.before.messages") + _num(c["before"]["tokens"], f"{p}.before.tokens")
                    + _num(c["after"]["messages"], f"{p}.after.messages") + _num(c["after"]["tokens"], f"{p}.after.tokens")
                    + _num(c["kept_unchanged"], f"{p}.kept_unchanged") + _num(c["condensed"], f"{p}.condensed")
                    + "".join(_num(c.get(k), f"{p}.{k}") for k in piped)
                    + "".join(_num(c["phases"].get(k), f"{p}.phases.{k}") for k in phase_keys))
    out.append(_table(["#", "at message", "status", "msgs before", "tokens before", "msgs after", "tokens after",
                       "kept unchanged", "condensed", *[f"{k} before it" for k in piped],
                       *[k.replace("_", " ") for k in phase_keys]],
                      rows, caption="Compactions", numeric_from=0))
    for i, c in enumerate(comps):
        if c.get("detail_not_shown"):
            continue
        summary = c.get("summary") or {}
        out.append(f"<h3>Compaction {i + 1} (at message {c['message']:,})</h3>")
        facts = []
        if summary.get("provider"):
            facts.append(f"summary by {summary['provider']}" + (" (fallback handoff)" if summary.get("fallback") else ""))
        if c.get("archive_refs"):
            refs = c["archive_refs"]
            facts.append(f"{len(refs):,} archived message(s) recoverable with context_expand: "
                         + ", ".join(refs[:30]) + (f" and {len(refs) - 30:,} more" if len(refs) > 30 else ""))
        if facts:
            out.append(f'<p class="meta">{_e("; ".join(facts))}</p>')
        if c.get("summary_text") is not None:
            out.append(f"<details open><summary>Summary text</summary><pre>{_e(c['summary_text'])}</pre></details>")
        out.append("<details><summary>Before / after of the condensed span</summary>")
        out.append(_span(c["span_before"], f"compactions.{i}.span_before", "Before: messages that did not come out unchanged"))
        out.append(_span(c["span_after"], f"compactions.{i}.span_after", "After: new messages (summaries, one-liners)"))
        out.append("</details>")
    out.append("</section>")
    return "".join(out)


def _compress(rep: Mapping[str, Any]) -> str:
    out = ['<section id="compress"><h2>Compression report</h2><div class="cards">',
           _card("status", rep.get("status"), "compress.status"),
           _card("tokens before", rep["before"]["tokens"], "compress.before.tokens"),
           _card("tokens after", rep["after"]["tokens"], "compress.after.tokens"),
           _card("messages before", rep["before"]["messages"], "compress.before.messages"),
           _card("messages after", rep["after"]["messages"], "compress.after.messages"), "</div>"]
    phases = rep.get("phases") or {}
    rows = [f"<td>{_e(k.replace('_', ' '))}</td>" + _num(v, f"compress.phases.{k}") for k, v in phases.items()]
    out.append(_table(["phase", "messages"], rows, caption="Phases"))
    for warning in rep.get("warnings") or ():
        out.append(f'<p class="warn">warning: {_e(warning)}</p>')
    if rep.get("error"):
        out.append(f'<p class="warn">reason: {_e(rep["error"])}</p>')
    out.append("</section>")
    return "".join(out)


def _eval(ev: Mapping[str, Any]) -> str:
    out = ['<section id="eval"><h2>Probes: what the compaction kept, engines side by side</h2>',
           '<p class="meta">A probe is a fact taken from the condensed messages (requests, errors, files, '
           "commands, decisions, identifiers): kept when it is still in the context, recoverable when the "
           "archive holds it, else lost.</p>"]
    out.append(_figure("chart-eval-probes", "Probes kept, recoverable and lost per engine and window",
                       "Probes kept, recoverable and lost per run (all kinds)."))
    out.append(_figure("chart-eval-tokens", "Tokens before and after per engine and window",
                       "Tokens before and after the compaction per run."))
    for f, item in enumerate(ev["files"]):
        out.append(f"<h3>{_e(item['file'])}</h3>")
        out.append(f'<p class="meta"><span data-path="eval.files.{f}.messages">{item["messages"]:,}</span> messages, '
                   f'<span data-path="eval.files.{f}.tokens">{item["tokens"]:,}</span> tokens</p>')
        rows = []
        for r, run in enumerate(item["runs"]):
            p = f"eval.files.{f}.runs.{r}"
            rows.append(_td(run["engine"], f"{p}.engine") + _num(run["context_length"], f"{p}.context_length")
                        + _num(run["tokens_before"], f"{p}.tokens_before") + _num(run["tokens_after"], f"{p}.tokens_after")
                        + _num(run.get("tokens_counted"), f"{p}.tokens_counted") + _num(run.get("fit_limit"), f"{p}.fit_limit")
                        + _num(run["savings"], f"{p}.savings", pct=True) + _num(run["elapsed_ms"], f"{p}.elapsed_ms")
                        + _num(run["valid"], f"{p}.valid") + _num(run.get("invented_failures"), f"{p}.invented_failures")
                        + _num(run["last_request_verbatim"], f"{p}.last_request_verbatim")
                        + "".join(_num(sum(c[v] for c in run["probes"].values()))
                                  for v in ("kept", "recoverable", "lost"))
                        + _td("; ".join(run.get("failed") or ()) or "-"))
        out.append(_table(["engine", "window", "tokens before", "tokens after", "counted", "limit", "saved", "ms",
                           "valid", "invented", "last request verbatim", "probes kept", "recoverable", "lost",
                           "failed"], rows, caption="Runs"))
        rows = []
        for r, run in enumerate(item["runs"]):
            for kind, counts in run["probes"].items():
                p = f"eval.files.{f}.runs.{r}.probes.{kind}"
                rows.append(_td(run["engine"]) + _num(run["context_length"]) + _td(kind)
                            + "".join(_num(counts[v], f"{p}.{v}") for v in ("total", "kept", "recoverable", "lost")))
        out.append("<h4>Probes per kind</h4>")
        out.append(_table(["engine", "window", "kind", "total", "kept", "recoverable", "lost"], rows,
                          caption="Probes per kind", numeric_from=3))
        rows = []
        for run in item["runs"]:
            judge = run.get("judge")
            if not judge:
                continue
            scores = judge.get("scores") or {}
            rows.append(_td(run["engine"]) + _num(run["context_length"]) + _td(judge.get("provider") or "-")
                        + _td(", ".join(f"{name} {_shown(score, pct=True)}" for name, score in scores.items())
                              or judge.get("error") or "-"))
        if rows:
            out.append("<h4>Judge (--judge): the summary provider's answers scored against the probes</h4>")
            out.append(_table(["engine", "window", "provider", "scores"], rows, caption="Judge"))
        rows = []
        for r, run in enumerate(item["runs"]):
            for j, loss in enumerate(run.get("losses") or ()):
                p = f"eval.files.{f}.runs.{r}.losses.{j}"
                rows.append(_td(run["engine"]) + _num(run["context_length"]) + _td(loss["category"])
                            + _num(loss["message"], f"{p}.message") + _td(loss["probe"], f"{p}.probe"))
        if rows:
            out.append("<h4>Most important losses (the message each came from)</h4>")
            out.append(_table(["engine", "window", "kind", "message", "probe"], rows, caption="Losses"))
        for r, run in enumerate(item["runs"]):
            if "probe_detail" not in run:
                continue
            out.append(f"<h4>Every probe of {_e(run['engine'])} @ {run['context_length']:,}: the message it came "
                       "from and the archive reference that recovers it</h4>")
            out.append(_probe_rows(run["probe_detail"], f"eval.files.{f}.runs.{r}.probe_detail",
                                   int(run.get("probe_detail_not_shown") or 0)))
    out.append("</section>")
    return "".join(out)


PROBE_COLUMNS = ("verdict", "kind", "message", "role", "archive ref", "source message", "probe")


def _probe_rows(rows: Sequence[Mapping[str, Any]], path: str, not_shown: int) -> str:
    """One row per probe: verdict, kind, the message it came from (index, role, quoted), the
    archive reference of that message's original, the probe's text."""
    body = []
    for j, row in enumerate(rows):
        p = f"{path}.{j}"
        body.append(_td(row["verdict"], f"{p}.verdict") + _td(row["kind"], f"{p}.kind")
                    + _num(row["message"], f"{p}.message") + _td(row.get("role") or "-")
                    + _td(row.get("archive_ref") or "-", f"{p}.archive_ref" if row.get("archive_ref") else None)
                    + _td(row.get("source") or "-") + _td(row["probe"], f"{p}.probe"))
    out = _rows_table(list(PROBE_COLUMNS), body, caption="Probes", numeric_from=len(PROBE_COLUMNS)) if body else ""
    if not_shown:
        out += (f'<p class="meta">{not_shown:,} more probes not listed (lost ones are listed first; every probe '
                "is counted in the table of probes per kind).</p>")
    return out


def _probes(runs: Sequence[Mapping[str, Any]]) -> str:
    out = ['<section id="probes"><h2>Every probe: where it came from, where to get it back</h2>',
           '<p class="meta">Each probe of each run, lost first: the message it came from (index in the '
           "transcript, role, its text) and the archive reference of that message's original (context_expand / "
           "hermes-ctx history show), when it was archived.</p>"]
    for r, run in enumerate(runs):
        out.append(f"<h3>{_e(run['engine'])} @ {run['context_length']:,}</h3>")
        rows = []
        for kind, counts in run["counts"].items():
            rows.append(_td(kind) + "".join(_num(counts[v], f"probes.{r}.counts.{kind}.{v}")
                                            for v in ("kept", "recoverable", "lost")))
        out.append(_table(["kind", "kept", "recoverable", "lost"], rows, caption="Probe verdicts per kind"))
        out.append(_probe_rows(run["rows"], f"probes.{r}.rows", int(run.get("not_shown") or 0)))
    out.append("</section>")
    return "".join(out)


def _usd(value: Any, path: str | None = None) -> str:
    """A dollar figure cell: the JSON's micro-dollars, all six decimals (the header says USD)."""
    attr = f' data-path="{_e(path)}"' if path else ""
    return f'<td class="n"{attr}>{_e(money(value))}</td>'


def money(value: Any) -> str:
    return "-" if value is None else f"{value:,.6f}"


def _cache(cr: Mapping[str, Any]) -> str:
    from hermes_plugins.cache_report import READ_PRICE, WRITE_PRICE

    total = cr["total"]
    provider = cr.get("provider", "?")
    usd = cr.get("prices")
    rates = cr.get("rates") or {}
    read = rates.get("read", READ_PRICE.get(provider, "?"))
    prices = f"cache read {read}x"
    if provider == "anthropic":
        prices += f", cache write {WRITE_PRICE['5m']}x (5 m) / {WRITE_PRICE['1h']}x (1 h)"
    else:
        prices += ", cache write free (automatic caching)"
    if usd:
        unit = (f"Cost in US dollars at {_e(usd['model'])}'s prices per million tokens ({_e(usd['source'])}): "
                f"input ${usd['input']:g}, cached read ${usd['cache_read']:g}")
        unit += (f", cache write ${usd['cache_write_5m']:g} (5 m) / ${usd['cache_write_1h']:g} (1 h)"
                 if provider == "anthropic" else ", no write charge")
        unit += "; the saving is against the same requests with every input token at the input price."
    else:
        unit = ("Cost is in uncached-token equivalents (the model's prices are not in the model data"
                + (f": {_e(rates['read_source'])}" if rates.get("read_source") else "")
                + "); the saving is against the same requests with no caching.")
    out = ['<section id="cache"><h2>Cache economy</h2>',
           f'<p class="meta">Provider {_e(provider)}, TTL {_e(cr.get("ttl", "-"))}; prices relative to an uncached '
           f"input token: {_e(prices)}. {unit} Tokens counted with {_e(cr.get('counter', '?'))}.</p>",
           '<div class="cards">', _card("requests", total["requests"], "cache.total.requests"),
           _card("input tokens", total["input_tokens"], "cache.total.input_tokens"),
           _card("cache read", total["cache_read_tokens"], "cache.total.cache_read_tokens"),
           _card("cache write", total["cache_write_tokens"], "cache.total.cache_write_tokens"),
           _card("uncached", total["uncached_tokens"], "cache.total.uncached_tokens"),
           _card("cost with / without caching", total["cost_ratio"], "cache.total.cost_ratio")]
    if usd:
        out += [_money_card("cost, USD", total["cost_usd"], "cache.total.cost_usd"),
                _money_card("without caching, USD", total["cost_usd_without_caching"],
                            "cache.total.cost_usd_without_caching"),
                _money_card("saving, USD", total["saving_usd"], "cache.total.saving_usd")]
    out += [_card("prefix breaks", total["breaks"], "cache.total.breaks"), "</div>"]
    line = "cumulative saving in US dollars" if usd else "cumulative saving against no caching"
    out.append(_figure("chart-cache", "Cached read, cache write and uncached tokens per request, with the "
                       "cumulative saving", f"Bars: tokens per request (read, write, uncached). Line: {line}. "
                       "Triangles: prefix breaks."))
    out += _cache_breaks(cr["turns"])
    out += _cache_requests(cr["turns"], bool(usd))
    out.append("</section>")
    return "".join(out)


def _cache_breaks(turns: Sequence[Mapping[str, Any]]) -> list[str]:
    """The prefix breaks of the cache section, each with what caused it."""
    breaks = [t for t in turns if t.get("break")]
    if not breaks:
        return ["<p>No prefix break: every request extended the one before it.</p>"]
    rows = []
    for t in breaks:
        b = t["break"]
        i = t["index"]
        where = f" (message {b['message']} of that request)" if b.get("message") is not None else ""
        rows.append(_num(i, f"cache.turns.{i}.index") + _td(b["cause"], f"cache.turns.{i}.break.cause")
                    + _num(b["byte"], f"cache.turns.{i}.break.byte")
                    + _td(CAUSE_TEXT.get(b["cause"], b["cause"]) + where + f"; the cache is read up to byte "
                          f"{b['byte']:,} and the rest is paid again."))
    return ["<h3>Prefix breaks, explained</h3>",
            _table(["request", "cause", "byte", "why"], rows, caption="Prefix breaks", numeric_from=0)]


def _cache_requests(turns: Sequence[Mapping[str, Any]], usd: bool) -> list[str]:
    """The cache section's table per request (per bucket of requests in a long session)."""
    out: list[str] = []
    cv = cache_view(turns)
    rows = []
    single = cv["bucket_size"] == 1
    for slot, label in enumerate(cv["labels"]):
        p = f"cache.turns.{slot}" if single else None
        row = (_td(label) + _num(cv["messages"][slot], p and f"{p}.messages")
               + _num(cv["input"][slot], p and f"{p}.input_tokens") + _num(cv["read"][slot], p and f"{p}.cache_read_tokens")
               + _num(cv["write"][slot], p and f"{p}.cache_write_tokens")
               + _num(cv["uncached"][slot], p and f"{p}.uncached_tokens"))
        if usd:
            row += (_usd(cv["cost_usd"][slot], p and f"{p}.cost_usd")
                    + _usd(cv["cumulative_cost_usd"][slot], p and f"{p}.cumulative_cost_usd")
                    + _usd(cv["cumulative_saving_usd"][slot], p and f"{p}.cumulative_saving_usd"))
        else:
            row += _num(cv["cost"][slot]) + _num(f"{cv['saving'][slot]:.1f}%")
        rows.append(row)
    out.append("<h3>Per request</h3>" if single else
               f"<h3>Per {cv['bucket_size']:,} requests ({len(turns):,} requests, summed)</h3>")
    money_columns = ["cost, USD", "cumulative cost, USD", "cumulative saving, USD"]
    out.append(_rows_table(["request" + ("" if single else "s"), "messages" if single else "messages (last)",
                            "input", "cache read", "cache write", "uncached",
                            *(money_columns if usd else ["cost", "cumulative saving"])],
                           rows, caption="Per request"))
    return out


def cache_view(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The per-request series of the cache chart and its table: one slot per request, or per
    bucket of requests (summed) past ``MAX_POINTS``; cost in uncached-token equivalents and the
    cumulative saving against no caching at the end of each slot."""
    from hermes_plugins.cache_report import USD_DIGITS
    from hermes_plugins.report.data import buckets

    ranges = buckets(len(turns))
    view: dict[str, Any] = {"bucket_size": (ranges[0][1] - ranges[0][0]) if ranges else 1, "labels": [],
                            "messages": [], "input": [], "read": [], "write": [], "uncached": [], "cost": [],
                            "saving": [], "breaks": []}
    cum_in = cum_cost = 0.0
    for slot, (start, end) in enumerate(ranges):
        part = turns[start:end]
        first, last = part[0]["index"], part[-1]["index"]
        view["labels"].append(str(first) if first == last else f"{first}-{last}")
        view["messages"].append(part[-1]["messages"])
        for key, field in (("input", "input_tokens"), ("read", "cache_read_tokens"),
                           ("write", "cache_write_tokens"), ("uncached", "uncached_tokens")):
            view[key].append(sum(t[field] for t in part))
        cost = sum(t["cost_ratio"] * t["input_tokens"] for t in part)
        view["cost"].append(round(cost))
        cum_in += view["input"][-1]
        cum_cost += cost
        view["saving"].append(round((1 - cum_cost / cum_in) * 100, 2) if cum_in else 0.0)
        if any(t.get("break") for t in part):
            view["breaks"].append(slot)
        if "cost_usd" in part[-1]:
            # Dollars as the JSON has them: a slot's sum, and the cumulative figures at its end.
            view.setdefault("cost_usd", []).append(round(sum(t["cost_usd"] for t in part), USD_DIGITS))
            for key in ("cumulative_cost_usd", "cumulative_saving_usd"):
                view.setdefault(key, []).append(part[-1][key])
    return view


# --- the page ------------------------------------------------------------------------------


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element (no ``</``, no ``<!--``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def echarts_source() -> str:
    return resources.files("hermes_plugins.report").joinpath("vendor", ECHARTS_FILE).read_text(encoding="utf-8")


def render_html(data: Mapping[str, Any]) -> str:
    """The whole page for ``data`` (a report dict; see ``report.data``)."""
    source = str(data.get("source", ""))
    # The file's name heads the page (the full path is in the line below it).
    title = f"hermes-ctx {data.get('command', 'report')}: " + ", ".join(Path(p).name for p in source.split(", "))
    parts: list[str] = []
    nav: list[str] = []
    if data.get("timeline"):
        parts.append(_timeline(data["timeline"]))
        nav.append('<a href="#timeline">Timeline</a>')
    if data.get("compactions"):
        parts.append(_compactions(data["compactions"], str(data.get("compactions_note") or "")))
        nav.append('<a href="#compactions">Compactions</a>')
    if data.get("compress"):
        parts.append(_compress(data["compress"]))
        nav.append('<a href="#compress">Compression</a>')
    if data.get("eval"):
        parts.append(_eval(data["eval"]))
        nav.append('<a href="#eval">Probes</a>')
    if data.get("probes"):
        parts.append(_probes(data["probes"]))
        nav.append('<a href="#probes">Every probe</a>')
    if data.get("cache"):
        parts.append(_cache(data["cache"]))
        nav.append('<a href="#cache">Cache</a>')
    warnings = "".join(f'<p class="warn">warning: {_e(w)}</p>' for w in data.get("warnings") or ())
    view = {"cache": cache_view(data["cache"]["turns"]) if data.get("cache") else None}
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}.sr{{position:absolute;left:-9999px}}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f'<p class="meta">{_e(source)}. Made by hermes-ctx {_e(data.get("command", "report"))}; opens offline (charts: Apache '
        f"ECharts {ECHARTS_VERSION}, inlined). Every chart has a table with its figures below it.</p>"
        f"<nav>{''.join(nav)}</nav>{warnings}{''.join(parts)}"
        f'<script id="hermes-report-data" type="application/json">{_script_json(data)}</script>'
        f'<script id="hermes-report-view" type="application/json">{_script_json(view)}</script>'
        f"<script>{echarts_source()}</script><script>{_JS}</script></body></html>\n"
    )
