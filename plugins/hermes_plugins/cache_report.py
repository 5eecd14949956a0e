"""The cache economy report: replay a session's requests and price them under a provider's cache.

Each request is reduced to a stream of *units* in the provider's prefix order - every tool
definition, every system block, every message content block - each serialised as compact,
sorted-key JSON without its ``cache_control`` marker (markers move every turn; the cache keys on
content). Two consecutive requests are compared on that stream: the shared prefix (bytes and
tokens) and, when the older request is not a prefix of the newer one, the first differing byte
and its cause.

Cache rules simulated (no TTL expiry: the replay assumes each request follows the previous one
within the TTL):

* ``anthropic`` - entries are written at breakpoints (units carrying ``cache_control``) whose
  prefix holds at least 1,024 tokens; a breakpoint reads the longest entry found at its own
  boundary or the 19 before it (20 boundaries, the lookback); tokens after the read point up to
  the last cacheable breakpoint are written (1.25x for 5 m, 2x for 1 h), reads cost the model's
  cached-read rate (0.1x when the model is not known).
* ``openai`` - automatic: the longest prefix shared with any earlier request, from 1,024 tokens
  on and in steps of 128, is read at the model's cached-read rate (gpt-5 0.1x, gpt-4.1 0.25x,
  gpt-4o 0.5x: ``read_rates``, from hermes_core.model_data; 0.5x for an unknown model); nothing
  is charged extra for writing.

Token figures are exact cl100k_base counts (``hermes_core.tokens.count_tokens``) of each unit's
text (a text block's text, a tool result's text, otherwise the unit's JSON); the provider's own
tokenizer differs, so read the figures as relative.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from hermes_core.plugin import (
    IMAGE_TOKEN_ESTIMATE,
    anthropic_blocks,
    count_tokens,
)
from hermes_plugins.cache_rules import LOOKBACK_BLOCKS

MIN_CACHEABLE_TOKENS = 1_024
OPENAI_CACHE_STEP = 128
WRITE_PRICE = {"5m": 1.25, "1h": 2.0}
READ_PRICE = {"anthropic": 0.1, "openai": 0.5}
PROVIDERS = ("anthropic", "openai")
#: Dollar figures are rounded to micro-dollars.
USD_DIGITS = 6
PER_TOKENS = 1_000_000

TOOLS, SYSTEM, MESSAGES = "tools", "system", "messages"
CAUSES = {
    TOOLS: "tool_list_changed",
    SYSTEM: "system_prompt_changed",
    MESSAGES: "history_rewritten",
}

Counter = Callable[[str], int]


@attrs.frozen(kw_only=True)
class TurnReport:
    index: int
    messages: int
    input_tokens: int
    prefix_bytes: int
    prefix_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_tokens: int
    cost: float
    break_: dict[str, Any] | None
    #: The request's price in US dollars at the model's prices (``usd_prices``); ``None``
    #: when they are not known.
    cost_usd: float | None = None

    def as_json(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "messages": self.messages,
            "input_tokens": self.input_tokens,
            "prefix_bytes": self.prefix_bytes,
            "prefix_tokens": self.prefix_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "uncached_tokens": self.uncached_tokens,
            "cost_ratio": round(self.cost / self.input_tokens, 4) if self.input_tokens else 1.0,
            "break": self.break_,
        }
        if self.cost_usd is not None:
            out["cost_usd"] = round(self.cost_usd, USD_DIGITS)
        return out


# --- units ----------------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _marker_ttl(block: Any) -> str | None:
    if isinstance(block, Mapping):
        marker = block.get("cache_control")
        if isinstance(marker, Mapping):
            return "1h" if marker.get("ttl") == "1h" else "5m"
    return None


def _normalise_block(block: Any) -> Any:
    """A block as the cache sees it: no marker, a tool result's text always as text blocks."""
    clean = _without_markers(block)
    if isinstance(clean, dict) and clean.get("type") == "tool_result":
        content = clean.get("content")
        if isinstance(content, str):
            clean["content"] = [{"type": "text", "text": content}] if content else []
    return clean


def _token_text(block: Any) -> str | None:
    """The text to count for a block; ``None`` for an image (a fixed estimate)."""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind in ("image", "image_url", "input_image"):
            return None
        if kind == "text" and isinstance(block.get("text"), str):
            return str(block["text"])
        if kind == "tool_result":
            content = block.get("content")
            parts = content if isinstance(content, list) else [content]
            texts = [
                p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else _dumps(p)
                for p in parts
                if p not in (None, "")
            ]
            return "\n".join(texts)
    return _dumps(block)


