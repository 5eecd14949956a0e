"""Content across wire shapes: OpenAI Chat parts <-> Anthropic blocks, and the request report.

A part the target API does not define is converted when it converts exactly, else replaced by a
visible placeholder; each is counted in ``notes`` (``converted:``/``placeholder:``/``dropped:``
keys) that reach the ``RequestReport`` and a ``request_content_converted`` warning. Plain
functions over dicts, run once per message while it is unchanged (docs/message-model.md).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from hermes_core import bounded
from hermes_core.diagnostics import record_warning
from hermes_core.frozen import freeze
from hermes_core.messages import LEGACY_FUNCTION, content_text
from hermes_core.server_blocks import server_block_details

__all__ = [
    "has_lone_surrogate",
    "surrogates_escaped",
    "REASONING_OMITTED",
    "ANTHROPIC_CONTENT",
    "RequestReport",
    "anthropic_part",
    "merge_notes",
    "note",
    "openai_part",
    "openai_text_of_blocks",
    "original_blocks",
    "placeholder",
    "readable_of_blocks",
    "report_of",
    "user_image_part",
]

#: The ``_``-key under which an Anthropic assistant message keeps its original content blocks
#: (thinking with signatures, interleaved tool_use, server-tool blocks, citations): an Anthropic
#: request sends exactly these while the message's readable fields still match them.
ANTHROPIC_CONTENT = "_anthropic_content"
#: ``_``-keys the canonical (wire) message keeps for the wire conversion to read; every other
#: ``_``-key is removed when the payload is built, and these are removed by the conversion.
WIRE_METADATA = frozenset({ANTHROPIC_CONTENT, "_is_error", "_cache_control", "_reasoning_omitted",
                           LEGACY_FUNCTION})
#: Set by the payload on an assistant message whose only content was Responses reasoning
#: items (the characters of their summaries): OpenAI Chat shows a counted placeholder there.
REASONING_OMITTED = "_reasoning_omitted"
#: The host's own ``cache_control`` marker of an Anthropic ``tool_result`` block, kept on the
#: ``tool`` message it became (a top-level ``cache_control`` is the layout's form, removed).
TOOL_RESULT_MARKER = "_cache_control"

#: Image media types the Messages API takes in a base64 source.
ANTHROPIC_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: Block types the Messages API defines in message content (user and assistant side).
ANTHROPIC_BLOCKS = frozenset({
    "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
    "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
    "mcp_tool_result", "container_upload", "compaction",
    # beta: system text mid-conversation, the advisor tool's result, a model fallback's marker
    # (position load-bearing for thinking verification), a tool found by a custom tool search
    "mid_conv_system", "advisor_tool_result", "fallback", "tool_reference",
})
#: Blocks that take no ``cache_control`` (a signed thinking block goes back byte-identical; a
#: ``fallback`` block documents no such field) - nor does a block of a type we do not know.
UNMARKABLE_BLOCKS = frozenset({"thinking", "redacted_thinking", "fallback"})


def takes_marker(block: Any) -> bool:
    """Whether a cache layout may put its ``cache_control`` marker on ``block``."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    return kind in ANTHROPIC_BLOCKS and kind not in UNMARKABLE_BLOCKS


#: Block types a ``tool_result``'s content takes (others there become placeholders).
TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_reference"})

#: Block types only an Anthropic message holds: a message with one is read as Anthropic-shaped
#: (an assistant reply keeps them under ``_anthropic_content``), as is a text with citations.
ANTHROPIC_ONLY_BLOCKS = ANTHROPIC_BLOCKS - {"text", "image", "document", "search_result"}


# --- notes and the report ---------------------------------------------------------------------


def note(notes: dict[str, int] | None, key: str, count: int = 1) -> None:
    """Count ``key`` in ``notes`` (nothing when ``notes`` is ``None``)."""
    if notes is not None and count:
        notes[key] = notes.get(key, 0) + count


