"""The injection scan, measured both ways (issue 31), and what it costs the prompt build.

* Detection: every hand-written payload (tests/support/injection_payloads.py) planted in an AGENTS.md,
  a CLAUDE.md and a .cursorrules among ordinary lines; a payload counts as caught when none of
  its lines reaches the prompt. The public corpora (tests/data/injection_corpus, see its
  NOTICE: BIPIA, garak's probes, promptmap's rules; and ``$HERMES_INJECTION_CORPUS``: a folder
  of ``<name>.txt`` files, records separated by a line holding only ``%%``) are planted the same
  way and reported per corpus, class (injection / task content) and half (fit / held-out).
* False positives: the real context files listed in tests/data/real_context_files.tsv and in
  the lists ``$HERMES_REAL_CONTEXT_TSV`` names (others' text: only repository, path, commit and
  sha256 are kept) are read from ``$HERMES_REAL_CONTEXT_FILES`` (default
  /tmp/hermes-real-context-files, one file per entry named ``<owner>__<repo>__<path with / as
  __>``); a file whose sha256 differs is left out. A false positive is a non-blank line the
  build would cut (or every line of a file it would replace whole). The part skips when no
  file is there.
* Cost: the scan of one realistic context file, per line; and Session.open + system_prompt
  with the scanner against the same with ``threat_scan`` blocked, timed in the same run.

Run: python -m pytest tests/benchmarks/bench_threat_scan.py -p no:randomly -s
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from hermes_core import PluginHost, PromptContext
from hermes_core.config import load_config
from hermes_core.diagnostics import collecting

from injection_payloads import BENIGN, HELD_OUT_1, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, PAYLOADS
from injection_red_team import BENIGN_A, ROUND_A, ROUND_B
from locations import DATA

SOURCES = DATA / "real_context_files.tsv"
CORPUS = DATA / "injection_corpus"
REAL = Path(os.environ.get("HERMES_REAL_CONTEXT_FILES", "/tmp/hermes-real-context-files"))
PUBLIC = os.environ.get("HERMES_INJECTION_CORPUS")
FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
AROUND = ["# Project rules", "Use tabs for indentation.", "Run `make test` before pushing.",
          "Keep functions short.", "Write docstrings for public APIs."]


@pytest.fixture(scope="module")
def host() -> Iterator[PluginHost]:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield PluginHost.create(env={})
    structlog.reset_defaults()


def _block(host: PluginHost, root: Path) -> Callable[[], object]:
    from hermes_plugins.context_files.plugin import hermes_prompt_context_files

    ctx = PromptContext(cwd=root, home=root / "no-home", host=host, config=load_config(data={}, env={}))

    def run() -> object:
        with collecting():
            return hermes_prompt_context_files(ctx)

    return run


def _caught(host: PluginHost, tmp: Path, name: str, payload: str) -> bool:
    root = tmp / "repo"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for other in FILES:
        (root / other).unlink(missing_ok=True)
    (root / name).write_text("\n".join([*AROUND[:3], payload, *AROUND[3:]]), encoding="utf-8")
    block = _block(host, root)()
    text = getattr(block, "text", "")
    return all(line.strip() not in text for line in payload.split("\n") if len(line.strip()) > 3)


def test_detection_on_the_injection_corpus(host: PluginHost, tmp_path: Path) -> None:
    caught = total = 0
    missed: list[str] = []
    for name in FILES:
        for _family, payload in PAYLOADS:
            total += 1
            if _caught(host, tmp_path, name, payload):
                caught += 1
            else:
                missed.append(f"{name}: {payload[:60]!r}")
    for payload in HELD_OUT_1 + HELD_OUT_2 + HELD_OUT_3 + HELD_OUT_4:
        total += 1
        if _caught(host, tmp_path, "AGENTS.md", payload):
            caught += 1
        else:
            missed.append(f"AGENTS.md: {payload[:60]!r}")
    rate = caught / total
    print(f"\nhand-written corpus: {caught}/{total} payload placements caught ({rate:.1%})")
    for line in missed:
        print("  missed", line)
    assert rate >= 0.95


def _public_corpora() -> dict[str, list[dict[str, str]]]:
    """name -> records ``{"id", "class", "family", "text"}``. ``class`` is ``injection`` (an
    attack an instruction file could carry: override, fake authority, exfiltration, role play
    ...) or ``task_content`` (a change to the answer's content - "reply in French", "say the
    domain is safe" - which a project's own instructions give too; see the corpus NOTICE)."""
    corpora: dict[str, list[dict[str, str]]] = {}
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):  # BIPIA's shape: {category: [attack, ...]}, every one task content
            corpora[path.stem] = [{"id": f"{category}-{i}", "class": "task_content", "family": category,
                                   "text": text}
                                  for category, texts in data.items() for i, text in enumerate(texts)]
        else:
            corpora[path.stem] = data
    if PUBLIC and Path(PUBLIC).is_dir():
        for path in sorted(Path(PUBLIC).glob("*.txt")):
            records = path.read_text(encoding="utf-8").split("\n%%\n")
            corpora[path.stem] = [{"id": str(i), "class": "injection", "family": "", "text": r.strip()}
                                  for i, r in enumerate(records) if r.strip()]
    return corpora


