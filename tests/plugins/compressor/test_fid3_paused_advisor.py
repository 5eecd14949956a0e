"""A turn the API paused after an advisor call (``server_tool_use`` named ``advisor``) and
continued in a reply that opens with the ``advisor_tool_result`` is one turn: compaction never
cuts between the call and its result (the compressor's own list of result types missed the
advisor's; any block of a reply naming a ``tool_use_id`` now counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.conversion import ANTHROPIC_CONTENT
from hermes_core.pairing import pairing_problems
from hermes_plugins.compressor.boundaries import align_backward, align_forward, continues_turn

from fidelity_fixtures import ADVISOR_RESULT, ADVISOR_USE, WEB_SEARCH_RESULT, WEB_SEARCH_USE, open_session


def _reply(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", ANTHROPIC_CONTENT: blocks}


def _paused(use: dict[str, Any], result: dict[str, Any], ident: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "question"},
            _reply([{"type": "text", "text": "Asking."}, {**use, "id": ident}]),
            _reply([{**result, "tool_use_id": ident}, {"type": "text", "text": "Answer."}])]


@pytest.mark.parametrize(("use", "result"), [(ADVISOR_USE, ADVISOR_RESULT), (WEB_SEARCH_USE, WEB_SEARCH_RESULT)])
def test_a_reply_opening_with_a_server_result_continues_the_turn(use: Any, result: Any) -> None:
    history = _paused(use, result, "srvtoolu_77")
    assert continues_turn(history, 2)
    assert align_forward(history, 2) == 3 and align_backward(history, 2) == 1


def test_a_result_whose_call_is_in_the_same_reply_starts_nothing() -> None:
    history = [{"role": "user", "content": "q"}, _reply([{"type": "text", "text": "a"}]),
               _reply([{**ADVISOR_USE, "id": "srvtoolu_78"}, {**ADVISOR_RESULT, "tool_use_id": "srvtoolu_78"}])]
    assert not continues_turn(history, 2)


def _advisor_rounds(rounds: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for i in range(rounds):
        history.append({"role": "user", "content": f"question {i} " + "pad " * 200})
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Asking the advisor {i}. " + "note " * 2000},
            {**ADVISOR_USE, "id": f"srvtoolu_{i:02d}AD"}]})
        history.append({"role": "assistant", "content": [
            {**ADVISOR_RESULT, "tool_use_id": f"srvtoolu_{i:02d}AD"},
            {"type": "text", "text": f"Answer {i}. " + "word " * 500}]})
    return history


@pytest.mark.parametrize("window", [16_000, 24_000, 32_000])
def test_compaction_never_splits_a_paused_advisor_turn(tmp_path: Path, window: int) -> None:
    session = open_session(tmp_path, context_length=window)
    history = _advisor_rounds(6)
    try:
        result = session.compress(session.before_request(history))
        assert len(result.messages) < len(history)
        assert pairing_problems(result.messages) == []
        request = session.request(result.messages)
        calls: set[str] = set()
        for message in request["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block.get("type") == "server_tool_use":
                    calls.add(block["id"])
                if block.get("type") == "advisor_tool_result":
                    assert message["role"] == "assistant" and block["tool_use_id"] in calls, block
            if message["role"] == "user":
                calls.clear()  # a result must follow its call within the same assistant turn
    finally:
        session.close()
