"""``AsyncSession``: the same behaviour over the same hooks, with the event loop kept free.

50 sessions on one loop compress at once through a fake summariser that holds every answer
until all 50 summaries are in flight and the loop has been seen running meanwhile; the
summaries go out through the async SDK client, and the sessions' work runs in worker threads.
Nothing here depends on how fast the machine is: events order the steps, and deadlines are only
hang guards."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import AsyncSession, PluginHost, load_config
from hermes_core.compaction_feedback import CompactionEvent
from hermes_core.pairing import pairing_problems
from hermes_core.session import Session

pytest.importorskip("openai")

from fake_llm_servers import openai_completion, running  # noqa: E402

SESSIONS = 50
#: Only a hang guard: how long the loop may take to see a condition come true.
HANG_GUARD = 120.0
#: Ticks the loop must run while all summaries wait (a loop blocked by a summary runs none).
TICKS_WHILE_WAITING = 5


def tool_turn(i: int, size: int) -> list[dict[str, Any]]:
    cid = f"call_{i}"
    return [
        {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "type": "function", "function": {
            "name": "read_file", "arguments": json.dumps({"path": f"src/mod_{i}.py"})}}]},
        {"role": "tool", "tool_call_id": cid, "content": f"# module {i}\n" + "value = compute(x)\n" * (size // 19)},
    ]


def history() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refactor the modules."}]
    for i in range(12):
        messages += tool_turn(i, 3_000)
    messages.append({"role": "user", "content": "continue"})
    return messages


def summary_config(base_url: str, home: Path) -> Any:
    # The timeout is a hang guard too: the first summary waits until the fiftieth is sent.
    return load_config(home=home, env={}, data={"compression": {"summary": {
        "provider": "openai", "model": "summary-model", "base_url": base_url, "timeout": HANG_GUARD,
    }}})


async def _ticker(stop: asyncio.Event, ticks: list[int]) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.01)
        ticks.append(1)


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` from the loop; the polling itself needs a loop that is free."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_GUARD
    while not condition():
        assert loop.time() < deadline, f"hang guard: {what}"
        await asyncio.sleep(0.005)


def test_fifty_sessions_compress_concurrently_and_the_loop_keeps_ticking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    worked_on: set[int] = set()
    original = Session.after_response

    def recording(self: Session, *args: Any, **kwargs: Any) -> Any:
        worked_on.add(threading.get_ident())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Session, "after_response", recording)
    gate = threading.Event()
    with running("openai") as server:
        server.push(openai_completion("## Goal\nRefactor.\n## Progress\nRead 12 modules.", gate=gate))
        config = summary_config(server.base_url, home)
        host = PluginHost.create(config=config, env={})
        events: list[CompactionEvent] = []

        async def on_status(event: CompactionEvent) -> None:
            asyncio.get_running_loop()  # delivered on the loop, never in a worker
            events.append(event)

        async def main() -> list[list[dict[str, Any]]]:
            sessions = await asyncio.gather(*(
                AsyncSession.open(cwd=tmp_path, home=home, config=config, host=host, model="m",
                                  provider="openai", context_length=16_000, persist=False, env={},
                                  on_status=on_status)
                for _ in range(SESSIONS)
            ))
            stop, ticks = asyncio.Event(), []
            ticker = asyncio.create_task(_ticker(stop, ticks))
            compacting = asyncio.gather(*(
                s.after_response({"prompt_tokens": 15_000}, history()) for s in sessions
            ))
            try:
                # Every session's summary is sent before any is answered: none waits for
                # another, and the loop that carries them is free while all fifty wait.
                await _until(lambda: len(server.requests) >= SESSIONS, "all summaries in flight")
                seen = len(ticks)
                await _until(lambda: len(ticks) >= seen + TICKS_WHILE_WAITING, "the loop ticking")
                assert not compacting.done()
            finally:
                gate.set()
            results = await compacting
            await _until(lambda: sum(e.kind == "compacted" for e in events) >= SESSIONS,
                         "the status callbacks")
            stop.set()
            await ticker
            await asyncio.gather(*(s.close() for s in sessions))
            assert threading.get_ident() not in worked_on  # the sessions' work ran off the loop
            return results

        results = asyncio.run(main())
        received = list(server.requests)

    assert len(received) == SESSIONS  # one LLM summary per session
    assert all(r.headers.get("x-stainless-async", "").startswith("async") for r in received)
    assert len([e for e in events if e.kind == "compacted"]) == SESSIONS
    assert worked_on  # the recording wrapper did run
    for messages in results:
        assert len(messages) < len(history())
        assert pairing_problems(messages) == []
        assert any("Read 12 modules" in str(m.get("content")) for m in messages)


DEFERRED = {"type": "function", "source": "mcp-github", "function": {
    "name": "create_issue", "description": "Open a GitHub issue.",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}}}
OWN = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}


def test_the_async_surface_matches_the_sync_one_with_async_tools(tmp_path: Path) -> None:
    ran: list[tuple[str, Any]] = []

    async def run_tool(name: str, arguments: dict[str, Any]) -> str:
        asyncio.get_running_loop()  # awaited on the host's loop, not in a worker
        await asyncio.sleep(0)
        ran.append((name, arguments))
        return f"ran {name}"

    async def main() -> None:
        async with await AsyncSession.open(cwd=tmp_path, model="gpt-5", provider="openai",
                                           persist=False, env={}, invoke=run_tool) as session:
            defs = await session.assemble_tools([OWN, DEFERRED])
            assert {d["function"]["name"] for d in defs} >= {"read_file", "tool_search"}
            answer = await session.handle_tool_call(
                "tool_call", {"calls": [{"name": "create_issue", "arguments": {"title": "t"}}]})
            assert answer == "ran create_issue"
            assert await session.handle_tool_call("read_file", '{"path": "a"}') == "ran read_file"
            messages = [{"role": "user", "content": "hi"}]
            kwargs = await session.request(messages, tools=defs)
            assert kwargs == session.session.request(messages, tools=defs)
            assert kwargs["messages"][0] == {"role": "system", "content": session.system_prompt}
            assert await session.prompt() == session.system_prompt
            assert session.session_id == session.session.session_id
        assert session.closed

    asyncio.run(main())
    assert ran == [("create_issue", {"title": "t"}), ("read_file", {"path": "a"})]


def test_async_summaries_keep_the_deadline_and_their_clients_close_with_the_loop(tmp_path: Path) -> None:
    from hermes_core.summarizer import SummarizerTimeoutError, SummaryRequest
    from hermes_plugins import summarizers_async
    from hermes_plugins.summarizers import OpenAISummarizer

    late = threading.Event()  # opened only after the test: the first answer never comes in time
    with running("openai") as server:
        server.push(openai_completion("late", gate=late), openai_completion("## Goal\nok"))
        # The second call must fit the deadline on a loaded machine, hence not a tighter one.
        config = load_config(home=tmp_path, env={}, data={"compression": {"summary": {
            "provider": "openai", "model": "summary-model", "base_url": server.base_url,
            "timeout": 2.0}}})
        summarizer = OpenAISummarizer(config)

        async def main() -> str:
            loop = asyncio.get_running_loop()
            with pytest.raises(SummarizerTimeoutError, match="bounds the whole call"):
                await asyncio.to_thread(
                    summarizers_async.summarize_on_loop, summarizer, SummaryRequest(prompt="x"), loop)
            text = await asyncio.to_thread(
                summarizers_async.summarize_on_loop, summarizer, SummaryRequest(prompt="x"), loop)
            assert loop in summarizers_async._clients  # one client for the loop, reused
            return text

        try:
            assert asyncio.run(main()) == "## Goal\nok"
        finally:
            late.set()
    assert len(summarizers_async._clients) == 0  # closed when asyncio.run shut the loop down


def test_a_failing_status_callback_never_breaks_the_turn(capture_events: list[dict[str, Any]]) -> None:
    from hermes_core.aio import _status_on_loop

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def broken(event: Any) -> None:
            raise RuntimeError("ui down")

        async def broken_async(event: Any) -> None:
            raise RuntimeError("ui down")

        for callback in (broken, broken_async):
            deliver = _status_on_loop(callback, loop)
            assert deliver is not None
            await asyncio.to_thread(deliver, "event")  # from a worker, as compaction calls it
            deliver("event")  # and from the loop itself
            await asyncio.sleep(0.02)

    asyncio.run(main())  # nothing raised out of the callbacks
    failed = [e for e in capture_events if e["event"] == "status_callback_failed"]
    assert len(failed) == 4
