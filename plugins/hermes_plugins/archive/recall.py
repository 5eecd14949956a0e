"""Built-in plugin ``recall``: the model-facing tools over the ``archive`` plugin's archive.

Once a compaction has archived something for a session, the tool assembly adds two core tools
(never deferred behind the tool-search bridge):

* ``context_search(query, limit=5)`` -> ``{"query", "hits": [{"ref", "role", "tool", "turn",
  "snippet"}]}``, best first, the snippet taken around the match;
* ``context_expand(ref, offset=0, limit=...)`` -> ``{"ref", "role", "tool", "turn", "text",
  "offset", "next_offset", "total_chars"}``: the original text, a page at a time, each page
  within ``tool_output.max_bytes`` (``next_offset`` is ``null`` on the last page).

Both answer through ``hermes_tool_call`` (``Session.handle_tool_call``). Text leaving the archive
for the model is redacted with the compressor's patterns (``hermes_core.redaction``); the host
reads originals through ``archive_of(session)`` (``hermes_plugins.archive.plugin``). Bad input (empty query, a malformed, unknown or
foreign reference, wrong argument types) is an ``{"error": ...}`` result, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from typing import Any

from hermes_core.plugin import ToolCallContext, ToolsContext, get_logger, hookimpl, redact
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.archive.search import ArchiveError, query_words, snippet
from hermes_plugins.archive.session_archive import SessionArchive
from hermes_plugins.tools.settings import TOOL_OUTPUT

log = get_logger(__name__)

HERMES_TOOLS = ("context_search", "context_expand")
MAX_HITS = 25
SNIPPET_CHARS = 240
#: A page of ``context_expand`` never exceeds this many characters, whatever the limits.
MAX_PAGE_CHARS = 20_000
MIN_PAGE_CHARS = 500

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "context_search",
        "description": (
            "Search the earlier parts of this conversation that were summarised or shortened to "
            "save context (tool outputs, errors, file paths, decisions). Returns references "
            "with a snippet; read one in full with context_expand."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words, an identifier, a path or an error text"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_HITS, "default": 5},
            },
            "required": ["query"],
        },
    },
}
EXPAND_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "context_expand",
        "description": (
            "Read the original text of an archived message by its reference (m41.3, as shown "
            "in [ref ...] marks and context_search hits). Long texts come in pages: call again "
            "with offset=next_offset until next_offset is null."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": "the reference, e.g. m41.3"},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "description": "characters per page"},
            },
            "required": ["ref"],
        },
    },
}


def _error(tool: str, message: str) -> str:
    return json.dumps({"error": f"{tool}: {message}"}, ensure_ascii=False)


def _int_arg(arguments: Mapping[str, Any], name: str, default: int | None) -> int | None:
    value = arguments.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ArchiveError(f"{name} must be an integer, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ArchiveError(f"{name} must be an integer, got {value!r}") from None
    if number < 0:
        raise ArchiveError(f"{name} must not be negative, got {number}")
    return number


def _flag(payload: dict[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` with ``"is_error": true`` when the archived message was a result the provider
    flagged as an error (``_is_error``): its text alone may not say so (issue 29)."""
    extra = row.get("extra")
    if isinstance(extra, str) and '"_is_error"' in extra:  # a store that keeps the extra as JSON
        try:
            extra = json.loads(extra)
        except ValueError:
            extra = None
    if isinstance(extra, Mapping) and extra.get("_is_error"):
        payload["is_error"] = True
    return payload


