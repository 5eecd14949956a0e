"""An SDK ``Message`` (or ``BetaMessage``) holding server-tool, MCP and cited blocks becomes
history through ``after_response``/``as_message`` with every block as the API sent it - its
nulls too: a citation's ``document_title: null`` is a field the API requires back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.sdk import as_message

import validators_anthropic
from fidelity_fixtures import (
    BASH_RESULT,
    BASH_USE,
    CITED_EVERYWHERE,
    CITED_SPANS,
    MCP_RESULT,
    MCP_USE,
    THINK_1,
    WEB_FETCH_RESULT,
    WEB_FETCH_USE,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
    open_session,
)

types = pytest.importorskip("anthropic.types")
beta = pytest.importorskip("anthropic.types.beta")

BLOCKS = [THINK_1, WEB_SEARCH_USE, WEB_SEARCH_RESULT, *CITED_SPANS, WEB_FETCH_USE, WEB_FETCH_RESULT,
          BASH_USE, BASH_RESULT, CITED_EVERYWHERE]


def _reply(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 50}, "content": blocks}


def test_a_null_the_api_requires_survives_the_sdk_object() -> None:
    assert any(c.get("document_title", "") is None for c in CITED_EVERYWHERE["citations"])
    kept = as_message(types.Message.model_validate(_reply(BLOCKS)))["_anthropic_content"]
    assert kept == BLOCKS


def test_a_beta_message_with_mcp_blocks_goes_back_whole(tmp_path: Path) -> None:
    blocks = [*BLOCKS, MCP_USE, MCP_RESULT]
    message = beta.BetaMessage.model_validate(_reply(blocks))
    session = open_session(tmp_path)
    history = session.after_response({"input_tokens": 900}, [{"role": "user", "content": "go"}, message])
    assert history[1]["_anthropic_content"] == blocks
    request = session.request([*history, {"role": "user", "content": "thanks"}])
    validators_anthropic.check(request, thinking=True)
    sent = [{k: v for k, v in b.items() if k != "cache_control"} for b in request["messages"][1]["content"]]
    assert sent == blocks
