"""On a real recorded session replayed at a 32k window, every probe is kept or recoverable.

A probe is the rarest identifier-like word of a message that a compaction took out of the
context (one found in at most 3 messages of the session); it is *kept* when the word is still in
the live context (a summary quoted it), *recoverable* when ``context_search`` with the word
finds the message itself in the top 5. Read in place from the shared folder; skipped without it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_core.tokens import estimate_request_tokens
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.archive.search import message_text

from recall_support import TestEngines

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[./-][A-Za-z0-9_]+)*")


def hermes_agent_messages(folder: Path) -> list[dict[str, Any]]:
    data = json.loads((folder / "hermes-agent_session_20260429_083826_10b0d9d4.json").read_text())
    keep = ("role", "content", "tool_calls", "tool_call_id", "name")
    return [{k: m[k] for k in keep if k in m} for m in data["messages"]]


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if len(w) >= 8 and any(c.isdigit() or c in "_./-" or c.isupper() for c in w[1:])}


@pytest.mark.parametrize("engine", ["compressor", "window", "drophalf"])
def test_real_session_probes_are_kept_or_recoverable(real_sessions_dir: Path, tmp_path: Path, engine: str) -> None:
    source = hermes_agent_messages(real_sessions_dir)
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=32_000, host=host,
                           session_id=f"real-{engine}", config=load_config(data={"context": {"engine": engine}}))
    messages: list[dict[str, Any]] = []
    for message in source:
        if message["role"] == "assistant":
            messages = session.before_request(messages)
            messages = [*messages, message]
            usage = {"prompt_tokens": estimate_request_tokens(messages, system_prompt=session.system_prompt)}
            messages = session.after_response(usage, messages)
        else:
            messages = [*messages, message]
    assert len(archive_of(session)) > 0, "the session was never compacted at 32k"
    live_ids = {id(m) for m in messages}
    live_text = "\n".join(message_text(m) for m in messages)
    texts = [message_text(m) for m in source]
    vocabulary = Counter(w for t in texts for w in words(t))
    df = {w: sum(1 for t in texts if w in t) for w in vocabulary}  # substrings: paths inside paths
    probes = kept = recovered = 0
    missed = []
    for message in source:
        if id(message) in live_ids:
            continue
        text = message_text(message)
        candidates = sorted((df[w], -len(w), w) for w in words(text) if df[w] <= 3)
        if not candidates:
            continue
        word = candidates[0][2]
        probes += 1
        if word in live_text:
            kept += 1
            continue
        hits = json.loads(session.handle_tool_call("context_search", {"query": word}))["hits"]
        # Stored as the session's redactor masks it (nothing secret at rest, issue 31).
        stored = session.redactor.redact(text)
        if any(archive_of(session).get(h["ref"])["text"] == stored for h in hits):
            recovered += 1
        else:
            missed.append(word)
    assert probes >= 20
    assert not missed, f"{engine}: {len(missed)} of {probes} probes lost: {missed[:10]}"
