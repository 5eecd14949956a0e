"""A content part (or a message) whose ``type`` is a list or a dict - unhashable - is an unknown
kind like any other: ``Session.request`` sends a counted placeholder for it instead of raising a
raw ``TypeError`` out of the Responses-item detection (``is_item``) and its siblings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core.responses_items import canonical_messages, is_item

from fidelity_fixtures import open_session

ODD_TYPES: list[Any] = [["text"], {"kind": "text"}, ["input_text"]]
TARGETS = [("openai", None), ("anthropic", None), ("openai", "responses"), ("anthropic", "responses")]


def _sent_text(request: dict[str, Any]) -> str:
    return repr(request.get("messages") or request.get("input"))


@pytest.mark.parametrize("odd", ODD_TYPES)
def test_is_item_reads_an_unhashable_part_type_as_unknown(odd: Any) -> None:
    assert is_item({"role": "user", "content": [{"type": odd, "text": "hi"}]}) is False
    # one real Responses part still makes it an item
    assert is_item({"role": "user", "content": [{"type": odd}, {"type": "input_text", "text": "hi"}]})


def test_an_item_with_an_unhashable_type_becomes_a_message_of_its_role() -> None:
    item = {"role": "user", "type": ["x"], "content": [{"type": "input_text", "text": "hi"}]}
    [message] = canonical_messages([item], lambda x: x)
    assert message["role"] == "user" and message["content"] == "hi"


@pytest.mark.parametrize(("provider", "api"), TARGETS)
@pytest.mark.parametrize("odd", ODD_TYPES)
def test_request_replaces_the_part_by_a_counted_placeholder(
        tmp_path: Path, provider: str, api: str | None, odd: Any) -> None:
    session = open_session(tmp_path, provider=provider)
    try:
        request = session.request([{"role": "user", "content": [{"type": odd, "text": "secret words"}]}], api=api)
        sent = _sent_text(request)
        assert "omitted]" in sent and "secret words" not in sent  # a placeholder, not the raw part
        assert any("placeholder" in w.message for w in session.warnings)  # and counted
    finally:
        session.close()


@pytest.mark.parametrize(("provider", "api"), TARGETS)
def test_a_message_with_an_unhashable_type_keeps_its_text(tmp_path: Path, provider: str, api: str | None) -> None:
    session = open_session(tmp_path, provider=provider)
    try:
        request = session.request(
            [{"role": "user", "type": ["x"], "content": [{"type": "input_text", "text": "keep me"}]}], api=api)
        assert "keep me" in _sent_text(request)
    finally:
        session.close()
