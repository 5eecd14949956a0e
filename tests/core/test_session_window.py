"""One window for the whole session (prompt, tools, engine), and SessionOptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from hermes_core import PromptContext, Session, SessionOptions, hookimpl


class Overflow(Exception):
    status_code = 400


def tool_turn(i: int) -> list[dict[str, Any]]:
    call = {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{i}"})}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": "x = 1\n" * 2_000},
    ]


def test_after_an_overflow_the_prompt_and_the_tools_use_the_learned_window(tmp_path: Path) -> None:
    seen: list[int | None] = []

    class Window:
        @hookimpl
        def hermes_prompt_platform_hint(self, ctx: PromptContext) -> Any:
            seen.append(ctx.context_length)
            return None

    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=200_000, persist=False)
    session.host.register(Window(), "window_probe")
    assert session.system_prompt and seen == [200_000]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(30):
        messages += tool_turn(i)
    messages.append({"role": "user", "content": "and now?"})
    error = Overflow("This model's maximum context length is 100000 tokens. However, you asked for 180000.")
    assert session.on_provider_error(error, messages) is not None
    assert session.window == session.engine.context_length == 100_000
    assert session.system_prompt and seen[-1] == 100_000  # the rebuilt prompt was sized for 100k
    assert session.tools_context().context_length == 100_000
    assert session.prompt_context().context_length == 100_000
    assert session.context_length == 100_000


def test_window_falls_back_to_the_declared_one_and_none(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, context_length=150_000, persist=False)
    assert session.window == 150_000
    unknown = Session.open(cwd=tmp_path, home=tmp_path, persist=False)
    assert unknown.window is None and unknown.prompt_context().context_length is None


def test_open_takes_an_options_record_or_keywords(tmp_path: Path) -> None:
    options = SessionOptions(cwd=tmp_path, home=tmp_path, model="gpt-4o", platform="cli",
                             context_length=128_000, max_tokens=4_096, persist=False)
    a = Session.open(options)
    b = Session.open(cwd=tmp_path, home=tmp_path, model="gpt-4o", platform="cli",
                     context_length=128_000, max_tokens=4_096, persist=False)
    for session in (a, b):
        assert (session.model, session.platform, session.window, session.max_tokens) == ("gpt-4o", "cli", 128_000, 4_096)
    assert a.options == b.options
    c = Session.open(attrs.evolve(options, model="claude-3"))
    assert c.model == "claude-3"
    with pytest.raises(TypeError, match="model"):
        Session.open(options, model="other")