#: One unit as the simulator keeps it: digest of its bytes, byte length, tokens, marker TTL.
UnitKey = tuple[bytes, int, int, "str | None"]


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class _UnitMaker:
    """Builds units, caching them per unmarked message object and tokens per unit digest."""

    def __init__(self, count: Counter) -> None:
        self.count = count
        self._tokens: dict[bytes, int] = {}
        self._by_message: dict[int, tuple[Any, list[UnitKey]]] = {}

    def data(self, block: Any, prefix: str = "") -> bytes:
        return (prefix + _dumps(_normalise_block(block))).encode("utf-8")

    def unit(self, block: Any, prefix: str = "") -> UnitKey:
        clean = _normalise_block(block)
        data = (prefix + _dumps(clean)).encode("utf-8")
        digest = _digest(data)
        tokens = self._tokens.get(digest)
        if tokens is None:
            text = _token_text(clean)
            tokens = IMAGE_TOKEN_ESTIMATE if text is None else self.count(text)
            self._tokens[digest] = tokens
        return (digest, len(data), tokens, _marker_ttl(block))

    def head(self, payload: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The (section, block) pairs before the messages: tool definitions, system blocks."""
        out: list[tuple[str, Any]] = [(TOOLS, tool) for tool in payload.get("tools") or ()]
        system = payload.get("system")
        if isinstance(system, str):
            if system:
                out.append((SYSTEM, {"type": "text", "text": system}))
        elif isinstance(system, list):
            out.extend((SYSTEM, block) for block in system)
        return out

    @staticmethod
    def blocks(message: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        role = "assistant" if message.get("role") == "assistant" else "user"
        return role + ":", anthropic_blocks(message)

    def forget_except(self, messages: Sequence[Any]) -> None:
        """Drop the cached units of messages no longer in the conversation (a compression
        rewrote it), so memory follows the current request, not every message ever replayed.
        Checked when the cache has grown to twice the request: amortised, never per request."""
        if len(self._by_message) > 2 * len(messages) + 64:
            alive = {id(m) for m in messages}
            self._by_message = {k: v for k, v in self._by_message.items() if k in alive}

    def message_units(self, message: Mapping[str, Any]) -> list[UnitKey]:
        cached = self._by_message.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        prefix, blocks = self.blocks(message)
        units = [self.unit(block, prefix) for block in blocks]
        if all(u[3] is None for u in units):
            # Unmarked messages are the same objects from request to request (copy-on-write
            # payloads); keep a reference so the id stays theirs.
            self._by_message[id(message)] = (message, units)
        return units


def _common_prefix(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    lo, hi = 0, limit  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


#: Messages from the end of the previous request compared one by one (where layouts put their
#: markers); everything before them is compared in one identity comparison of the two lists.
TAIL_WINDOW = 64


class _Previous(NamedTuple):
    """What the previous request held from the first unit the new one changed on."""

    tail: list[bytes]  # the digests of its units from there
    owner: list[int]  # the message index of each of those units
    total: tuple[int, int]  # its (bytes, tokens)
    units: int  # how many units it had
    head: list[tuple[str, Any]]  # its head (section, block)
    message: Callable[[int], Any]  # its message ``i``


class CacheSimulator:
    """Prices a sequence of requests under one provider's prefix-cache rules.

    Streaming and incremental: it keeps only the previous request, as flat arrays over its
    units (digest, cumulative bytes and tokens, chained prefix hash), and re-derives only the
    units from the first message that changed - for a conversation replayed request by request,
    the new messages and the few a layout marks. Memory is bounded by the largest request (plus
    the cache entries), not by the sum of all requests.
    """

    def __init__(self, provider: str = "anthropic", *, count: Counter | None = None,
                 min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS,
                 read_price: float | None = None, usd: Mapping[str, Any] | None = None) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"no cache rules for provider {provider!r}; known: {', '.join(PROVIDERS)}")
        self.provider = provider
        #: The cached-read price as a fraction of the input price: the model's (``read_rates``),
        #: else the provider's default.
        self.read_price = READ_PRICE[provider] if read_price is None else read_price
        #: USD per million tokens (``usd_prices``): each request is priced in dollars too.
        self.usd = dict(usd) if usd is not None else None
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._maker = _UnitMaker(count or count_tokens)
        self._entries: dict[bytes, int] = {}
        self.turns: list[TurnReport] = []
        self._started = False
        self._head: list[tuple[str, Any]] = []  # the previous request's head (section, block)
        self._head_data: list[bytes] = []
        self._messages: list[Any] = []  # the previous request's messages (own list)
        self._digest: list[bytes] = []
        self._bytes: list[int] = []  # cumulative bytes after each unit
        self._tokens: list[int] = []  # cumulative tokens after each unit
        self._hash: list[bytes] = []  # chained hash of the prefix ending with each unit
        self._owner: list[int] = []  # message index of each unit (-1: head)
        self._offset: list[int] = []  # first unit of each message
        self._marks: list[tuple[int, str]] = []  # (unit index, ttl) of every breakpoint
        self.rebuilt_units = 0  # for tests: units derived again (not reused)

    # -- keeping the arrays

    def _truncate(self, unit: int, message: int) -> None:
        del self._digest[unit:], self._bytes[unit:], self._tokens[unit:], self._hash[unit:]
        del self._owner[unit:], self._offset[message:]
        marks = self._marks
        while marks and marks[-1][0] >= unit:
            marks.pop()

    def _push(self, key: UnitKey, owner: int) -> None:
        digest, size, tokens, ttl = key
        index = len(self._digest)
        previous = self._hash[-1] if self._hash else b""
        self._digest.append(digest)
        self._bytes.append((self._bytes[-1] if self._bytes else 0) + size)
        self._tokens.append((self._tokens[-1] if self._tokens else 0) + tokens)
        self._hash.append(hashlib.blake2b(previous + digest, digest_size=16).digest())
        self._owner.append(owner)
        if ttl is not None:
            self._marks.append((index, ttl))
        self.rebuilt_units += 1

    def _first_changed(self, messages: list[Any]) -> int:
        """The first message index where ``messages`` differs (by identity) from the previous
        request's; ``self._messages`` becomes ``messages`` (an own list, updated in place)."""
        own = self._messages
        m, n = len(own), len(messages)
        if n >= m:
            first = m
            start = max(0, m - TAIL_WINDOW)
            saved = own[start:]
            for i in range(start, m):
                if own[i] is not messages[i]:
                    first = min(first, i)
                    own[i] = messages[i]
            own.extend(messages[m:])
            if own == messages:
                return first
            own[start:] = saved  # a change further back: find it the slow way
            del own[m:]
        limit = min(m, n)
        first = next((i for i in range(limit) if own[i] is not messages[i]), limit)
        self._messages = list(messages)
        return first

    # -- one request

    def add(self, payload: Mapping[str, Any]) -> TurnReport:
        head = self._maker.head(payload)
        messages = payload.get("messages") or []
        messages = messages if type(messages) is list else list(messages)
        started = self._started
        first_unit, previous = self._update(head, messages)
        total = self._tokens[-1] if self._tokens else 0
        if self.provider == "anthropic":
            read, writes = self._anthropic()
        else:
            read, writes = self._openai(first_unit)
        written = sum(tokens for tokens, _ in writes)
        cost = (total - read - written) + read * self.read_price
        cost += sum(tokens * WRITE_PRICE[ttl] for tokens, ttl in writes)
        cost_usd = None
        if self.usd is not None:
            usd = self.usd
            cost_usd = ((total - read - written) * usd["input"] + read * usd["cache_read"]
                        + sum(tokens * usd[f"cache_write_{ttl}"] for tokens, ttl in writes)) / PER_TOKENS
        prefix_bytes, prefix_tokens, brk = (
            self._break(first_unit, previous, head, messages) if started else (0, 0, None))
        report = TurnReport(
            index=len(self.turns),
            messages=len(messages),
            input_tokens=total,
            prefix_bytes=prefix_bytes,
            prefix_tokens=prefix_tokens,
            cache_read_tokens=read,
            cache_write_tokens=written,
            uncached_tokens=total - read - written,
            cost=cost,
            break_=brk,
            cost_usd=cost_usd,
        )
        self.turns.append(report)
        return report

    def _update(self, head: list[tuple[str, Any]], messages: list[Any]) -> tuple[int, _Previous]:
        """The arrays re-derived from the first unit this request changed: ``(that unit, what
        the previous request held from it on)``."""
        maker = self._maker
        old_list = self._messages
        window_start = max(0, len(old_list) - TAIL_WINDOW)
        window = old_list[window_start:]  # _first_changed overwrites these in place
        old_units = len(self._digest)
        old_total = (self._bytes[-1], self._tokens[-1]) if old_units else (0, 0)
        old_head = self._head
        head_data = [maker.data(block) for _, block in head]
        if not self._started or head_data != self._head_data:
            first_msg = first_unit = 0
            self._messages = list(messages)
        else:
            first_msg = self._first_changed(messages)
            first_unit = self._offset[first_msg] if first_msg < len(self._offset) else old_units
        rewritten = self._messages is not old_list

        def old_message(i: int) -> Any:
            return window[i - window_start] if not rewritten and i >= window_start else old_list[i]

        previous = _Previous(self._digest[first_unit:], self._owner[first_unit:], old_total, old_units, old_head,
                             old_message)
        self._truncate(first_unit, first_msg)
        if first_unit == 0:
            for _, block in head:
                self._push(maker.unit(block), -1)
        for index in range(first_msg, len(messages)):
            self._offset.append(len(self._digest))
            for key in maker.message_units(messages[index]):
                self._push(key, index)
        self._head, self._head_data = head, head_data
        self._started = True
        maker.forget_except(messages)
        return first_unit, previous

    def _break(self, first_unit: int, previous: _Previous, head: list[tuple[str, Any]],
               messages: list[Any]) -> tuple[int, int, dict[str, Any] | None]:
        """``(prefix bytes, prefix tokens, break)``: how far this request extends the previous
        one, and where and why it stops (``None``: it extends all of it)."""
        # The first unit where this request stops extending the previous one (the units
        # before first_unit are the previous request's own).
        new_units = len(self._digest)
        d = -1
        for j, digest in enumerate(previous.tail):
            at = first_unit + j
            if at >= new_units or self._digest[at] != digest:
                d = at
                break
        if d < 0:
            return previous.total[0], previous.total[1], None
        prefix_bytes = self._bytes[d - 1] if d else 0
        prefix_tokens = self._tokens[d - 1] if d else 0
        if d < new_units:
            old = self._old_data(d, first_unit, previous.owner, previous.head, previous.message)
            new = self._new_data(d, head, messages)
            prefix_bytes += _common_prefix(old, new)
        sections = []
        if d < previous.units:
            sections.append(previous.head[d][0] if d < len(previous.head) else MESSAGES)
        if d < new_units:
            sections.append(head[d][0] if d < len(head) else MESSAGES)
        section = next(s for s in (TOOLS, SYSTEM, MESSAGES) if s in sections)
        brk: dict[str, Any] = {"byte": prefix_bytes, "cause": CAUSES[section]}
        if section == MESSAGES:
            brk["message"] = self._owner[d] if d < new_units else previous.owner[d - first_unit]
        return prefix_bytes, prefix_tokens, brk

    def _new_data(self, d: int, head: list[tuple[str, Any]], messages: list[Any]) -> bytes:
        if d < len(head):
            return self._maker.data(head[d][1])
        owner = self._owner[d]
        prefix, blocks = self._maker.blocks(messages[owner])
        return self._maker.data(blocks[d - self._offset[owner]], prefix)

    def _old_data(self, d: int, first_unit: int, old_owner: list[int],
                  old_head: list[tuple[str, Any]], old_message: Callable[[int], Any]) -> bytes:
        if d < len(old_head):
            return self._maker.data(old_head[d][1])
        j = d - first_unit
        owner = old_owner[j]
        prefix, blocks = self._maker.blocks(old_message(owner))
        return self._maker.data(blocks[j - old_owner.index(owner)], prefix)

    def _anthropic(self) -> tuple[int, list[tuple[int, str]]]:
        hashes, cumulative = self._hash, self._tokens
        read = 0
        for point, _ in self._marks:
            for j in range(point, max(-1, point - self.lookback), -1):
                if hashes[j] in self._entries:
                    read = max(read, cumulative[j])
                    break
        writes: list[tuple[int, str]] = []
        start = read
        for point, ttl in self._marks:
            size = cumulative[point]
            if size < self.min_tokens:
                continue
            if size > start:
                writes.append((size - start, ttl))
                start = size
            self._entries[hashes[point]] = size
        return read, writes

    def _openai(self, first_unit: int) -> tuple[int, list[tuple[int, str]]]:
        hashes, cumulative = self._hash, self._tokens
        shared = 0
        for j in range(len(hashes) - 1, -1, -1):
            if hashes[j] in self._entries:
                shared = cumulative[j]
                break
        read = 0
        if shared >= self.min_tokens:
            read = self.min_tokens + (shared - self.min_tokens) // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
        # Units before first_unit are the previous request's: their entries are there already.
        for j in range(first_unit, len(hashes)):
            self._entries[hashes[j]] = cumulative[j]
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
        turns = [t.as_json() for t in self.turns]
        total = self.summary()
        if self.usd is not None:
            # Cumulative figures from the unrounded costs; the saving is against the same
            # requests with every input token at the uncached price.
            spent = plain = 0.0
            for turn, raw in zip(turns, self.turns):
                spent += raw.cost_usd or 0.0
                plain += raw.input_tokens * self.usd["input"] / PER_TOKENS
                turn["cumulative_cost_usd"] = round(spent, USD_DIGITS)
                turn["cumulative_saving_usd"] = round(plain - spent, USD_DIGITS)
            total["cost_usd"] = round(spent, USD_DIGITS)
            total["cost_usd_without_caching"] = round(plain, USD_DIGITS)
            total["saving_usd"] = round(plain - spent, USD_DIGITS)
        out = {"provider": self.provider, "counter": "cl100k_base", "turns": turns, "total": total}
        if self.usd is not None:
            out["prices"] = dict(self.usd)
        return out


def read_rates(provider: str, model: str) -> dict[str, Any]:
    """The prices a report uses, as fractions of the input price, and where each came from.

    The cached-read rate is the model's own (cache-read over input price in the model-data
    snapshot: gpt-5 0.1x, gpt-4.1 0.25x, gpt-4o 0.5x ...); the provider's default only for a
    model the snapshot does not know or has no cache price for. Write rates are Anthropic's
    documented multipliers (1.25x for 5 minutes, 2x for one hour; OpenAI charges no write).
    """
    from hermes_core.plugin import lookup, snapshot_info

    info = lookup(model, provider) if model else None
    ratio = info.cache_read_ratio if info is not None else None
    if ratio is not None and info is not None:
        source = f"model {info.model} (model data {snapshot_info()['refreshed']})"
    else:
        ratio = READ_PRICE[provider]
        source = f"{provider} default" + (f" (model {model!r} not in the model data)" if model else "")
    writes = dict(WRITE_PRICE) if provider == "anthropic" else {"5m": 0.0, "1h": 0.0}
    return {"read": ratio, "write_5m": writes["5m"], "write_1h": writes["1h"], "read_source": source}


def usd_prices(provider: str, model: str) -> dict[str, Any] | None:
    """The dollar prices a report uses (USD per million tokens) and where they come from, or
    ``None`` when the model data does not give the model's input and cached-input prices (the
    report then stays in uncached-token equivalents: no price is made up).

    Input and cached read are the model's; a cache write (Anthropic) is the model's write price
    for 5 minutes, else 1.25x input, and 2x input for one hour (Anthropic's documented
    multipliers); OpenAI charges no write."""
    from hermes_core.plugin import lookup, snapshot_info

    info = lookup(model, provider) if model else None
    if info is None or not info.input_price or info.cache_read_price is None:
        return None
    base = info.input_price
    if provider == "anthropic":
        write_5m = info.cache_write_price if info.cache_write_price is not None else base * WRITE_PRICE["5m"]
        write_1h = base * WRITE_PRICE["1h"]
    else:
        write_5m = write_1h = 0.0
    return {"currency": "USD", "per_tokens": PER_TOKENS, "model": info.model, "input": base,
            "cache_read": info.cache_read_price, "cache_write_5m": write_5m, "cache_write_1h": write_1h,
            "source": f"model data {snapshot_info()['refreshed']} ({info.provider}/{info.model})"}


def cache_report(payloads: Iterable[Mapping[str, Any]], *, provider: str = "anthropic",
                 count: Counter | None = None, model: str = "") -> dict[str, Any]:
    """The report (JSON shape of ``hermes-ctx cache-report --json``) for laid-out payloads;
    ``model`` chooses the cached-read price (``read_rates``) and the dollar prices (``usd_prices``)."""
    rates = read_rates(provider, model)
    simulator = CacheSimulator(provider, count=count, read_price=rates["read"], usd=usd_prices(provider, model))
    for payload in payloads:
        simulator.add(payload)
    report = simulator.report()
    report["rates"] = rates
    return report