def merge_notes(into: dict[str, int], notes: Mapping[str, int] | None) -> None:
    if notes:
        for key, count in notes.items():
            into[key] = into.get(key, 0) + count


def _split(notes: Mapping[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix):]: v for k, v in sorted(notes.items()) if k.startswith(prefix)}


@attrs.frozen(kw_only=True)
class RequestReport:
    """What building one request changed in the history's content, by kind and count.

    ``converted``: parts carried over exactly in the target's own shape (an image data URL as a
    base64 source, ``is_error`` as a text marker for OpenAI). ``placeholders``: parts the target
    cannot take, replaced by a visible ``[... omitted: ...]`` text. ``dropped``: what went
    without a placeholder (citations of a text whose text is kept, cache markers the target has
    no use for, the layout's breakpoints that gave way). ``user_breakpoints``: ``cache_control``
    markers the history itself carries (kept, and counted against Anthropic's limit of four);
    ``layout_breakpoints``: those the cache layout placed.
    """

    target: str
    converted: Mapping[str, int] = attrs.field(factory=dict, converter=freeze)
    placeholders: Mapping[str, int] = attrs.field(factory=dict, converter=freeze)
    dropped: Mapping[str, int] = attrs.field(factory=dict, converter=freeze)
    user_breakpoints: int = 0
    layout_breakpoints: int = 0

    @property
    def lossless(self) -> bool:
        """Nothing was replaced or dropped (conversions keep meaning and are not losses)."""
        return not self.placeholders and not self.dropped

    def describe(self) -> str:
        """One line for a warning or a log: every count, by kind."""
        parts = []
        for label, counts in (("converted", self.converted), ("replaced by placeholders",
                                                               self.placeholders),
                              ("dropped", self.dropped)):
            if counts:
                parts.append(f"{label}: " + ", ".join(f"{k} x{v}" for k, v in counts.items()))
        if self.user_breakpoints:
            parts.append(f"cache breakpoints: {self.user_breakpoints} from the history, "
                         f"{self.layout_breakpoints} from the layout")
        return f"request for {self.target}: " + ("; ".join(parts) if parts else "nothing changed")


def report_of(target: str, notes: Mapping[str, int], *, user_breakpoints: int = 0,
              layout_breakpoints: int = 0) -> RequestReport:
    return RequestReport(
        target=target,
        converted=_split(notes, "converted:"),
        placeholders=_split(notes, "placeholder:"),
        dropped=_split(notes, "dropped:"),
        user_breakpoints=user_breakpoints,
        layout_breakpoints=layout_breakpoints,
    )


# --- lone surrogates --------------------------------------------------------------------------


#: A UTF-16 surrogate on its own: JSON's ``"\\ud800"`` or a byte a host decoded with
#: ``errors="surrogateescape"`` (a file name, a command's output). No UTF-8 encoder takes one and
#: the Messages API rejects the request ("no low surrogate in string") on every later turn.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _not_unicode(text: str) -> bool:
    if text.isascii():
        return False
    try:  # the encoder finds a lone surrogate several times faster than a regex search
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def has_lone_surrogate(message: Mapping[str, Any]) -> bool:
    """Whether a string of ``message`` (outside our ``_`` metadata) holds a lone surrogate.
    A message of plain strings costs one pass over its items; parts and calls are walked
    iteratively (a model's arguments may nest deep)."""
    stack: list[Any] = []
    for key, value in message.items():
        if type(value) is str:
            if _not_unicode(value):
                return True
        elif isinstance(value, (Mapping, list)) and not (isinstance(key, str) and key[:1] == "_"):
            stack.append(value)
    while stack:
        item = stack.pop()
        if type(item) is str:
            if _not_unicode(item):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
            stack.extend(k for k in item if type(k) is str)
        elif isinstance(item, list):
            stack.extend(item)
    return False


