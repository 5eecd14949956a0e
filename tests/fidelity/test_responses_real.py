"""Real recorded sessions (Claude Code, Hermes Agent, SWE-agent, tau-bench; read in place, skipped
when absent) sent as OpenAI Responses requests: every request passes the Responses validator,
before and after a compaction, and what could not go as it was is counted."""

from __future__ import annotations

from pathlib import Path

from hermes_core import Session
from hermes_core.transcripts import read_transcripts

import validators_openai_responses as vr


def test_every_real_session_gives_valid_responses_requests(real_sessions_dir: Path, tmp_path: Path) -> None:
    seen = 0
    for path in sorted(real_sessions_dir.iterdir()):
        if path.suffix not in (".json", ".jsonl", ".traj"):
            continue
        for transcript in read_transcripts(path)[:3]:
            session = Session.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5",
                                   provider="openai", context_length=32_000, persist=False, env={})
            messages = list(transcript.messages)
            tools = list(transcript.tools)
            for history in (messages, session.before_request(messages, tools=tools)):
                kwargs = session.request(history, tools=tools, api="responses")
                # a recording may end with calls still in flight
                assert vr.problems(kwargs, allow_pending=True) == [], path.name
            seen += 1
    assert seen >= 5
