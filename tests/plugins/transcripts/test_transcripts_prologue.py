"""The part every reader starts with: the source kind it takes, the list a document must hold,
and JSON Lines that are not objects - one helper each, so every reader says the same thing."""

from __future__ import annotations

import pytest

from hermes_core.errors import InvalidMessagesError
from hermes_core.transcript_format import TranscriptSource
from hermes_core.transcripts import read_transcript, transcript_formats

KINDS = {
    "aider": "Markdown text", "anthropic": "one JSON document", "atif": "one JSON document",
    "claude-code": "JSON Lines", "codex": "JSON Lines", "hermes-agent": "one JSON document",
    "hermes-agent-db": "an SQLite database", "openhands": "one JSON document",
    "swe-agent": "one JSON document", "tau-bench": "one JSON document",
}
SAMPLES = {
    "json": b'{"role": "user"}', "jsonl": b'{"a": 1}\n{"b": 2}\n', "text": b"just some words\n",
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_reader_refuses_a_source_of_another_kind_naming_both(name: str) -> None:
    fmt = transcript_formats()[name]
    for kind, data in SAMPLES.items():
        source = TranscriptSource.open(data)
        assert source.kind == kind
        verdict = fmt.detect(source)
        if KINDS[name].startswith({"json": "one JSON", "jsonl": "JSON Lines", "text": "Markdown"}[kind]):
            continue  # its own kind: decided by the content
        assert verdict.confidence is None
        assert verdict.reason == f"not {KINDS[name]} ({kind})"


@pytest.mark.parametrize(("name", "said"), [
    ("atif", "'steps' must be a list"),
    ("swe-agent", "'history' must be a list"),
    ("hermes-agent", "expected an object with 'messages'"),
])
@pytest.mark.parametrize("document", [b"[1, 2, 3]", b'{"other": []}', b'{"steps": 1, "history": 1, "messages": 1}'])
def test_a_forced_document_reader_names_the_list_it_needs(name: str, said: str, document: bytes) -> None:
    with pytest.raises(InvalidMessagesError, match=f"not a valid {name} transcript \\(TypeError: {said}\\)"):
        read_transcript(document, format=name)


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_json_lines_that_are_not_objects_are_dropped_and_counted(name: str) -> None:
    lines = {
        "claude-code": b'{"type": "user", "sessionId": "s", "uuid": "u1", "message": {"role": "user", "content": "hi"}}\n',
        "codex": b'{"type": "response_item", "payload": {"type": "message", "role": "user",'
                 b' "content": [{"type": "input_text", "text": "hi"}]}}\n',
    }[name]
    transcript = read_transcript(b"[1, 2]\n" + lines + b'"text"\n', format=name)
    assert transcript.conversion is not None
    assert transcript.conversion.dropped.get("not_an_object") == 2
    assert [m["content"] for m in transcript.messages] == ["hi"]
