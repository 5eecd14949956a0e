"""SKILL.md frontmatter: a fast parser for the plain YAML skills use, and YAML for the rest.

Most frontmatter is a handful of ``key: value`` lines, ``[a, b]`` lists and perhaps a small
nested ``metadata:`` mapping. Parsing that with libyaml costs ~10x a line parser, and the
pure-Python loader ~90x, which dominates a cold scan of thousands of skills. So
``parse_fast`` handles exactly that subset and answers ``None`` for anything else (block
scalars, anchors, tags, flow mappings, escapes, tabs, timestamps ...); only those files go to
YAML (``CSafeLoader`` when libyaml is present). The subset is chosen so that whatever
``parse_fast`` accepts, YAML's safe loader reads identically (scalars are resolved with PyYAML's
own implicit resolvers); a property test holds both to that.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.resolver import Resolver

from hermes_core.plugin import load_yaml

_END_FENCE = re.compile(r"\n---[ \t\r]*(?:\n|\Z)")
#: Frontmatter longer than this is not parsed (only ``salvage`` reads its name and description).
MAX_YAML_CHARS = 128 * 1024
# Characters the fast path refuses: what PyYAML rejects as non-printable, plus tab, lone CR,
# the Unicode line breaks (NEL, LS, PS) YAML 1.1 honours, and a stray BOM.
_UNSAFE = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_SIMPLE_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*\Z")
_RESOLVERS = Resolver.yaml_implicit_resolvers
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}
# A plain scalar may not start with these (flow/anchor/tag/block/reserved indicators).
_BAD_PLAIN_START = frozenset(",]{}#&*!|>%@`")
_BAD_FLOW_ITEM_START = frozenset("-?:,[]{}#&*!|>%@`'\"<=")
_FLOW_STOPS = frozenset("?:[]{}")
_FLOW_STOP_CHARS = re.compile(r"[?:\[\]{}]")
# First characters that need _inline's care: quotes, flow lists, indicators, and the
# merge key / value indicator ("<<", "=").
_SPECIAL_START = _BAD_PLAIN_START | frozenset("-?:'\"[<=")
# Keys ``_good_key`` accepted: a memo of a pure predicate (same answer for every host), bounded.
_GOOD_KEYS: set[str] = set()
_NUMERIC_START = frozenset("0123456789+-.")
_FLOW_SPECIAL = re.compile(r"[?:\[\]{}#'\"]")
# Every plain scalar YAML 1.1 resolves that does not start like a number: booleans and nulls
# (a test checks this table against PyYAML). "<<", "=" and "!&*" start in _SPECIAL_START.
_WORDS: dict[str, Any] = {
    **{w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{w: None for w in ("~", "null", "Null", "NULL")},
}


class _Reject(Exception):
    """The text is outside the fast path's subset; YAML must decide."""