def _outcome(host: PluginHost, tmp: Path, name: str, payload: str) -> tuple[bool, bool]:
    """(cut, removed): whether at least one line of the planted payload is kept out of the
    prompt, and whether none of them reaches it."""
    root = tmp / "repo"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for other in FILES:
        (root / other).unlink(missing_ok=True)
    (root / name).write_text("\n".join([*AROUND[:3], payload, *AROUND[3:]]), encoding="utf-8")
    text = getattr(_block(host, root)(), "text", "")
    lines = [line.strip() for line in payload.split("\n") if len(line.strip()) > 3]
    missing = [line not in text for line in lines]
    return any(missing), all(missing)


def test_detection_on_public_corpora(host: PluginHost, tmp_path: Path) -> None:
    """Each record planted in an AGENTS.md, a CLAUDE.md and a .cursorrules. Reported per corpus
    and split: the even records are the half the rules were fitted on, the odd ones the
    held-out half. Asserted: >= 95% of the injections have a line kept out of the prompt."""
    totals = {"cut": 0, "removed": 0, "n": 0}
    for name, records in _public_corpora().items():
        rows: dict[tuple[str, str], list[int]] = {}
        for index, record in enumerate(records):
            half = "fit" if index % 2 == 0 else "held-out"
            for file_name in FILES:
                cut, removed = _outcome(host, tmp_path, file_name, record["text"])
                row = rows.setdefault((record["class"], half), [0, 0, 0])
                row[0] += cut
                row[1] += removed
                row[2] += 1
                if record["class"] == "injection":
                    totals["cut"] += cut
                    totals["removed"] += removed
                    totals["n"] += 1
                    if not cut and file_name == FILES[0]:
                        print(f"  missed {name}/{record['id']} ({half}): {record['text'][:70]!r}")
        for (kind, half), (cut, removed, n) in sorted(rows.items()):
            print(f"\n{name} {kind} {half}: {cut}/{n} placements with a line cut ({cut / n:.1%}), "
                  f"{removed}/{n} wholly removed")
    if not totals["n"]:
        pytest.skip("no injection corpus")
    rate = totals["cut"] / totals["n"]
    print(f"\npublic injections: {totals['cut']}/{totals['n']} placements caught ({rate:.1%}), "
          f"{totals['removed']}/{totals['n']} wholly removed")
    assert rate >= 0.95


def _sources() -> list[tuple[str, str, str, str]]:
    """The rows of tests/data/real_context_files.tsv and of every list named in
    ``$HERMES_REAL_CONTEXT_TSV`` (paths separated by ``:``; the same columns), each file once."""
    lists = [SOURCES] + [Path(p) for p in os.environ.get("HERMES_REAL_CONTEXT_TSV", "").split(":") if p]
    rows: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for listed in lists:
        if not listed.is_file():
            continue
        for line in listed.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or not line.strip():
                continue
            repo, path, commit, sha = (line.split("\t") + ["", "", "", ""])[:4]
            rows.setdefault((repo, path), (repo, path, commit, sha))
    return list(rows.values())


def cache_name(repo: str, path: str) -> str:
    return f"{repo.replace('/', '__')}__{path.replace('/', '__')}"


def test_false_positives_on_real_context_files(host: PluginHost) -> None:
    present = []
    for repo, path, _commit, sha in _sources():
        local = REAL / cache_name(repo, path)
        if local.is_file() and sha and hashlib.sha256(local.read_bytes()).hexdigest() == sha:
            present.append(local)
    if not present:
        pytest.skip(f"no real context file in {REAL}")
    from hermes_plugins._common.screening import HIGH, report

    lines = cut = 0
    for local in present:
        text = local.read_text(encoding="utf-8")
        ctx = PromptContext(cwd=local.parent, home=local.parent / "no-home", host=host,
                            config=load_config(data={}, env={}))
        with collecting():
            rows = report(ctx, text, local.name, path=str(local))
        non_blank = sum(1 for line in text.split("\n") if line.strip())
        lines += non_blank
        if any(r["action"] == "file" for r in rows):
            cut += non_blank
        cut += len({r["line"] for r in rows if r["action"] == "cut" and r["severity"] == HIGH})
        for r in rows:
            print(f"  {local.name}:{r['line']} {r['finding']} {r['action']} {r['text'][:80]!r}")
    rate = cut / lines
    print(f"\nreal context files: {len(present)} files, {lines} non-blank lines, {cut} cut "
          f"({rate:.2%} false positives)")
    assert rate <= 0.01


def _doc() -> str:
    parts = [p.read_text(encoding="utf-8") for p in sorted(REAL.glob("*"))[:6]] if REAL.is_dir() else []
    return "\n".join(parts) if parts else "\n".join(BENIGN * 4)