def _with_extra(archive: SessionArchive, hit: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool result's hit with its metadata (a store's search may leave it out: the entry is
    read for results only, at most ``MAX_HITS`` of them)."""
    if "extra" in hit or hit.get("role") != "tool":
        return hit
    try:
        row = archive.get(hit["ref"])
    except ArchiveError:
        return hit
    return row if isinstance(row, Mapping) else hit


def search(archive: SessionArchive, arguments: Mapping[str, Any]) -> str:
    query = arguments.get("query", "")
    limit = _int_arg(arguments, "limit", 5) or 5
    words = query_words(query)
    hits = archive.search(query, limit=min(max(1, limit), MAX_HITS))
    out = [
        _flag({
            "ref": hit["ref"], "role": hit.get("role", ""), "tool": hit.get("tool") or None,
            "turn": hit.get("turn"), "snippet": snippet(redact(hit["text"]), words, SNIPPET_CHARS),
        }, _with_extra(archive, hit))
        for hit in hits
    ]
    payload: dict[str, Any] = {"query": query, "hits": out}
    if not out:
        payload["note"] = "nothing archived matches; try fewer or other words"
    return json.dumps(payload, ensure_ascii=False)


def _max_bytes(config: Any) -> int:
    # tool_output belongs to the spill plugin; read it even when that plugin is disabled.
    read = getattr(config, "section", None)
    limits = read(TOOL_OUTPUT) if callable(read) else None
    return int(getattr(limits, "max_bytes", 50_000) or 50_000)


def page_chars(config: Any) -> int:
    """The default page: half the tool-output byte limit, within [500, 20,000] characters."""
    max_bytes = _max_bytes(config)
    return max(MIN_PAGE_CHARS, min(MAX_PAGE_CHARS, max_bytes // 2))


def expand(archive: SessionArchive, arguments: Mapping[str, Any], config: Any) -> str:
    ref = arguments.get("ref", "")
    offset = _int_arg(arguments, "offset", 0) or 0
    default = page_chars(config)
    limit = _int_arg(arguments, "limit", None) or default
    limit = max(1, min(limit, default))
    row = archive.get(ref)
    text = redact(row["text"])
    total = len(text)
    if offset > total:
        raise ArchiveError(f"offset {offset} is past the end of {row['ref']} ({total} characters)")
    max_bytes = _max_bytes(config)
    while True:
        page = text[offset:offset + limit]
        end = offset + len(page)
        payload = _flag({
            "ref": row["ref"], "role": row.get("role", ""), "tool": row.get("tool") or None,
            "turn": row.get("turn"), "text": page, "offset": offset,
            "next_offset": end if end < total else None, "total_chars": total,
        }, row)
        encoded = json.dumps(payload, ensure_ascii=False)
        if len(encoded.encode("utf-8")) <= max_bytes or limit <= 1:
            return encoded
        limit = max(1, limit // 2)  # wide characters or heavy escaping: a smaller page


@hookimpl(trylast=True)
def hermes_tool_call(name: str, arguments: Mapping[str, Any], ctx: ToolCallContext) -> str | None:
    if name not in HERMES_TOOLS:
        return None
    session = ctx.session
    if session is None:
        return _error(name, "no session to search (call it through Session.handle_tool_call)")
    archive = archive_of(session)
    if archive is None:
        return None  # the archive plugin is blocked or replaced: these are not our tools then
    try:
        if name == "context_search":
            return search(archive, arguments)
        return expand(archive, arguments, ctx.config or session.config)
    except ArchiveError as exc:
        return _error(name, str(exc))
    except Exception as exc:  # noqa: BLE001 - a tool error is a result, never a crash of the turn
        log.warning("recall_tool_failed", tool=name, session=ctx.session_id, error=f"{type(exc).__name__}: {exc}")
        return _error(name, f"the archive could not be read ({type(exc).__name__}: {exc})")


@hookimpl(wrapper=True)
def hermes_tools_assemble(
    tools: Sequence[dict[str, Any]], ctx: ToolsContext
) -> Generator[None, list[dict[str, Any]] | None, list[dict[str, Any]] | None]:
    result = yield
    session = getattr(ctx, "session", None)
    if session is None:
        return result
    try:
        archive = archive_of(session)
        offered = archive is not None and archive.enabled and archive.has_entries()
    except Exception:  # noqa: BLE001 - no archive, no recall tools; the turn goes on
        log.warning("recall_tools_unavailable", session=ctx.session_id, exc_info=True)
        offered = False
    if not offered:
        return result
    base = list(result if result is not None else tools)
    present = {
        (d.get("function") or {}).get("name") if isinstance(d, Mapping) else None for d in base
    }
    for definition in (SEARCH_TOOL, EXPAND_TOOL):
        if definition["function"]["name"] not in present:
            base.append(definition)
    return base

