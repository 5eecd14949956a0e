"""The contrib window engine over real recorded sessions: whatever it drops, the first and the
newest request the user made (the task statement) stay. "Request" is the compressor's own rule
(``_common.injected.is_request``, which also knows injections by their openings), not the
engine's, so the two have to agree on real data."""

from pathlib import Path

import pytest

from hermes_core import Config
from hermes_core.pairing import is_valid_pairing
from hermes_core.transcripts import read_transcripts
from hermes_plugins._common.injected import is_request

window = pytest.importorskip("hermes_engine_window")


def test_window_keeps_the_task_statement_of_real_sessions(real_sessions_dir: Path) -> None:
    checked = 0
    for path in sorted(real_sessions_dir.iterdir()):
        if path.suffix not in (".json", ".jsonl", ".traj"):
            continue
        for transcript in read_transcripts(path)[:3]:
            messages = transcript.chat_messages()
            requests = [m for m in messages if is_request(m)]
            engine = window.WindowEngine(config=Config())
            engine.update_model("m", 8_000)
            out = engine.compress(messages)
            assert len(out) < len(messages), path.name
            assert is_valid_pairing(out), path.name
            kept = {id(m) for m in out}
            assert requests, f"{path.name}: no request found"
            for request in (requests[0], requests[-1]):
                assert id(request) in kept, f"{path.name}: request lost: {str(request['content'])[:80]!r}"
            if path.name.startswith("swe-agent"):
                assert "ISSUE:" in str(requests[0]["content"]), path.name
            checked += 1
    assert checked >= 5
