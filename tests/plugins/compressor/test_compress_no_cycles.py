"""A forced compression leaves no reference cycles behind.

The compaction leaves the cyclic collector to the host (it never pauses it: issue 33), so what
it allocates must be freed by reference counting: whatever it left in cycles would stay alive
until the host's next collection and cost that collection a traversal of it (over 100k
messages, ~23,000 objects and the 100k-entry output list of the free passes' plan).
"""

from __future__ import annotations

import gc
import json
from collections import Counter
from pathlib import Path
from typing import Any

from hermes_core import Session
from hermes_core.config import load_config


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for t in range(turns):
        messages.append({"role": "user", "content": f"step {t}: run the tests for module_{t}"})
        calls = [
            {"id": f"c{t}a", "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": f"pytest tests/test_m{t}.py"})}},
            {"id": f"c{t}b", "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{t}.py"})}},
        ]
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        failed = t % 3 == 0
        output = (f"FAILED tests/test_m{t}.py::test_x - KeyError: 'k{t}'\n" if failed else "") + \
            "\n".join(f"line {i} of the output of step {t}" for i in range(60))
        messages.append({"role": "tool", "tool_call_id": f"c{t}a",
                         "content": json.dumps({"exit_code": 1 if failed else 0, "output": output})})
        messages.append({"role": "tool", "tool_call_id": f"c{t}b",
                         "content": "\n".join(f"def f{i}(): return {i}  # module {t}" for i in range(80))})
        messages.append({"role": "assistant", "content": f"Step {t} done."})
    messages.append({"role": "user", "content": "Now fix the remaining failures."})
    return messages


def test_a_forced_compress_leaves_no_reference_cycles(tmp_path: Path) -> None:
    messages = _history(120)
    for archive in (False, True):
        config = load_config(home=tmp_path, env={}, data={"archive": {"enabled": archive}})
        session = Session.open(cwd=tmp_path, home=tmp_path, model="gpt-5", provider="openai",
                               context_length=16_000, persist=False, config=config, env={})
        session.compress(messages[:40], force=True)  # first-use work (imports, caches) done
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            result = session.compress(messages, force=True)
            assert len(result.messages) < len(messages)
            del result
            gc.collect()
            # Our own objects only: another thread's garbage (a store's writer) is not ours.
            left = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage
                           if type(o).__module__.startswith(("hermes_core", "hermes_plugins")))
        finally:
            gc.garbage.clear()
            gc.set_debug(0)
            if was_enabled:
                gc.enable()
        assert not left, f"archive={archive}: objects only the collector frees: {left.most_common(8)}"
