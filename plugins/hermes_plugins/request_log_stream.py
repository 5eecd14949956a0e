"""A request log (``{"requests": [...]}``) read one request at a time, for ``cache-report``.

Parsing the whole log at once holds every request's messages as Python objects: about eight
times the file (860 MB for a 107 MB log of 20,000 requests). Read here, the file is decoded in
chunks and each entry of ``requests`` is parsed on its own (``json.JSONDecoder.raw_decode`` from
the entry's first byte, with more of the file read when the entry runs past the buffer), and
the requests share one growing message list while entries ``append`` to it: memory follows the
largest request, not the file.

The entry rules are ``parse_report_input``'s: ``system`` and ``tools`` carry over from the entry
before (top-level ones start the log); ``append`` extends the previous request's messages,
``messages`` replaces them; a leading system message is the request's system prompt.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_core.plugin import InvalidMessagesError
from hermes_plugins.replay_requests import entry_tools, logged_requests

CHUNK_BYTES = 1 << 20
_WHITESPACE = " \t\n\r"
#: Top-level keys that may come before ``requests`` (anything else: not a request log).
_HEAD_KEYS = frozenset({"system", "tools"})


class _Reader:
    """A text buffer over a file read in chunks, with a cursor; consumed text is dropped."""

    def __init__(self, path: Path, on_bytes: Callable[[int], None] | None) -> None:
        self.path = path
        self.handle = path.open("rb")
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.offset = 0  # characters dropped before ``buf`` (for error positions)
        self.on_bytes = on_bytes
        self._json = json.JSONDecoder()

    def close(self) -> None:
        self.handle.close()

    def _fill(self, at_least: int = CHUNK_BYTES) -> bool:
        if self.eof:
            return False
        data = self.handle.read(at_least)
        if self.on_bytes is not None and data:
            self.on_bytes(len(data))
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InvalidMessagesError(
                f"{self.path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} near offset "
                f"{self.offset + self.pos}); a transcript is JSON or JSON Lines in UTF-8"
            ) from None
        if not data:
            self.eof = True
        if self.pos > len(self.buf) // 2:  # drop what was consumed, keep the buffer small
            self.offset += self.pos
            self.buf, self.pos = self.buf[self.pos:], 0
        self.buf += text
        return True

    def peek(self) -> str:
        """The next non-blank character ("" at the end of the file)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise InvalidMessagesError(
                f"{self.path}: not a request log: expected {char!r} at character {self.offset + self.pos}, "
                f"found {found or 'the end of the file'!r}"
            )
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value; the buffer grows (doubling) until the value is complete."""
        self.peek()
        want = CHUNK_BYTES
        while True:
            try:
                value, end = self._json.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise InvalidMessagesError(
                        f"{self.path}: not JSON: {exc.msg} at character {self.offset + exc.pos}"
                    ) from None
                self._fill(want)  # the value may run past the buffer: read more, parse again
                want *= 2
                continue
            # A number at the very end of the buffer may go on in the next chunk.
            if end == len(self.buf) and not self.eof and isinstance(value, int | float):
                self._fill(want)
                continue
            self.pos = end
            return value


class RequestLog:
    """An open request log: ``specs()`` yields each request's ``RequestSpec``.

    ``open_request_log`` returns one only when the file is a request log whose ``requests`` come
    after its ``system`` / ``tools`` (the order the examples and hosts write); anything else is
    read whole by ``parse_report_input``.
    """

    def __init__(self, reader: _Reader, system: str | None, tools: tuple[Any, ...]) -> None:
        self._reader = reader
        self._system = system
        self._tools = tools
        #: Entries read so far (the progress label counts them).
        self.count = 0

    def close(self) -> None:
        self._reader.close()

    def _entries(self) -> Iterator[Any]:
        # The entries of the "requests" array, one parsed value at a time.
        reader = self._reader
        if reader.peek() == "]":
            reader.pos += 1
            return
        while True:
            yield reader.value()
            if reader.peek() == ",":
                reader.pos += 1
                continue
            reader.expect("]")
            return

    def specs(self) -> Iterator[Any]:
        reader = self._reader
        source = str(reader.path)
        try:
            for spec in logged_requests(self._entries(), source, self._system, self._tools):
                self.count += 1
                yield spec
            # Keys after "requests" would change how the requests read: refuse rather than guess.
            while reader.peek() == ",":
                reader.pos += 1
                key = reader.value()
                reader.expect(":")
                reader.value()
                if key in _HEAD_KEYS:
                    raise InvalidMessagesError(
                        f"{source}: the request log gives {key!r} after 'requests'; put it first"
                    )
            reader.expect("}")
        finally:
            reader.close()


def open_request_log(path: str | Path, *, on_bytes: Callable[[int], None] | None = None) -> RequestLog | None:
    """A ``RequestLog`` when ``path`` is an object whose ``requests`` array follows only
    ``system`` / ``tools`` keys; ``None`` (nothing kept open) for any other file."""
    reader = _Reader(Path(path), on_bytes)
    try:
        if reader.peek() != "{":
            reader.close()
            return None
        reader.pos += 1
        system: str | None = None
        tools: tuple[Any, ...] = ()
        while True:
            if reader.peek() != '"':
                reader.close()
                return None
            key = reader.value()
            reader.expect(":")
            if key == "requests":
                if reader.peek() != "[":
                    reader.close()
                    return None
                reader.pos += 1
                return RequestLog(reader, system, tools)
            if key not in _HEAD_KEYS:
                reader.close()
                return None
            value = reader.value()
            if key == "system":
                if value is not None and not isinstance(value, str):
                    raise InvalidMessagesError(f"{path}: 'system' must be a string")
                system = value
            else:
                tools = entry_tools(value, str(path))
            if reader.peek() != ",":
                reader.close()
                return None
            reader.pos += 1
    except BaseException:
        reader.close()
        raise