def surrogates_escaped(message: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """A copy of ``message`` (its containers rebuilt, iteratively; ``_`` keys shared) with each
    lone surrogate written as ``\\udNNN`` text, as the transcript readers write them; and how
    many. In a call's arguments (JSON text) the backslash is escaped too, so that the parsed
    arguments hold the same ``\\udNNN`` text rather than the surrogate again."""
    count = 0

    def fix(text: str, json_text: bool = False) -> str:
        nonlocal count
        found = len(_LONE_SURROGATE.findall(text))
        if not found:
            return text
        count += found
        slash = "\\\\" if json_text else "\\"
        return _LONE_SURROGATE.sub(lambda m: f"{slash}u{ord(m.group()):04x}", text)

    out = dict(message)
    stack: list[tuple[Any, Any]] = [(out, k) for k in out if not (isinstance(k, str) and k[:1] == "_")]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if type(item) is str:
            container[key] = fix(item, json_text=key == "arguments")
        elif isinstance(item, Mapping):
            copy = {fix(k) if type(k) is str else k: v for k, v in item.items()}
            container[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, list):
            copied = list(item)
            container[key] = copied
            stack.extend((copied, i) for i in range(len(copied)))
    return out, count


# --- placeholders -------------------------------------------------------------------------------


def _size(nbytes: int) -> str:
    if nbytes >= 1_000_000:
        return f"{nbytes / 1_000_000:.1f} MB"
    if nbytes >= 1000:
        return f"{round(nbytes / 1000)} kB"
    return f"{nbytes} B"


def _b64_bytes(data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def placeholder(kind: str, *details: str) -> str:
    """``[<kind> omitted: <details>]``: the visible stand-in for a part the target cannot take."""
    shown = ", ".join(d for d in details if d)
    return f"[{kind} omitted: {shown}]" if shown else f"[{kind} omitted]"


def _placeholder_part(notes: dict[str, int] | None, kind: str, *details: str) -> dict[str, Any]:
    note(notes, f"placeholder:{kind}")
    return {"type": "text", "text": placeholder(kind, *details)}


def parse_data_url(url: str) -> tuple[str, str] | None:
    """``(media_type, base64 data)`` of a ``data:<type>;base64,<data>`` URL, else ``None``."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    media = head[5:-7].split(";")[0].strip().lower()
    return media, data


def _short(media_type: str) -> str:
    return media_type.rsplit("/", 1)[-1] if media_type else "unknown type"


def malformed(part: Mapping[str, Any]) -> bool:
    """Whether a media part lacks what its own API requires of it (an ``image_url`` without a
    URL, an ``image`` without a source ...): sent nowhere as it is, replaced by a placeholder."""
    kind = part.get("type")
    if kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, Mapping) else ref
        return not isinstance(url, str) or not url
    if kind == "input_audio":
        audio = part.get("input_audio")
        return not isinstance(audio, Mapping) or not isinstance(audio.get("data"), str)
    if kind == "file":
        file = part.get("file")
        return not isinstance(file, Mapping) or not (file.get("file_data") or file.get("file_id"))
    if kind in ("image", "document"):
        source = part.get("source")
        return not isinstance(source, Mapping) or not isinstance(source.get("type"), str)
    return False


# --- OpenAI Chat parts -> Anthropic blocks ---------------------------------------------------


def _image_block(url: str, notes: dict[str, int] | None) -> dict[str, Any]:
    parsed = parse_data_url(url)
    if parsed is not None:
        media, data = parsed
        if media in ANTHROPIC_IMAGE_TYPES:
            note(notes, "converted:image data URL -> base64 source")
            return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        return _placeholder_part(notes, "image", _short(media), _size(_b64_bytes(data)))
    if url.startswith(("http://", "https://")):
        note(notes, "converted:image URL -> url source")
        return {"type": "image", "source": {"type": "url", "url": url}}
    return _placeholder_part(notes, "image", "unsupported reference", url[:80])


_DOC_SUFFIX = {".pdf": "application/pdf", ".txt": "text/plain", ".md": "text/plain"}


def _file_block(file: Mapping[str, Any], notes: dict[str, int] | None) -> dict[str, Any]:
    name = str(file.get("filename") or "")
    data = file.get("file_data")
    if isinstance(data, str) and data:
        parsed = parse_data_url(data)
        media, raw = parsed if parsed is not None else (
            next((t for s, t in _DOC_SUFFIX.items() if name.lower().endswith(s)), ""), data)
        if media == "application/pdf":
            note(notes, "converted:PDF file part -> document block")
            block: dict[str, Any] = {"type": "document", "source": {
                "type": "base64", "media_type": "application/pdf", "data": raw}}
            if name:
                block["title"] = name
            return block
        if media == "text/plain":
            try:
                text = base64.b64decode(raw, validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                text = None
            if text:
                note(notes, "converted:text file part -> document block")
                block = {"type": "document", "source": {
                    "type": "text", "media_type": "text/plain", "data": text}}
                if name:
                    block["title"] = name
                return block
        return _placeholder_part(notes, "file", name or _short(media), _size(_b64_bytes(raw)))
    ident = file.get("file_id")
    return _placeholder_part(notes, "file", name, f"OpenAI file id {ident}" if ident else "")


def anthropic_part(part: Any, role: str, notes: dict[str, int] | None) -> dict[str, Any] | None:
    """One content part of an OpenAI-shaped message as an Anthropic block (``None``: nothing
    to send, an empty text). Anthropic blocks pass through as they are."""
    if isinstance(part, str):
        return {"type": "text", "text": part} if part else None
    if not isinstance(part, Mapping):
        return _placeholder_part(notes, type(part).__name__)
    kind = part.get("type")
    kind = kind if isinstance(kind, str) else None  # a malformed part: no type to go by
    if kind == "text" or kind in ("input_text", "output_text"):
        text = part.get("text")
        # The Messages API rejects a text block of whitespace alone ("text content blocks must
        # contain non-whitespace text"), and it carries nothing.
        if not isinstance(text, str) or not text.strip():
            note(notes, "dropped:empty text part")
            return None
        if kind != "text":
            note(notes, f"converted:{kind} part -> text block")
            return {"type": "text", "text": text}
        return dict(part) if type(part) is not dict else part
    if kind == "refusal":
        note(notes, "converted:refusal -> text block")
        return {"type": "text", "text": str(part.get("refusal") or "")} if part.get("refusal") else None
    if kind in ("image_url", "input_image"):
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, Mapping) else ref
        if not isinstance(url, str):
            return _placeholder_part(notes, "image", "no url")
        if role == "assistant":
            return _placeholder_part(notes, "image", "in an assistant message")
        if isinstance(ref, Mapping) and ref.get("detail") not in (None, "auto"):
            note(notes, "converted:image detail setting (Anthropic sizes images itself)")
        return _image_block(url, notes)
    if kind == "input_audio":
        audio = part.get("input_audio")
        audio = audio if isinstance(audio, Mapping) else {}
        data = audio.get("data")
        return _placeholder_part(notes, "audio", str(audio.get("format") or ""),
                                 _size(_b64_bytes(data)) if isinstance(data, str) else "")
    if kind in ("file", "input_file"):
        file = part.get("file") if kind == "file" else part
        return _file_block(file if isinstance(file, Mapping) else {}, notes)
    if kind in ANTHROPIC_BLOCKS and malformed(part):
        return _placeholder_part(notes, kind, "malformed part")
    if kind is not None:  # Anthropic's, or a type no API we know defines (a newer one): as it came
        return part if type(part) is dict else dict(part)
    return _placeholder_part(notes, "untyped part")


# --- Anthropic blocks -> OpenAI Chat parts ---------------------------------------------------


def _image_part(block: Mapping[str, Any], role: str, notes: dict[str, int] | None) -> dict[str, Any]:
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    stype = source.get("type")
    media = str(source.get("media_type") or "")
    raw = source.get("data")
    data = raw if isinstance(raw, str) else ""
    where = {"tool": "in a tool result", "assistant": "in an assistant message"}.get(role, "")
    if where:  # OpenAI Chat takes images in user messages only
        if stype == "url":
            return _placeholder_part(notes, "image", where, str(source.get("url") or ""))
        if stype != "base64":  # a file id: no size to give
            return _placeholder_part(notes, "image", f"{stype} source", str(source.get("file_id") or ""), where)
        return _placeholder_part(notes, "image", _short(media), _size(_b64_bytes(data)), where)
    if stype == "base64":
        note(notes, "converted:image base64 source -> data URL")
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
    if stype == "url":
        note(notes, "converted:image url source -> URL")
        return {"type": "image_url", "image_url": {"url": str(source.get("url") or "")}}
    return _placeholder_part(notes, "image", f"{stype} source", str(source.get("file_id") or ""))


def _document_part(block: Mapping[str, Any], role: str, notes: dict[str, int] | None) -> dict[str, Any]:
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    stype = source.get("type")
    title = str(block.get("title") or "")
    # ``context``: what the host says about the document, which the model reads beside it
    context = block.get("context") if isinstance(block.get("context"), str) and block.get("context") else ""
    head = (f"[document: {title}]\n" if title else "[document]\n") + (f"[context: {context}]\n" if context else "")
    if stype == "text" and isinstance(source.get("data"), str):
        note(notes, "converted:text document -> text part")
        return {"type": "text", "text": head + source["data"]}
    if stype == "content" and isinstance(source.get("content"), list):
        note(notes, "converted:content document -> text part")
        texts = [str(b.get("text") or "") for b in source["content"]
                 if isinstance(b, Mapping) and b.get("type") == "text"]
        return {"type": "text", "text": head + "\n".join(texts)}
    media = str(source.get("media_type") or "")
    raw = source.get("data")
    data = raw if isinstance(raw, str) else ""
    if context:  # a file part or a placeholder has no room for it
        note(notes, "dropped:context of a document")
    if stype == "base64" and media == "application/pdf" and role == "user":
        note(notes, "converted:PDF document -> file part")
        return {"type": "file", "file": {"filename": title or "document.pdf",
                                         "file_data": f"data:{media};base64,{data}"}}
    if stype == "url":
        return _placeholder_part(notes, "document", title, str(source.get("url") or ""))
    if stype != "base64":  # a file id (Files API): nothing to measure, said as it is
        return _placeholder_part(notes, "document", title, f"{stype} source", str(source.get("file_id") or ""))
    return _placeholder_part(notes, "document", title, _short(media), _size(_b64_bytes(data)))


def _search_result_part(block: Mapping[str, Any], notes: dict[str, int] | None) -> dict[str, Any]:
    note(notes, "converted:search_result -> text part")
    texts = [str(b.get("text") or "") for b in block.get("content") or ()
             if isinstance(b, Mapping) and b.get("type") == "text"]
    head = f"[search result: {block.get('title') or ''} ({block.get('source') or ''})]"
    return {"type": "text", "text": "\n".join([head, *texts])}


def user_image_part(part: Any) -> dict[str, Any] | None:
    """An image part or block as the ``image_url`` part a Chat *user* message takes, or
    ``None`` when it is no image or cannot be one (a ``file`` source: no URL to give)."""
    if not isinstance(part, Mapping) or malformed(part):
        return None
    kind = part.get("type")
    if kind == "image_url":
        return part if type(part) is dict else dict(part)
    if kind != "image":
        return None
    source = part.get("source")
    if not isinstance(source, Mapping) or source.get("type") not in ("base64", "url"):
        return None
    return _image_part(part, "user", None)


def _text_part(part: Mapping[str, Any], kind: str, notes: dict[str, int] | None,
               keep_markers: bool) -> dict[str, Any] | None:
    """A text part of any API as a Chat text part; what it carried beside its text is counted."""
    text = part.get("text")
    if not isinstance(text, str) or not text:
        note(notes, "dropped:empty text part")
        return None
    extra = [k for k in part if k not in ("type", "text")]
    if not extra and kind == "text":
        return part if type(part) is dict else dict(part)
    out: dict[str, Any] = {"type": "text", "text": text}
    if kind != "text":
        note(notes, f"converted:{kind} part -> text part")
    for key in extra:
        if key == "cache_control" and keep_markers:
            out[key] = part[key]
        elif key == "citations":
            if part[key]:
                note(notes, "dropped:citations (text kept)")
        else:
            note(notes, f"dropped:{key} of a text part")
    return out


def _chat_media_elsewhere(part: Mapping[str, Any], kind: str, role: str,
                          notes: dict[str, int] | None) -> dict[str, Any]:
    """A Chat image, audio or file part in a message other than a user's (Chat takes them only
    there): a placeholder that says what it was."""
    if kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, Mapping) else ref
        parsed = parse_data_url(url) if isinstance(url, str) else None
        if parsed is not None:
            return _placeholder_part(notes, "image", _short(parsed[0]),
                                     _size(_b64_bytes(parsed[1])), f"in a {role} message")
        return _placeholder_part(notes, "image", f"in a {role} message", str(url or "")[:200])
    return _placeholder_part(notes, "audio" if kind == "input_audio" else "file",
                             f"in a {role} message")


def openai_part(part: Any, role: str, notes: dict[str, int] | None, *,
                keep_markers: bool = False) -> dict[str, Any] | None:
    """One content part (an Anthropic block or an OpenAI part) as an OpenAI Chat part valid for
    ``role`` (``user``, ``assistant``, ``tool``, ``system``); ``None``: nothing to send.

    ``keep_markers``: ``cache_control`` stays on text parts (OpenRouter forwards it to
    Anthropic); otherwise it is removed and counted, as it is from any other block.
    """
    out = _openai_part(part, role, notes, keep_markers)
    if (isinstance(part, Mapping) and part.get("cache_control") is not None and out is not None
            and "cache_control" not in out and part.get("type") not in ("text", "input_text", "output_text")):
        note(notes, f"dropped:cache_control of a {part.get('type')} block")
    return out


def _openai_part(part: Any, role: str, notes: dict[str, int] | None,
                 keep_markers: bool) -> dict[str, Any] | None:
    if isinstance(part, str):
        return {"type": "text", "text": part} if part else None
    if not isinstance(part, Mapping):
        return _placeholder_part(notes, type(part).__name__)
    kind = part.get("type")
    kind = kind if isinstance(kind, str) else None  # a malformed part: no type to go by
    if kind in ("text", "input_text", "output_text"):
        return _text_part(part, kind, notes, keep_markers)
    if kind == "refusal":
        if role == "assistant":
            return part if type(part) is dict else dict(part)
        note(notes, "converted:refusal -> text part")
        return {"type": "text", "text": str(part.get("refusal") or "")}
    if kind in ("image", "document", "image_url", "input_audio", "file") and malformed(part):
        return _placeholder_part(notes, {"image_url": "image", "input_audio": "audio"}.get(kind, kind),
                                 "malformed part")
    if kind == "image":
        return _image_part(part, role, notes)
    if kind == "document":
        return _document_part(part, role, notes)
    if kind == "search_result":
        return _search_result_part(part, notes)
    if kind in ("image_url", "input_audio", "file"):
        if role == "user":
            return part if type(part) is dict else dict(part)
        return _chat_media_elsewhere(part, kind, role, notes)
    if kind in ("thinking", "redacted_thinking"):
        return _placeholder_part(notes, kind.replace("_", " "), *_thinking_details(part))
    if kind == "compaction":  # the API's own summary of earlier turns: its text is what it says
        return _compaction_part(part, notes)
    if kind is not None:  # server tools, MCP, uploads, beta and newer blocks: what it was
        return _placeholder_part(notes, kind, *server_block_details(part))
    return _placeholder_part(notes, "untyped part")


def _compaction_part(block: Mapping[str, Any], notes: dict[str, int] | None) -> dict[str, Any] | None:
    """A ``compaction`` block (the Messages API's summary of the turns before it) as text; one
    whose compaction failed (``content: null``, a no-op for the API) carries nothing."""
    content = block.get("content")
    if not isinstance(content, str) or not content:
        note(notes, "dropped:failed compaction block")
        return None
    note(notes, "converted:compaction -> text part")
    return {"type": "text", "text": f"[earlier turns, condensed by the provider]\n{content}"}


def _thinking_details(block: Mapping[str, Any]) -> tuple[str, ...]:
    if block.get("type") == "redacted_thinking":
        return ("encrypted by the provider",)
    text = block.get("thinking")
    return (f"{len(text)} characters" if isinstance(text, str) else "",)


# --- Anthropic originals kept on assistant messages ------------------------------------------


#: The arguments text of a tool input that cannot be written as JSON (a model nested it deeper
#: than ``bounded.MAX_DEPTH``, or it is circular): a visible note in its place, never a crash.
UNSERIALISABLE_INPUT = bounded.too_deep_note("tool-call arguments")


def arguments_text(value: Any) -> str:
    """A tool input as the arguments text of a Chat tool call (``UNSERIALISABLE_INPUT`` for one
    nested too deep: its depth is measured first, without recursion)."""
    if isinstance(value, str):
        return value
    if bounded.value_depth(value) > bounded.MAX_DEPTH:
        return UNSERIALISABLE_INPUT
    try:
        return json.dumps(value if value is not None else {}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
    except (ValueError, TypeError):  # circular, or not JSON at all
        return UNSERIALISABLE_INPUT


def _glued(previous: Any, block: Mapping[str, Any]) -> bool:
    """Whether the text block ``block`` continues the text block right before it: with
    citations the API splits one sentence into cited and uncited spans, one block each, to be
    read as one text ("According to the docs, " + "handlers live in b.py" + ".")."""
    return (isinstance(previous, Mapping) and previous.get("type") == "text"
            and bool(previous.get("citations") or block.get("citations")))


def join_texts(pieces: list[tuple[str, bool]]) -> str:
    """Texts joined by a blank line, except a piece marked glued, which continues the one
    before it directly (see ``_glued``)."""
    out: list[str] = []
    for text, glued in pieces:
        if glued and out:
            out[-1] += text
        else:
            out.append(text)
    return "\n\n".join(out)


def readable_of_blocks(blocks: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    """The readable fields of an assistant message derived from its Anthropic blocks: its
    text (text blocks joined by a blank line, the spans of a cited sentence directly) and its
    ``tool_calls``."""
    texts: list[tuple[str, bool]] = []
    calls: list[dict[str, Any]] = []
    previous: Any = None
    for block in blocks:
        if not isinstance(block, Mapping):
            previous = block
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append((str(block.get("text") or ""), _glued(previous, block)))
        elif kind == "tool_use":
            arguments = arguments_text(block.get("input"))
            if arguments is UNSERIALISABLE_INPUT:  # a note stands for it: the host hears of it
                record_warning(
                    "tool_arguments_too_deep",
                    f"the input of tool call {block.get('id')!r} nested more than {bounded.MAX_DEPTH} "
                    "levels deep was replaced by a note",
                )
            calls.append({
                "id": str(block.get("id") or ""),
                "type": "function",
                "function": {"name": str(block.get("name") or ""), "arguments": arguments},
            })
        previous = block
    return join_texts(texts), calls


def openai_text_of_blocks(blocks: list[Any], notes: dict[str, int] | None, *,
                          thinking: bool = True) -> str:
    """A kept Anthropic reply as the text of a Chat assistant message: its text in order (the
    spans of a cited sentence as one), thinking, server-tool, MCP and upload blocks as visible
    placeholders where they stood (counted); its ``tool_use`` blocks are its ``tool_calls``.
    ``thinking=False``: thinking left out (a caller that counts it its own way)."""
    pieces: list[tuple[str, bool]] = []
    previous: Any = None
    skip = ("tool_use",) if thinking else ("tool_use", "thinking", "redacted_thinking")
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind not in skip:
            part = openai_part(block, "assistant", notes)
            if part is not None:
                text = str(part.get("text") or part.get("refusal") or "")
                glued = kind == "text" and _glued(previous, block)
                if text or glued:
                    pieces.append((text, glued))
        previous = block
    return join_texts(pieces)


def _same_arguments(a: Any, b: Any) -> bool:
    if a == b:
        return True
    try:
        return bool(bounded.loads(a) == bounded.loads(b)) if isinstance(a, str) and isinstance(b, str) else False
    except ValueError:  # invalid, or nested too deep to parse
        return False


def _blank_text(block: Any) -> bool:
    return (isinstance(block, Mapping) and block.get("type") == "text"
            and not str(block.get("text") or "").strip())


def sendable_blocks(blocks: list[Any], notes: dict[str, int] | None) -> list[Any]:
    """``blocks`` with the input of a ``tool_use`` that cannot be written as JSON replaced by
    a note (counted) and text blocks of whitespace alone left out (counted: the model itself
    sometimes answers ``"\n\n"`` beside a call, and the Messages API rejects such a block in
    the next request); every other block, thinking included, the same object."""
    out = blocks
    for i, block in enumerate(blocks):
        if (isinstance(block, Mapping) and block.get("type") == "tool_use"
                and not isinstance(block.get("input"), str)
                and arguments_text(block.get("input")) == UNSERIALISABLE_INPUT):
            if out is blocks:
                out = list(blocks)
            out[i] = {**block, "input": json.loads(UNSERIALISABLE_INPUT)}
            note(notes, "placeholder:tool input nested too deep")
    if any(_blank_text(b) for b in out):
        note(notes, "dropped:whitespace-only text block", sum(1 for b in out if _blank_text(b)))
        out = [b for b in out if not _blank_text(b)]
    return out


def original_blocks(message: Mapping[str, Any]) -> list[Any] | None:
    """The Anthropic blocks an assistant message keeps under ``_anthropic_content`` when its
    readable fields (text, tool calls) still say what they say (a pass that rewrote the text
    or the calls made them stale: then ``None`` and the message is converted from its
    readable fields)."""
    blocks = message.get(ANTHROPIC_CONTENT)
    if type(blocks) is not list or message.get("role") != "assistant":
        return None
    if not all(isinstance(b, Mapping) and isinstance(b.get("type"), str) for b in blocks):
        return None  # not what the API returns: the message goes by its readable fields
    text, calls = readable_of_blocks(blocks)
    have_text = content_text(message.get("content"), "\n\n").strip()
    if have_text != text.strip() and have_text != "\n\n".join(
            str(b.get("text") or "") for b in blocks if b.get("type") == "text").strip():
        return None  # (the second form: how a cited reply read before its spans were glued)
    have = message.get("tool_calls") or []
    if not isinstance(have, list) or len(have) != len(calls):
        return None
    for call, want in zip(have, calls):
        if not isinstance(call, Mapping):
            return None
        fn = call.get("function")
        fn = fn if isinstance(fn, Mapping) else {}
        if (str(call.get("id") or "") != want["id"] or fn.get("name") != want["function"]["name"]
                or not _same_arguments(fn.get("arguments"), want["function"]["arguments"])):
            return None
    return blocks
