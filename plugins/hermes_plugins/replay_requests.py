"""The requests a cache replay prices: ``RequestSpec``, and ``MessagesPrefix`` for their messages.

Shared by the cache report (``cache_report``), the request-log reader that streams them
(``request_log_stream``) and ``hermes-ctx report``; they sit here, below all three, so the
report and the reader do not import each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs


class MessagesPrefix(Sequence[Any]):
    """The first ``end`` messages of a list, without copying them: every request of a replayed
    conversation is a prefix of the same list, and copies would make memory quadratic."""

    __slots__ = ("base", "end")

    def __init__(self, base: list[Any], end: int) -> None:
        self.base = base
        self.end = end

    def __len__(self) -> int:
        return self.end

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.base[: self.end][index]
        if index < 0:
            index += self.end
        if not 0 <= index < self.end:
            raise IndexError(index)
        return self.base[index]

    def __iter__(self) -> Iterator[Any]:
        return itertools.islice(self.base, self.end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"MessagesPrefix({self.end} of {len(self.base)} messages)"


@attrs.frozen(kw_only=True)
class RequestSpec:
    """One request to replay: its system text, tool definitions and messages."""

    system: str
    tools: tuple[Any, ...]
    messages: Sequence[Mapping[str, Any]]
