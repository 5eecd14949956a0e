"""The cache report's simulator as it was before it became incremental: the from-scratch model
the streaming one is compared with (every request's units built and hashed in full)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.tokens import IMAGE_TOKEN_ESTIMATE, count_tokens
from hermes_core.wire import anthropic_blocks
from hermes_plugins.cache_report import (
    CAUSES,
    MESSAGES,
    MIN_CACHEABLE_TOKENS,
    OPENAI_CACHE_STEP,
    PROVIDERS,
    READ_PRICE,
    SYSTEM,
    TOOLS,
    WRITE_PRICE,
    Counter,
    TurnReport,
    _dumps,
    _marker_ttl,
    _normalise_block,
    _token_text,
)
from hermes_plugins.caching import LOOKBACK_BLOCKS


@attrs.frozen(kw_only=True)
class Unit:
    section: str
    data: bytes
    tokens: int
    ttl: str | None
    message: int | None = None


class _UnitMaker:
    """Builds units, caching bytes per unmarked message object and tokens per unit."""

    def __init__(self, count: Counter) -> None:
        self.count = count
        self._tokens: dict[bytes, int] = {}
        self._by_message: dict[int, tuple[Any, list[tuple[bytes, int]]]] = {}

    def _unit(self, section: str, block: Any, prefix: str = "", message: int | None = None,
              ttl: str | None = None) -> Unit:
        clean = _normalise_block(block)
        data = (prefix + _dumps(clean)).encode("utf-8")
        tokens = self._tokens.get(data)
        if tokens is None:
            text = _token_text(clean)
            tokens = IMAGE_TOKEN_ESTIMATE if text is None else self.count(text)
            self._tokens[data] = tokens
        return Unit(section=section, data=data, tokens=tokens, ttl=ttl, message=message)

    def units(self, payload: Mapping[str, Any]) -> list[Unit]:
        out: list[Unit] = []
        for tool in payload.get("tools") or ():
            out.append(self._unit(TOOLS, tool, ttl=_marker_ttl(tool)))
        system = payload.get("system")
        if isinstance(system, str):
            if system:
                out.append(self._unit(SYSTEM, {"type": "text", "text": system}))
        elif isinstance(system, list):
            for block in system:
                out.append(self._unit(SYSTEM, block, ttl=_marker_ttl(block)))
        for index, message in enumerate(payload.get("messages") or ()):
            out.extend(self._message_units(index, message))
        return out

    def _message_units(self, index: int, message: Mapping[str, Any]) -> list[Unit]:
        role = "assistant" if message.get("role") == "assistant" else "user"
        cached = self._by_message.get(id(message))
        if cached is not None and cached[0] is message:
            return [
                Unit(section=MESSAGES, data=d, tokens=t, ttl=None, message=index)
                for d, t in cached[1]
            ]
        units = [
            self._unit(MESSAGES, block, prefix=role + ":", message=index, ttl=_marker_ttl(block))
            for block in anthropic_blocks(message)
        ]
        if all(u.ttl is None for u in units):
            # Unmarked messages are the same objects from request to request (copy-on-write
            # payloads); keep a reference so the id stays theirs.
            self._by_message[id(message)] = (message, [(u.data, u.tokens) for u in units])
        return units


# --- simulation -----------------------------------------------------------------------------


def _chain(units: Sequence[Unit]) -> list[bytes]:
    hashes: list[bytes] = []
    previous = b""
    for unit in units:
        previous = hashlib.blake2b(previous + unit.data, digest_size=16).digest()
        hashes.append(previous)
    return hashes


def _first_difference(old: Sequence[Unit], new: Sequence[Unit]) -> tuple[int, int, int] | None:
    """(unit index, byte offset, shared tokens) where ``new`` stops extending ``old``."""
    offset = tokens = 0
    for index, unit in enumerate(old):
        if index >= len(new):
            return index, offset, tokens
        other = new[index]
        if other.data != unit.data:
            common = 0
            limit = min(len(unit.data), len(other.data))
            while common < limit and unit.data[common] == other.data[common]:
                common += 1
            return index, offset + common, tokens
        offset += len(unit.data)
        tokens += unit.tokens
    return None


class ReferenceSimulator:
    """Prices a sequence of requests under one provider's prefix-cache rules."""

    def __init__(self, provider: str = "anthropic", *, count: Counter | None = None,
                 min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"no cache rules for provider {provider!r}; known: {', '.join(PROVIDERS)}")
        self.provider = provider
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._maker = _UnitMaker(count or count_tokens)
        self._entries: dict[bytes, int] = {}
        self._previous: list[Unit] | None = None
        self.turns: list[TurnReport] = []

    def add(self, payload: Mapping[str, Any]) -> TurnReport:
        units = self._maker.units(payload)
        hashes = _chain(units)
        cumulative: list[int] = []
        total = 0
        for unit in units:
            total += unit.tokens
            cumulative.append(total)
        if self.provider == "anthropic":
            read, writes = self._anthropic(units, hashes, cumulative)
        else:
            read, writes = self._openai(hashes, cumulative)
        written = sum(tokens for tokens, _ in writes)
        cost = (total - read - written) + read * READ_PRICE[self.provider]
        cost += sum(tokens * WRITE_PRICE[ttl] for tokens, ttl in writes)
        prefix_bytes = prefix_tokens = 0
        brk: dict[str, Any] | None = None
        if self._previous is not None:
            diff = _first_difference(self._previous, units)
            if diff is None:
                prefix_bytes = sum(len(u.data) for u in self._previous)
                prefix_tokens = sum(u.tokens for u in self._previous)
            else:
                unit_index, prefix_bytes, prefix_tokens = diff
                brk = self._cause(self._previous, units, unit_index, prefix_bytes)
        report = TurnReport(
            index=len(self.turns),
            messages=len(payload.get("messages") or ()),
            input_tokens=total,
            prefix_bytes=prefix_bytes,
            prefix_tokens=prefix_tokens,
            cache_read_tokens=read,
            cache_write_tokens=written,
            uncached_tokens=total - read - written,
            cost=cost,
            break_=brk,
        )
        self._previous = units
        self.turns.append(report)
        return report

    @staticmethod
    def _cause(old: Sequence[Unit], new: Sequence[Unit], index: int, byte: int) -> dict[str, Any]:
        sections = {u.section for u in (old[index] if index < len(old) else None,
                                        new[index] if index < len(new) else None) if u is not None}
        section = next(s for s in (TOOLS, SYSTEM, MESSAGES) if s in sections)
        brk: dict[str, Any] = {"byte": byte, "cause": CAUSES[section]}
        if section == MESSAGES:
            unit = new[index] if index < len(new) else old[index]
            brk["message"] = unit.message
        return brk

    def _anthropic(self, units: Sequence[Unit], hashes: Sequence[bytes],
                   cumulative: Sequence[int]) -> tuple[int, list[tuple[int, str]]]:
        breakpoints = [i for i, unit in enumerate(units) if unit.ttl is not None]
        read = 0
        for point in breakpoints:
            for j in range(point, max(-1, point - self.lookback), -1):
                if hashes[j] in self._entries:
                    read = max(read, cumulative[j])
                    break
        writes: list[tuple[int, str]] = []
        start = read
        for point in breakpoints:
            size = cumulative[point]
            if size < self.min_tokens:
                continue
            if size > start:
                writes.append((size - start, units[point].ttl or "5m"))
                start = size
            self._entries[hashes[point]] = size
        return read, writes

    def _openai(self, hashes: Sequence[bytes],
                cumulative: Sequence[int]) -> tuple[int, list[tuple[int, str]]]:
        shared = 0
        for j in range(len(hashes) - 1, -1, -1):
            if hashes[j] in self._entries:
                shared = cumulative[j]
                break
        read = 0
        if shared >= self.min_tokens:
            read = self.min_tokens + (shared - self.min_tokens) // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
        for h, size in zip(hashes, cumulative):
            self._entries[h] = size
        return read, []

    def summary(self) -> dict[str, Any]:
        total = sum(t.input_tokens for t in self.turns)
        cost = sum(t.cost for t in self.turns)
        return {
            "requests": len(self.turns),
            "input_tokens": total,
            "cache_read_tokens": sum(t.cache_read_tokens for t in self.turns),
            "cache_write_tokens": sum(t.cache_write_tokens for t in self.turns),
            "uncached_tokens": sum(t.uncached_tokens for t in self.turns),
            "cost_ratio": round(cost / total, 4) if total else 1.0,
            "breaks": sum(1 for t in self.turns if t.break_ is not None),
        }

    def report(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "counter": "cl100k_base",
            "turns": [t.as_json() for t in self.turns],
            "total": self.summary(),
        }


