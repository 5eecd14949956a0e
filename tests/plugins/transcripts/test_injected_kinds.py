"""One vocabulary of ``_injected`` kinds: what a transcript reader marks is what the compressor
(and the eval probes) would call the same text, and every kind any reader emits is known."""

import json
import re
from pathlib import Path

from hermes_core.transcripts import read_transcript, read_transcripts
from hermes_plugins._common.injected import (
    INJECTED_KINDS,
    INJECTED_OPENINGS,
    SUMMARY_OPENINGS,
    injected_kind,
    summary_author,
)

from locations import DATA as TEST_DATA
from locations import DOCS

DATA = TEST_DATA / "transcripts"
DOC = DOCS / "transcripts.md"


def injected_of(path: Path) -> set[str]:
    return {m["_injected"] for t in read_transcripts(path) for m in t.messages if "_injected" in m}


def anthropic_doc(texts: list[str]) -> str:
    messages = []
    for text in texts:
        messages += [{"role": "user", "content": [{"type": "text", "text": "please go on"},
                                                  {"type": "text", "text": text}]},
                     {"role": "assistant", "content": "ok"}]
    return json.dumps({"model": "m", "messages": messages})


def test_reader_and_compressor_name_every_opening_alike(tmp_path: Path) -> None:
    texts = [f"{opening} body" for opening, _ in (*INJECTED_OPENINGS, *SUMMARY_OPENINGS)]
    path = tmp_path / "a.json"
    path.write_text(anthropic_doc(texts))
    marked = [m for m in read_transcript(path, "anthropic").messages if m.get("_injected") or m.get("_summary")]
    assert len(marked) == len(texts), "every opening is split off and marked"
    for message in marked:
        unmarked = {"role": "user", "content": message["content"]}
        if "_summary" in message:
            assert message["_summary"] == summary_author(unmarked)
        else:
            assert message["_injected"] == injected_kind(unmarked), message["content"]
            assert message["_injected"] in INJECTED_KINDS
    # the names the docs give for Claude Code's slash commands and hooks
    assert injected_kind({"role": "user", "content": "<command-name>/clear</command-name>"}) == "slash-command"
    assert injected_kind({"role": "user", "content": "<user-prompt-submit-hook>x"}) == "hook-output"


def test_every_kind_the_readers_emit_is_known() -> None:
    emitted: set[str] = set()
    for path in sorted(DATA.iterdir()):
        emitted |= injected_of(path)
    assert {"observation", "aider-output"} <= emitted  # the fixtures exercise structural kinds
    assert emitted <= INJECTED_KINDS, emitted - INJECTED_KINDS


def test_every_kind_the_readers_emit_on_real_sessions_is_known(real_sessions_dir: Path) -> None:
    emitted: set[str] = set()
    for path in sorted(real_sessions_dir.iterdir()):
        if path.suffix in (".json", ".jsonl", ".traj"):
            emitted |= injected_of(path)
    assert emitted, "the real sessions hold injected text"
    assert emitted <= INJECTED_KINDS, emitted - INJECTED_KINDS


def test_the_docs_list_every_kind() -> None:
    row = next(line for line in DOC.read_text().splitlines() if line.startswith('| `_injected: "<kind>"`'))
    documented = set(re.findall(r"`([a-z-]+)`", row))
    assert INJECTED_KINDS <= documented, INJECTED_KINDS - documented