def split_frontmatter(text: str) -> str | None:
    """The YAML between the opening ``---`` line and the next ``---`` line, or ``None``.

    A leading BOM is ignored. The closing fence may end the file.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return None
    eol = text.find("\n")
    if eol < 0 or text[3:eol].strip():
        return None
    end = _END_FENCE.search(text, eol)
    if end is None:
        return None
    return text[eol + 1 : end.start() + 1]


def parse_yaml(source: str) -> Any:
    """YAML's reading of ``source`` (raises ``yaml.YAMLError``).

    The core's bounded safe loader: a "billion laughs" frontmatter, a self-referencing anchor
    or a document nested hundreds deep raises ``YAMLLimitError`` instead of eating memory.
    """
    return load_yaml(source)


def parse_fast(source: str, *, printable: bool = False) -> dict[str, Any] | None:
    """Parse the plain subset of YAML; ``None`` when ``source`` needs a real YAML parser.

    ``printable=True`` says the caller already checked that ``source`` holds only printable
    ASCII and newlines (discovery does it on the bytes, where it is cheaper).
    """
    checked = source if printable else _printable(source)
    if checked is None:
        return None
    source = checked
    # The common shape - every line a top-level "key: inline value" - is parsed in this one
    # loop; anything else (indentation, empty values) goes to the general block parser.
    out: dict[str, Any] = {}
    good_keys, special, flow_special = _GOOD_KEYS, _SPECIAL_START, _FLOW_SPECIAL.search
    try:
        for line in source.split("\n"):
            key, sep, value = line.partition(": ")
            if key not in good_keys:
                kind = _line_kind(line, key, sep)
                if kind is _LINE_SKIP:
                    continue
                if kind is not _LINE_KEY:
                    return _parse_blocks(source) if kind is _LINE_BLOCKS else None
            value = value.strip(" ")
            first = value[0]  # IndexError for "key:" with nothing after it: see below
            if first in special:
                if first == "[" and value[-1] == "]" and not flow_special(value, 1, len(value) - 1):
                    out[key] = _simple_flow(value)
                else:
                    out[key] = _inline(value)
                continue
            out[key] = _plain(value, first)
    except IndexError:
        return _parse_blocks(source)  # an empty value: null, or a nested block below
    except _Reject:
        return None
    return out


def _printable(source: str) -> str | None:
    """``source`` with CRLF made LF, or ``None`` when it holds a character the fast path
    does not take."""
    if "\r" in source:
        source = source.replace("\r\n", "\n")
    if source.isascii():
        # For ASCII, "printable" is exactly 0x20-0x7e: one C pass instead of a regex scan.
        return source if source.replace("\n", " ").isprintable() else None
    return None if _UNSAFE.search(source) else source


#: What ``_line_kind`` says of a line whose key is not a known good one.
_LINE_SKIP, _LINE_KEY, _LINE_BLOCKS, _LINE_REJECT = "skip", "key", "blocks", "reject"


def _line_kind(line: str, key: str, sep: str) -> str:
    """A blank or comment line (``_LINE_SKIP``), a good ``key: value`` (``_LINE_KEY``), the start of
    what the block parser reads (``_LINE_BLOCKS``), or what no parser here takes (``_LINE_REJECT``)."""
    if not line or line[0] == "#":
        return _LINE_SKIP
    if line[0] == " ":
        if not line.strip(" ") or line.lstrip(" ")[0] == "#":
            return _LINE_SKIP
        return _LINE_BLOCKS
    if not sep:
        return _LINE_BLOCKS if line.rstrip(" ")[-1:] == ":" else _LINE_REJECT
    return _LINE_KEY if _good_key(key) else _LINE_REJECT


def _plain(value: str, first: str) -> Any:
    """A plain scalar, its trailing comment cut, resolved (numbers, true/false/null words);
    raises ``_Reject`` for a value the fast path cannot read (a ``: `` inside)."""
    if "#" in value and " #" in value:
        value = value[: value.find(" #")].rstrip(" ")
    if ":" in value and (": " in value or value[-1] == ":"):
        raise _Reject
    if first in _RESOLVERS:
        if first in _NUMERIC_START:
            return _resolve_plain(value)
        if len(value) <= 5:
            return _WORDS.get(value, value)
    return value


def _simple_flow(text: str) -> list[Any]:
    """``[a, b, 1]`` with no quotes, nesting or comment (checked by the caller)."""
    inner = text[1:-1]
    items: list[Any] = []
    if not inner.strip(" "):
        return items
    for chunk in inner.split(","):
        item = chunk.strip(" ")
        if not item or item[0] in _BAD_FLOW_ITEM_START:
            raise _Reject
        first = item[0]
        if first in _RESOLVERS:
            if first in _NUMERIC_START:
                item = _resolve_plain(item)
            elif len(item) <= 5:
                item = _WORDS.get(item, item)
        items.append(item)
    return items


def _good_key(key: str) -> bool:
    if len(key) > 128 or not _KEY.match(key) or _resolve_plain(key).__class__ is not str:
        return False
    if len(_GOOD_KEYS) < 4096:  # keys repeat across files; the cap bounds odd trees
        _GOOD_KEYS.add(key)
    return True


def _parse_blocks(source: str) -> dict[str, Any] | None:
    lines: list[tuple[int, str]] = []
    for raw in source.split("\n"):
        content = raw.lstrip(" ")
        if not content or content[0] == "#":
            continue
        lines.append((len(raw) - len(content), content.rstrip(" ")))
    if not lines:
        return {}
    try:
        mapping, end = _mapping(lines, 0, lines[0][0])
    except _Reject:
        return None
    return mapping if end == len(lines) else None


def _mapping(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    count = len(lines)
    while i < count:
        ind, content = lines[i]
        if ind < indent:
            break
        if ind > indent:
            raise _Reject
        colon = content.find(":")
        if colon <= 0:
            raise _Reject
        key = content[:colon]
        if key not in _GOOD_KEYS and not _good_key(key):
            raise _Reject
        rest = content[colon + 1 :]
        if rest and rest[0] != " ":
            raise _Reject
        rest = rest.strip(" ")
        i += 1
        if rest:
            out[key] = _inline(rest)
            continue
        value: Any = None
        if i < count:
            nind, ncontent = lines[i]
            is_item = ncontent[:2] == "- " or ncontent == "-"
            if nind > indent:
                value, i = _sequence(lines, i, nind) if is_item else _mapping(lines, i, nind)
            elif nind == indent and is_item:
                value, i = _sequence(lines, i, nind)
        out[key] = value
    return out, i


def _sequence(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    count = len(lines)
    while i < count:
        ind, content = lines[i]
        if ind != indent or content[:2] != "- ":
            break
        item = content[2:].strip(" ")
        # "- key: value" is a mapping inside the list: outside the subset.
        if not item or ": " in item or item[-1] == ":":
            raise _Reject
        items.append(_inline(item))
        i += 1
    if i < count and lines[i][0] > indent:
        raise _Reject
    return items, i


def _inline(text: str) -> Any:
    first = text[0]
    if first == '"':
        close = text.find('"', 1)
        if close < 0 or "\\" in text[:close]:
            raise _Reject
        _check_after_quote(text[close + 1 :])
        return text[1:close]
    if first == "'":
        value, after = _single_quoted(text)
        _check_after_quote(after)
        return value
    if first == "[":
        return _flow_list(text)
    if first in _BAD_PLAIN_START or (first in "-?:" and (len(text) == 1 or text[1] == " ")):
        raise _Reject
    hash_at = text.find(" #")
    if hash_at >= 0:
        text = text[:hash_at].rstrip(" ")
    if ": " in text or text[-1] == ":":
        raise _Reject
    return _resolve_plain(text)


def _check_after_quote(after: str) -> None:
    if after and not (after[0] == " " and after.lstrip(" ").startswith("#")):
        raise _Reject


def _single_quoted(text: str) -> tuple[str, str]:
    pos = 1
    while True:
        close = text.find("'", pos)
        if close < 0:
            raise _Reject
        if text[close + 1 : close + 2] == "'":
            pos = close + 2
            continue
        return text[1:close].replace("''", "'"), text[close + 1 :]


def _flow_list(text: str) -> list[Any]:
    if text[-1] != "]" or "#" in text:
        raise _Reject
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    items: list[Any] = []
    if "'" in inner or '"' in inner:
        pos = 0
        size = len(inner)
        while True:
            while pos < size and inner[pos] == " ":
                pos += 1
            if pos < size and inner[pos] in "'\"":
                quote = inner[pos]
                if quote == '"':
                    close = inner.find('"', pos + 1)
                    if close < 0 or "\\" in inner[pos:close]:
                        raise _Reject
                    items.append(inner[pos + 1 : close])
                    pos = close + 1
                else:
                    value, after = _single_quoted(inner[pos:])
                    items.append(value)
                    pos = size - len(after)
                while pos < size and inner[pos] == " ":
                    pos += 1
                if pos < size and inner[pos] != ",":
                    raise _Reject
            else:
                comma = inner.find(",", pos)
                chunk = inner[pos:] if comma < 0 else inner[pos:comma]
                if "'" in chunk or '"' in chunk:
                    raise _Reject
                items.append(_flow_plain(chunk.strip(" ")))
                pos = size if comma < 0 else comma
            if pos >= size:
                return items
            pos += 1  # the comma
            if not inner[pos:].strip(" "):
                raise _Reject  # trailing comma: YAML accepts it, keep the subset small
    if _FLOW_STOP_CHARS.search(inner):
        raise _Reject
    return _simple_flow(text)


def _flow_plain(item: str) -> Any:
    # Inside [...] these end or nest a plain scalar.
    if not item or item[0] in _BAD_FLOW_ITEM_START or not _FLOW_STOPS.isdisjoint(item):
        raise _Reject
    return _resolve_plain(item)


def _resolve_plain(value: str) -> Any:
    """Resolve a plain scalar exactly as PyYAML's implicit resolvers would, or reject it."""
    first = value[0]
    resolvers = _RESOLVERS.get(first)
    if not resolvers:
        return value
    if first in _NUMERIC_START:
        if value.count(".") > 1:  # no number or timestamp has two dots: "1.0.0" is a string
            return value
    elif len(value) > 5:  # past five characters only numbers resolve (the longest bool: "false")
        return value
    for tag, regexp in resolvers:
        if regexp.match(value):
            kind = tag.rsplit(":", 1)[-1]
            if kind == "bool":
                return _BOOLS[value.lower()]
            if kind == "null":
                return None
            if kind == "int" and _DECIMAL_INT.match(value):
                return int(value)
            if kind == "float" and _SIMPLE_FLOAT.match(value):
                return float(value)
            raise _Reject  # hex/octal/sexagesimal ints, .inf, timestamps, merge keys ...
    return value


