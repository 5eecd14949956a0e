"""``text_repair.decode_text``: every invalid UTF-8 byte kept as ``\\xNN`` text and counted."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.text_repair import decode_text
from hermes_core.transcript_format import ReportBuilder

from hypothesis_budget import examples


@given(st.binary(max_size=64))
@settings(max_examples=examples(200))
def test_each_bad_byte_is_its_escape_and_counted(data: bytes) -> None:
    report = ReportBuilder()
    text = decode_text(data, report, json_text=False)
    # The standard library's own rule for the same escape, byte by byte.
    assert text == data.decode("utf-8", errors="backslashreplace")
    escaped = len(text.encode("utf-8", "surrogatepass")) - len(data)  # 3 more bytes per escape
    assert report.changed_counts["invalid_utf8_escaped"] * 3 == escaped


@given(st.binary(max_size=64).filter(lambda b: b'"' not in b and b"\\" not in b))
@settings(max_examples=examples(200))
def test_inside_a_json_string_the_escape_parses_to_the_same_text(data: bytes) -> None:
    raw = decode_text(data, None, json_text=True)
    if all(b < 0x80 and b >= 0x20 for b in data):
        assert raw == data.decode()
    try:
        parsed = json.loads(f'"{raw}"')
    except json.JSONDecodeError:
        return  # control characters: not a JSON string either way
    assert parsed == decode_text(data, None, json_text=False)
