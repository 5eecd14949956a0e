"""The window keeps the task statement: the first and the newest request the user made, not a
demonstration or an observation that happens to sit in the user role."""

import json

import pytest
from hermes_engine_window import MARKER_KEY, WindowEngine, is_request

from hermes_core.plugin import Config, is_valid_pairing, read_transcript

TASK = "We're currently solving the following issue within our repository. ISSUE: frobnicate() drops the last item"


def swe_agent_0x_traj(steps: int = 30, output_chars: int = 1_500) -> str:
    """A SWE-agent 0.x trajectory, hand-written: system, a long demonstration in the user
    role, the task statement, then text-ReAct turns whose observations are user turns."""
    history = [
        {"role": "system", "content": "SETTING: you work in a shell with special commands.", "agent": "primary"},
        {"role": "user", "content": "Here is a demonstration of how to correctly accomplish this task.\n"
         + "demo line\n" * 2_000, "agent": "primary", "is_demo": True},
        {"role": "user", "content": TASK, "agent": "primary"},
    ]
    for step in range(steps):
        history.append({"role": "assistant", "content": f"Step {step}.\n```\nls dir{step}\n```",
                        "thought": f"Step {step}.", "action": f"ls dir{step}\n", "agent": "primary"})
        history.append({"role": "user", "content": f"file{step}.py\n" + "x" * output_chars, "agent": "primary"})
    return json.dumps({"trajectory": [], "history": history, "info": {"exit_status": "submitted"}})


def window(context_length: int = 8_000) -> WindowEngine:
    engine = WindowEngine(config=Config())
    engine.update_model("m", context_length)
    return engine


def test_swe_agent_0x_task_statement_survives_the_demonstration(tmp_path):
    path = tmp_path / "task.traj"
    path.write_text(swe_agent_0x_traj())
    messages = read_transcript(path).chat_messages()
    assert messages[1].get("_demonstration") and messages[2]["content"] == TASK
    out = window().compress(messages)
    assert len(out) < len(messages)
    assert [m["content"] for m in out if m.get("role") == "user" and not m.get(MARKER_KEY)][0] == TASK
    assert not any(m.get("_demonstration") for m in out), "the demonstration should go before the task"
    # Every message is either kept or counted in a marker.
    kept = sum(1 for m in out if MARKER_KEY not in m)
    assert kept + sum(m.get(MARKER_KEY, 0) for m in out) == len(messages)
    assert is_valid_pairing(out)


def test_first_and_newest_request_kept_with_observations_between():
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "first request"}]
    for turn in range(20):
        messages.append({"role": "assistant", "content": f"working {turn}", "tool_calls": [
            {"id": f"c{turn}", "type": "function", "function": {"name": "run", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "y" * 2_000})
        if turn == 8:
            messages.append({"role": "user", "content": "newest request: also fix bar"})
        messages.append({"role": "user", "content": "<system-reminder>z</system-reminder>",
                         "_injected": "system-reminder"})
    out = window().compress(messages)
    contents = [m.get("content") for m in out]
    assert "first request" in contents and "newest request: also fix bar" in contents
    assert contents.index("first request") < contents.index("newest request: also fix bar")
    assert len(out) < len(messages) and is_valid_pairing(out)
    markers = [m for m in out if MARKER_KEY in m]
    assert len(markers) == 2, "one marker per dropped run"
    assert sum(m[MARKER_KEY] for m in markers) == len(messages) - (len(out) - len(markers))
    for before, after in zip(out, out[1:]):
        assert not (before["role"] == after["role"] == "user" and MARKER_KEY in before)


@pytest.mark.parametrize("message, expected", [
    ({"role": "user", "content": "do it"}, True),
    ({"role": "user", "content": [{"type": "text", "text": "do it"}]}, True),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}, False),
    ({"role": "user", "content": "out", "_injected": "observation"}, False),
    ({"role": "user", "content": "demo", "_demonstration": True}, False),
    ({"role": "user", "content": "summary", "_summary": "claude-code"}, False),
    ({"role": "assistant", "content": "do it"}, False),
])
def test_is_request(message, expected):
    assert is_request(message) is expected
