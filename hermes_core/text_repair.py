"""Text from other programs' files made safe to hold: invalid UTF-8 and lone surrogates.

Invalid bytes are kept as ``\\xNN`` text and lone surrogates (which JSON can escape but UTF-8
cannot encode) as ``\\udNNN`` text, each counted, so nothing downstream (writers, tokenizers)
can choke on them and nothing is lost silently. Shared by the message helpers and the
transcript readers.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

__all__ = [
    "binary_detail",
    "decode_problem",
    "decode_text",
    "escape_lone_surrogates",
    "escape_surrogates_of",
    "looks_binary",
]

class ChangeCounter(Protocol):
    """What a repair reports to: ``transcript_format.ReportBuilder``, which stands on this module."""

    def changed(self, reason: str, n: int = 1) -> None: ...


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: What ``surrogateescape`` makes of an undecodable byte: U+DC80-U+DCFF.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file are binary data rather than text: a NUL byte, or more
    than a tenth of undecodable bytes and control characters (a text file with a stray invalid
    byte is still text, read with the byte escaped)."""
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", errors="replace")
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f"))
    return bad > max(8, len(text) // 10)


def binary_detail(head: bytes) -> str:
    """Where the first byte that is not text is, for the one-line error."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{head[exc.start]:02x} at offset {exc.start} is not UTF-8"
    offset = next((i for i, b in enumerate(head) if b < 32 and b not in (9, 10, 12, 13)), 0)
    return f"control byte 0x{head[offset]:02x} at offset {offset}" if head else "empty"


def decode_problem(path: object, exc: UnicodeDecodeError) -> str:
    """The one-line message for a file that is not UTF-8 text."""
    byte = exc.object[exc.start] if exc.start < len(exc.object) else 0
    return (f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}); a transcript is "
            "JSON or JSON Lines in UTF-8")


def decode_text(data: bytes, report: ChangeCounter | None, *, json_text: bool = True) -> str:
    """UTF-8 text; each invalid byte becomes ``\\xNN`` text (inside JSON strings when
    ``json_text``, where a doubled backslash parses to one, so the byte survives as text)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Valid UTF-8 never decodes to a surrogate, so every one here stands for a bad byte.
        text = data.decode("utf-8", errors="surrogateescape")
        slash = "\\\\" if json_text else "\\"
        found = 0

        def escape(match: re.Match[str]) -> str:
            nonlocal found
            found += 1
            return f"{slash}x{ord(match.group()) - 0xDC00:02x}"

        text = _ESCAPED_BYTE.sub(escape, text)
        if report is not None:
            report.changed("invalid_utf8_escaped", found)
        return text


def escape_lone_surrogates(value: Any, report: ChangeCounter | None = None) -> Any:
    """``value`` with every lone surrogate in its strings written as ``\\udNNN`` text.

    JSON may escape a lone surrogate (``"\\ud800"``); Python then holds a string that cannot be
    encoded as UTF-8, and every writer or tokenizer downstream would fail on it. Iterative, so a
    deep value cannot exhaust the stack.
    """

    def fix(text: str) -> str:
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        if report is not None:
            report.changed("lone_surrogates_escaped", len(_LONE_SURROGATE.findall(text)))
        return out

    if isinstance(value, str):
        return fix(value) if _LONE_SURROGATE.search(value) else value
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                container[key] = fix(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            for k in list(item):
                if isinstance(k, str) and _LONE_SURROGATE.search(k):
                    item[fix(k)] = item.pop(k)
                    k = fix(k)
                stack.append((item, k))
    return root[0]


def escape_surrogates_of(text: str, value: Any, report: ChangeCounter | None = None) -> Any:
    """``value`` parsed from JSON ``text``, with lone surrogates escaped when the text has any
    (the check is one regex over the text; the walk only runs when it matches)."""
    return escape_lone_surrogates(value, report) if _SURROGATE_ESCAPE.search(text) else value