def salvage(source: str) -> dict[str, Any]:
    """``name`` and ``description`` from top-level ``key: value`` lines of broken YAML."""
    out: dict[str, Any] = {}
    for line in source.split("\n"):
        key, sep, value = line.partition(":")
        if sep and key in ("name", "description"):
            value = value.strip().strip("'\"").strip()
            if value and value[0] not in "[{|>&*!":
                out[key] = value
    return out


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str | None]:
    """The frontmatter mapping of a SKILL.md text and, when it is broken, why.

    No frontmatter, or an empty one, is ``({}, None)``. Invalid YAML gives what ``salvage``
    can read and the parser's complaint (with its line, counted from the opening fence).
    """
    source = split_frontmatter(text)
    if source is None:
        return {}, None
    return parse_source(source)


def parse_source(source: str, *, printable: bool = False) -> tuple[dict[str, Any], str | None]:
    """``parse_frontmatter`` for the YAML text between the fences."""
    if len(source) > MAX_YAML_CHARS:
        # Parsing megabytes takes a second or more per file; no skill needs that much.
        return salvage(source), (
            f"the frontmatter is {len(source):,} characters, over the {MAX_YAML_CHARS:,} a YAML "
            "parse is allowed; only its plain name/description lines were read"
        )
    fast = parse_fast(source, printable=printable)
    if fast is not None:
        return fast, None
    try:
        data = parse_yaml(source)
    except yaml.YAMLError as exc:
        return salvage(source), _yaml_problem(exc)
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, f"the frontmatter is a {type(data).__name__}, not a mapping"
    return data, None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    # +2: the mark is 0-based and counts from the line after the opening fence.
    return f"invalid YAML frontmatter at line {mark.line + 2}: {problem}" if mark else (
        f"invalid YAML frontmatter: {problem}"
    )
