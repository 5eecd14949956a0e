"""Redaction per MB of real session text: the one-regex pass against what it replaced and peers.

Run: ``python -m pytest tests/benchmarks/bench_redaction.py -q -s -p no:randomly``

The text is every string of 20+ characters in the real third-party sessions
(``shared/real-sessions``; skipped when absent), ~3.2 MB in ~17,700 texts: tool output, code,
JSON, prose - the mix a session's archive, spill files and summaries see. Timed interleaved in
the same process (medians of paired rounds), through the public entry points:

* ``redact_text`` (keyed placeholders) and ``redact`` (plain masks): the one regex over the
  lines that hold an anchor;
* the floor: ``str.lower`` plus one ``str.find`` - reading the text once;
* ``Redactor.redact_whole``: the same regex over the whole text (what the anchor prefilter saves);
* "before": ``hermes_core/redaction.py`` as of commit ``BEFORE`` (family-by-family regex passes,
  each behind a substring test), loaded from git history - skipped outside a git checkout;
* detect-secrets (its regex plugins, line by line), when it is installed - not a dependency.

What the redactor masks on that text (and on the real context files, ``CONTEXT_FILES``, when
present): placeholders by family, each a candidate false positive to read - on real third-party
text every one should be code or a real-looking secret, and a new family should add none.

And what nothing-secret-at-rest costs the archive: ``SessionArchive.record`` + ``flush`` of a
synthetic 20,000-message history whose oldest half left (``bench_stores``' case), into the
SQLite store, redacted (the default) against ``keep_secrets=True``, interleaved.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench_compressor import synthetic_history

from hermes_core.redaction import Redactor, redact, redact_text
from hermes_plugins.archive.session_archive import SessionArchive
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from locations import ROOT

#: Real AGENTS.md/CLAUDE.md files (203) gathered for the context-file lanes, read when present.
CONTEXT_FILES = Path("/tmp/hermes-real-context-files")
#: The last commit with the family-by-family implementation.
BEFORE = "34861a0"
ROUNDS = 5


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) >= 20:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.fixture
def texts(real_sessions_dir: Path) -> list[str]:
    folder = real_sessions_dir
    out: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.suffix == ".md" or not path.is_file():
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        lines = raw.splitlines() if path.suffix == ".jsonl" else [raw]
        for line in lines:
            try:
                out.extend(_strings(json.loads(line)))
            except ValueError:
                out.append(line)
    return out


def _before() -> Callable[[str], str] | None:
    root = ROOT
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:hermes_core/redaction.py"], cwd=root,
                                capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    module = types.ModuleType("_redaction_before")
    exec(compile(source, f"{BEFORE}:hermes_core/redaction.py", "exec"), module.__dict__)  # noqa: S102
    return module.redact  # type: ignore[no-any-return]


def _detect_secrets_plugins() -> list[str] | None:
    if importlib.util.find_spec("detect_secrets") is None:
        return None
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return [c.__name__ for c in get_mapping_from_secret_type_to_class().values() if "Entropy" not in c.__name__]


def _floor(text: str) -> int:
    return text.lower().find("\x00")


def _ms_per_mb(fn: Callable[[str], Any], texts: list[str], size: float) -> float:
    started = time.perf_counter()
    for text in texts:
        fn(text)
    return (time.perf_counter() - started) * 1000 / size


def test_redaction_per_mb_against_the_floor_the_whole_text_pass_and_before(texts: list[str]) -> None:
    size = sum(map(len, texts)) / 1e6
    keyed = Redactor.for_session()
    peers: dict[str, Callable[[str], Any]] = {
        "floor (lower + find)": _floor, "redact_text (keyed)": redact_text, "redact (plain)": redact,
        "one regex, whole text": keyed.redact_whole,
    }
    before = _before()
    if before is not None:
        peers[f"before ({BEFORE})"] = before
    times: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(ROUNDS):
        for name, fn in peers.items():
            times[name].append(_ms_per_mb(fn, texts, size))
    print(f"\n{len(texts):,} texts, {size:.2f} MB; median of {ROUNDS} interleaved rounds")
    for name, values in times.items():
        print(f"  {name:28s} {statistics.median(values):8.1f} ms/MB")
    now = times["redact_text (keyed)"]
    print(f"  keyed / floor: {statistics.median(a / b for a, b in zip(now, times['floor (lower + find)'])):.1f}x")
    if before is not None:
        ratio = statistics.median(a / b for a, b in zip(now, times[f"before ({BEFORE})"]))
        print(f"  keyed / before: {ratio:.2f}x")
        assert ratio < 1.0, "redaction got slower than the family-by-family passes it replaced"
        changed = sum(1 for t in texts if before(t) != redact(t))
        print(f"  texts whose plain redaction differs from before: {changed}")


def test_placeholders_on_real_text_by_family(texts: list[str]) -> None:
    sources = {"real sessions": texts}
    if CONTEXT_FILES.is_dir():
        sources["context files"] = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(CONTEXT_FILES.iterdir())]
    for name, items in sources.items():
        keyed = Redactor.for_session()
        for text in items:
            keyed.redact(text)
        counts = keyed.counts()
        print(f"\n{name} ({len(items):,} texts, {sum(map(len, items)) / 1e6:.2f} MB): {sum(counts.values())} placeholders "
              + ", ".join(f"{family} {n}" for family, n in sorted(counts.items(), key=lambda kv: -kv[1])))


def test_detect_secrets_on_the_same_text(texts: list[str]) -> None:
    plugins = _detect_secrets_plugins()
    if plugins is None:
        pytest.skip("detect-secrets is not installed (it is a peer here, not a dependency)")
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import get_settings, transient_settings

    sample, chars = [], 0
    for text in texts:  # a 300 KB slice: detect-secrets is an order of magnitude slower
        sample.append(text)
        chars += len(text)
        if chars > 300_000:
            break
    size = chars / 1e6
    ours = statistics.median(_ms_per_mb(redact_text, sample, size) for _ in range(3))
    with transient_settings({"plugins_used": [{"name": name} for name in plugins]}):
        assert len(get_settings().plugins) == len(plugins)
        theirs = _ms_per_mb(lambda text: [list(scan_line(line)) for line in text.splitlines()], sample, size)
    print(f"\n{size:.2f} MB: redact_text {ours:.1f} ms/MB, detect-secrets (regex plugins) {theirs:.1f} ms/MB"
          f" ({theirs / ours:.1f}x)")


def test_archiving_a_compaction_redacted_vs_verbatim(tmp_path: Path) -> None:
    history = synthetic_history(20_000, scale=0.1)
    after = [history[0], *history[10_000:]]
    size = sum(len(m["content"]) for m in history[1:10_000] if isinstance(m.get("content"), str)) / 1e6
    times: dict[bool, list[float]] = {False: [], True: []}
    for r in range(ROUNDS):
        for keep in ((False, True) if r % 2 == 0 else (True, False)):
            archive = SessionArchive(session_id=f"bench-{r}-{keep}", store=SQLiteSessionStore(tmp_path / f"s{r}{keep}.db"),
                                     keep_secrets=keep)
            started = time.perf_counter()
            archive.record(history, after)
            archive.flush()
            times[keep].append(time.perf_counter() - started)
            assert len(archive) == 9_999
    close_connections()
    redacted, verbatim = statistics.median(times[False]), statistics.median(times[True])
    print(f"\narchiving 9,999 messages ({size:.1f} MB of text) into SQLite: redacted {redacted * 1000:.0f} ms, "
          f"verbatim {verbatim * 1000:.0f} ms ({redacted / verbatim:.2f}x)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-s", "-p", "no:randomly"]))
