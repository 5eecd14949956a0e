"""eval --html per-probe detail (issue 35): eval's --json lists each probe of a run with its
verdict, the message it came from and the archive reference that recovers it (the existing
keys unchanged), and the page shows those rows with the figures of the same run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.evaluation.runner import PROBE_ROWS, SOURCE_CHARS, evaluate

from report_pages import page_data, resolve, session, shown_figures

EXISTING_KEYS = {"engine", "context_length", "status", "tokens_before", "tokens_after", "tokens_counted",
                 "count_method", "fit_limit", "fits", "savings", "elapsed_ms", "valid", "problems",
                 "invented_failures", "invented", "failed", "last_request_verbatim", "condensed_messages",
                 "recall_available", "probes", "losses"}


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session(30)), encoding="utf-8")
    return path


def eval_json(transcript: Path, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["eval", str(transcript), "--engine", "compressor,window", "--context-length",
                                      "16000", "--json", "--html", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_each_probe_is_listed_with_its_source_and_reference(transcript: Path, tmp_path: Path) -> None:
    messages = json.loads(transcript.read_text(encoding="utf-8"))
    report = eval_json(transcript, tmp_path / "e.html")
    for run in report["files"][0]["runs"]:
        assert EXISTING_KEYS <= set(run)
        rows = run["probe_detail"]
        counts = {v: sum(c[v] for c in run["probes"].values()) for v in ("kept", "recoverable", "lost")}
        assert len(rows) + run["probe_detail_not_shown"] == sum(counts.values())
        for verdict, count in counts.items():
            assert sum(r["verdict"] == verdict for r in rows) == count
        order = [{"lost": 0, "recoverable": 1, "kept": 2}[r["verdict"]] for r in rows]
        assert order == sorted(order)
        for row in rows:
            source = messages[row["message"]]
            assert row["role"] == source["role"]
            assert row["source"] and len(row["source"]) <= SOURCE_CHARS + 40
        # The losses are the first lost rows (same probes, same messages).
        lost = [(r["kind"], r["probe"], r["message"]) for r in rows if r["verdict"] == "lost"]
        assert {(loss["category"], loss["probe"], loss["message"]) for loss in run["losses"]} <= set(lost)
    window = report["files"][0]["runs"][1]
    recoverable = [r for r in window["probe_detail"] if r["verdict"] == "recoverable"]
    assert recoverable and all(r["archive_ref"] for r in recoverable)


def test_a_reference_recovers_the_probe(tmp_path: Path) -> None:
    from hermes_core.session import Session

    # Run the evaluation, then check each named reference holds its probe's source message
    # (the same archive the session of the run wrote: one session, expanded before close).
    messages = session(30)
    seen: list[Any] = []
    original_close = Session.close

    def keep(self: Session, *args: Any, **kwargs: Any) -> None:
        seen.append(self)
        original_close(self, *args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(Session, "close", keep)
    try:
        run = evaluate(messages, engine="window", context_length=16_000, config=load_config(),
                       host=PluginHost.create(), home=tmp_path)
    finally:
        mp.undo()
    archive = archive_of(seen[-1])
    checked = 0
    for row in run["probe_detail"]:
        if row["verdict"] == "recoverable" and row["archive_ref"]:
            stored = archive.store.archive_get(archive.session_id, row["archive_ref"]) or {}
            assert row["source"].split("…")[0][:60] in " ".join(str(stored.get("text")).split())
            checked += 1
    assert checked > 0


def test_the_eval_page_shows_every_listed_probe(transcript: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.html"
    report = eval_json(transcript, out)
    page = out.read_text(encoding="utf-8")
    assert page_data(page)["eval"] == report
    shown = {p: v for p, v in shown_figures(page).items() if ".probe_detail." in p}
    runs = report["files"][0]["runs"]
    # verdict, kind, message and probe of every row, and the reference where there is one.
    want = sum(4 * len(r["probe_detail"]) + sum(bool(x["archive_ref"]) for x in r["probe_detail"]) for r in runs)
    assert len(shown) == want > 0
    for path, text in shown.items():
        value = resolve(report, path.split(".", 1)[1])
        assert text == (f"{value:,}" if isinstance(value, int) else str(value)), path
    assert "Every probe of compressor @ 16,000" in page and "source message" in page


def test_a_long_run_lists_probe_rows_up_to_the_bound(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from hermes_plugins.evaluation import runner

    monkeypatch.setattr(runner, "PROBE_ROWS", 5)
    run = evaluate(session(30), engine="window", context_length=16_000, config=load_config(),
                   host=PluginHost.create(), home=tmp_path)
    total = sum(c["total"] for c in run["probes"].values())
    assert len(run["probe_detail"]) == 5 and run["probe_detail_not_shown"] == total - 5 > 0
    assert PROBE_ROWS == 300
