"""A 200-request scripted Session: the prefix breaks only where a compression rewrites it.

Everything that could move the bytes happens meanwhile - memory written to disk, a skill
installed, the MCP tools listed in another order, a dozen parallel tool calls, the clock
crossing midnight - and none of it may break the prefix; only the two compressions may.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hermes_core import Session
from hermes_core.tokens import estimate_tokens
from hermes_plugins.cache_report import CacheSimulator

TOOL_NAMES = ["terminal", "read_file", "memory", "skills_list", "skill_view", "web_search", "patch"]
COMPRESSIONS = (120, 170)  # request indices right after a compression


def tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": f"The {name} tool. " * 20,
        "parameters": {"type": "object", "properties": {"arg": {"type": "string"}}},
    }}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 22, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def markers(payload: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(value["cache_control"])
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(payload)
    return found


def test_two_hundred_requests_break_the_prefix_only_at_compressions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("The user likes short answers.\n")
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("# Project rules\n" + "Run the tests before committing.\n" * 40)
    clock = Clock()
    tools = [tool(name) for name in TOOL_NAMES]
    session = Session.open(
        cwd=cwd, home=home, model="claude-sonnet-4", provider="anthropic", tools=tools,
        context_length=200_000, clock=clock, env={"HERMES_HOME": str(home)},
    )
    history: list[dict[str, Any]] = []
    payloads: list[dict[str, Any]] = []
    systems: list[Any] = []
    calls = 0
    turn = 0
    big_done = False
    while len(payloads) < 200:
        clock.now += timedelta(minutes=1)  # 200 minutes from 22:30: crosses midnight
        index = len(payloads)
        if index == 40:
            with open(home / "memories" / "MEMORY.md", "a") as handle:
                handle.write("\n§\nThe project uses uv.\n")
        if index == 60:
            skill = home / "skills" / "devops" / "deploy"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it.\n---\nSteps.\n")
        if index == 80:
            tools = list(reversed(tools))  # an MCP server reconnects and lists them in another order
        if index in COMPRESSIONS:
            keep = history[-4:]
            while keep and keep[0]["role"] == "tool":
                keep = keep[1:]
            history = [{"role": "user", "content": f"[summary of {len(history) - len(keep)} messages]",
                        "_compressed_summary": True}, *keep]
            session.invalidate_system_prompt()
        big = index >= 100 and not big_done
        if (turn % 3 == 2 or big) and history and history[-1]["role"] == "user":
            batch = 12 if big else 1 + turn % 3
            big_done = big_done or big
            ids = [f"call_{calls + i}" for i in range(batch)]
            calls += batch
            history.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": i, "type": "function",
                 "function": {"name": "terminal", "arguments": json.dumps({"cmd": f"ls {i}", "all": True})}}
                for i in ids
            ]})
            history += [{"role": "tool", "tool_call_id": i, "content": f"output of {i}\n" * 30} for i in ids]
        else:
            if history and history[-1]["role"] in ("user", "tool"):
                history.append({"role": "assistant", "content": f"Answer {turn}. " * 15})
            history.append({"role": "user", "content": f"  Request {turn}: please continue.  \n"})
        turn += 1
        before = json.dumps(history)
        payload = session.request(history, provider="anthropic", tools=tools)
        assert json.dumps(history) == before  # the caller's list is never touched
        payloads.append(payload)
        systems.append(payload["system"])

    simulator = CacheSimulator("anthropic", count=estimate_tokens, lookback=20)
    reports = [simulator.add(p) for p in payloads]

    assert big_done
    breaks = [r.index for r in reports if r.break_ is not None]
    assert breaks == list(COMPRESSIONS)
    # The system prompt keeps its bytes between compressions (memory, skill, midnight), and the
    # rebuild after the first compression shows the memory written meanwhile.
    assert all(s == systems[0] for s in systems[:COMPRESSIONS[0]])
    text = ["\n\n".join(block["text"] for block in system) for system in systems]
    assert "uv" not in text[0] and "uv" in text[COMPRESSIONS[0]]
    # The stable layer is its own block: the rebuild after a compression (new memory) keeps it.
    assert len(systems[0]) == 2 and systems[COMPRESSIONS[0]][0] == systems[0][0]
    assert reports[COMPRESSIONS[0]].cache_read_tokens > 0
    assert reports[COMPRESSIONS[0]].break_["cause"] == "system_prompt_changed"
    assert reports[COMPRESSIONS[1]].break_["cause"] == "history_rewritten"
    for payload in payloads:
        found = markers(payload)
        assert len(found) <= 4
        ttls = [m.get("ttl", "5m") for m in found]
        assert ttls == sorted(ttls, key=lambda t: t != "1h")  # 1h entries before 5m ones
    # Every request without a break reads the whole previous request from the cache, so some
    # breakpoint was within the lookback of the previous one - the 12-call batch included.
    for previous, current in itertools.pairwise(reports):
        if current.break_ is None:
            assert current.cache_read_tokens == previous.input_tokens, current.index
    total = simulator.summary()
    assert total["cost_ratio"] < 0.3