def test_scan_cost(host: PluginHost, tmp_path: Path) -> None:
    from hermes_plugins.threat_scan import _scan, scan

    doc = _doc()
    lines = doc.count("\n") + 1
    scan(doc)  # the confusables table loads once, on the first non-ASCII text
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(20):
            _scan(doc, "context", 0)  # the work itself, past the cache of seen texts
        runs.append((time.perf_counter() - t0) / 20)
    per_file = statistics.median(runs)
    t0 = time.perf_counter()
    for _ in range(200):
        scan(doc)
    cached = (time.perf_counter() - t0) / 200
    print(f"\nscan of a {len(doc):,}-char, {lines}-line context file: {per_file * 1e3:.2f} ms "
          f"({per_file / lines * 1e6:.1f} µs per line); seen before: {cached * 1e6:.1f} µs")


def test_prompt_build_with_and_without_the_scan(tmp_path: Path) -> None:
    """Session.open + system_prompt (the public entry point) for a project with a real-sized
    AGENTS.md, SOUL.md and memory, with the scanner and with ``threat_scan`` blocked, timed
    alternately in the same run. Scans per build: the AGENTS.md, SOUL.md (context), MEMORY.md
    and USER.md (strict). The first build scans; the builds after it (another session in the
    same repository) find the texts already seen: both are shown."""
    from hermes_core import Session, load_config

    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "SOUL.md").write_text("You are Hermes, a careful engineer.\n" * 10)
    (home / "memories" / "MEMORY.md").write_text(
        "\n§\n".join(f"Fact number {i} about the project." for i in range(40)))
    (home / "memories" / "USER.md").write_text("Prefers short answers.\n§\nWorks in UTC.")
    config = load_config(home=home, env={})
    env = {"HOME": str(tmp_path), "HERMES_TIMEZONE": "UTC"}
    for label, text in (("1 KB AGENTS.md", "Use the project's Makefile targets.\n" * 30),
                        (f"{len(_doc()):,}-char AGENTS.md", _doc())):
        project = tmp_path / f"project-{len(text)}"
        project.mkdir()
        (project / "AGENTS.md").write_text(text, encoding="utf-8")

        def build(blocked: tuple[str, ...], project: Path = project) -> Callable[[], object]:
            host = PluginHost.create(config=config, env={}, blocked=blocked)
            kwargs = dict(home=home, cwd=project, env=env, config=config, host=host, model="gpt-4o",
                          provider="openai", platform="cli", context_length=200_000)
            Session.open(**kwargs, persist=False).system_prompt  # warm
            return lambda: Session.open(**kwargs, persist=False).system_prompt

        from hermes_plugins.threat_scan import _remembered

        without, with_scan = build(("threat_scan",)), build(())
        plain, first, later = [], [], []
        for _ in range(15):
            t0 = time.perf_counter()
            without()
            t1 = time.perf_counter()
            _remembered.cache_clear()  # a repository no session has opened yet
            with_scan()
            t2 = time.perf_counter()
            with_scan()  # another session in the same repository
            t3 = time.perf_counter()
            plain.append(t1 - t0)
            first.append(t2 - t1)
            later.append(t3 - t2)
        a, f, b = statistics.median(plain), statistics.median(first), statistics.median(later)
        print(f"\nfirst build, {label}: {f * 1e3:.2f} ms with the scan, {a * 1e3:.2f} ms without "
              f"(+{(f - a) * 1e3:.2f} ms, {f / a:.2f}x)")
        print(f"later builds, {label}: {b * 1e3:.2f} ms with the scan, {a * 1e3:.2f} ms without "
              f"(+{(b - a) * 1e3:.2f} ms, {b / a:.2f}x)")


def test_red_team_rounds() -> None:
    """Detection per family and per language on the red-team sets of 2026-12-06 (a payload is
    caught when it gets a high finding), and look-alikes blocked. The first-sight figures
    (before the rules were widened for each set) are in docs/context-files.md."""
    from collections import Counter

    from hermes_plugins._common.screening import HIGH, severity
    from hermes_plugins.threat_scan import scan

    def caught(text: str) -> bool:
        return any(severity(i) == HIGH for i in scan(text))

    rates = {}
    for name, rows in (("round A", ROUND_A), ("round B", ROUND_B)):
        hits, total, lang_hits, lang_total = Counter(), Counter(), Counter(), Counter()
        for fam, lang, text in rows:
            hit = caught(text)
            hits[fam] += hit
            total[fam] += 1
            if fam in ("override", "authority"):
                lang_hits[lang] += hit
                lang_total[lang] += 1
        rates[name] = sum(hits.values()) / len(rows)
        print(f"\n{name}: {sum(hits.values())}/{len(rows)} caught; "
              + ", ".join(f"{f} {hits[f]}/{total[f]}" for f in total))
        print("  override+authority by language: " + ", ".join(f"{lang} {lang_hits[lang]}/{lang_total[lang]}"
                                                             for lang in lang_total))
    blocked = [line for line in BENIGN_A if caught(line)]
    print(f"look-alikes blocked: {len(blocked)}/{len(BENIGN_A)}")
    assert rates["round A"] >= 0.95 and not blocked
