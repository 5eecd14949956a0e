"""JSON Lines end at ``\\n`` only, whether a transcript is read from a path, text or bytes.

``str.splitlines`` also breaks at U+2028, U+2029 and U+0085, which
JSON.stringify (Node: Gemini CLI, Claude Code, Cline...) leaves unescaped inside strings: a
valid file given as text or bytes was refused as "line N is not JSON" while the same file read
from a path worked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.messages import parse_transcript
from hermes_core.transcripts import read_transcript

# JSON escapes every control character; these three it allows raw inside a string.
SEPARATORS = ["\u2028", "\u2029", "\u0085"]


def _chat_lines(text: str) -> str:
    records = [
        {"role": "user", "content": f"first{text}line"},
        {"role": "assistant", "content": f"reply with{text}inside"},
    ]
    # ensure_ascii=False writes the separator raw, as JSON.stringify does
    return "\r\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(s):04X}" for s in SEPARATORS])
def test_a_separator_inside_a_string_is_not_a_line_end(sep: str, tmp_path: Path) -> None:
    text = _chat_lines(sep)
    path = tmp_path / "chat.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    by_path = read_transcript(path, "openai").messages
    by_text = read_transcript(text, "openai").messages
    by_bytes = read_transcript(text.encode("utf-8"), "openai").messages
    assert by_text == by_bytes == by_path
    assert [m["content"] for m in by_text] == [f"first{sep}line", f"reply with{sep}inside"]
    assert [m["content"] for m in parse_transcript(text)] == [f"first{sep}line", f"reply with{sep}inside"]


def test_auto_detection_reads_the_head_by_the_same_rule() -> None:
    text = _chat_lines("\u2028")
    assert len(read_transcript(text).messages) == 2
