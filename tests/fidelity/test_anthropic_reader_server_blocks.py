"""The Anthropic transcript reader keeps a server tool's call beside its result as text: no
client call is made of it, so nothing reports its result missing; opaque payloads (encrypted
search pages, base64 bytes) are written as their size, not as text."""

from __future__ import annotations

import json

from hermes_core.pairing import pairing_problems
from hermes_core.plugin import MISSING_RESULT_TEXT, content_text
from hermes_core.transcripts import read_transcript

from fidelity_fixtures import ENCRYPTED_PAGE, PDF_B64, server_tool_history


def test_server_calls_are_no_client_calls_and_nothing_is_missing() -> None:
    transcript = read_transcript(json.dumps(server_tool_history()).encode())
    messages = list(transcript.messages)
    assert transcript.format == "anthropic"
    assert [c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()] == [
        "read_file", "read_log"]
    assert not any(MISSING_RESULT_TEXT in content_text(m.get("content")) for m in messages)
    assert pairing_problems(messages) == []
    searched = content_text(messages[1]["content"])
    assert "[server_tool_use block]" in searched and "[web_search_tool_result block]" in searched
    assert "https://docs.example.com/handlers" in searched  # what a reader can read stays
    report = transcript.conversion
    assert report is not None and report.changed["blocks_kept_as_text:server_tool_use"] == 6


def test_opaque_payloads_are_written_as_their_size() -> None:
    transcript = read_transcript(json.dumps(server_tool_history()).encode())
    text = json.dumps(list(transcript.messages))
    assert ENCRYPTED_PAGE[:200] not in text and PDF_B64 not in text
    assert f"<{len(ENCRYPTED_PAGE):,} characters omitted>" in text
