"""JSON of user or model data, read and walked without recursing past a bound.

``json``, ``copy.deepcopy`` and ``repr`` recurse per nesting level, so arguments a model nested
10,000 deep raise ``RecursionError`` on every later turn. Everything that parses or walks such
data measures its depth first, without recursion, and refuses more than ``MAX_DEPTH`` with
``TooDeepError`` (a ``ValueError``). The recursion limit is never touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "TooDeepError",
    "json_depth",
    "loads",
    "too_deep_note",
    "tool_arguments",
    "value_depth",
]

#: Dict/list levels a value may have. Far beyond real tool arguments, schemas and messages (the
#: transcript readers' ``MAX_MESSAGE_DEPTH`` is the same), far below what ``json``, ``deepcopy``
#: and ``repr`` survive under the default recursion limit even when called deep in a stack.
MAX_DEPTH = 100

# A JSON string (escapes included) or one bracket: brackets inside strings are not structure.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class TooDeepError(ValueError):
    """JSON text or a value nests deeper than the bound; nothing recursive was run on it."""


def json_depth(text: str | bytes, limit: int = MAX_DEPTH) -> int:
    """How deep ``text`` (JSON) nests, counting no further than ``limit + 1``.

    A text with at most ``limit`` opening brackets cannot be deeper (two ``count`` calls in C,
    the common case); otherwise one regex scan that skips strings. Invalid JSON gets a number
    too (``json.loads`` reports it afterwards).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text.count("{") + text.count("[") <= limit:
        return min(limit, text.count("{") + text.count("["))
    depth = deepest = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "{" or token == "[":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif token == "}" or token == "]":
            depth -= 1
    return deepest


def loads(text: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refused with ``TooDeepError`` when it nests deeper than ``limit``.

    A text with at most ``limit`` brackets cannot be deeper (two ``count`` calls). Otherwise it
    is parsed first - the C scanner stops at the interpreter's own limit and raises
    ``RecursionError``, which is this bound's refusal too - and the parsed value's depth is
    measured without recursion: a walk of its containers, far cheaper than a scan of every
    character of long strings (a tool result of code holds many brackets and little nesting).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="surrogatepass")
    if text.count("{") + text.count("[") <= limit:
        return json.loads(text)
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeepError(f"JSON nested more than {limit} levels deep") from None
    if value_depth(value, limit) > limit:
        raise TooDeepError(f"JSON nested more than {limit} levels deep")
    return value


def value_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests in dicts, lists and tuples (an explicit stack, no recursion),
    counting no further than ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list, tuple)))
    return deepest


def too_deep_note(what: str = "arguments", limit: int = MAX_DEPTH) -> str:
    """The JSON object that stands for a value too deep to keep (a tool call's input the
    provider sent as an object, never as text): visible to the model and to a reader. Its key
    has no leading underscore: ``_`` keys are our metadata, stripped from what goes on the wire."""
    return json.dumps({"note": f"the {what} nested more than {limit} levels deep were removed"})


def tool_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str]:
    """A tool call's arguments (JSON text, a mapping or nothing) as a dict, or ``None`` and
    why not: not JSON, not an object, or nested past ``MAX_DEPTH``."""
    if arguments is None or arguments == "":
        return {}, ""
    # A model writes the arguments: their depth is bounded before anything recursive (the
    # parser, the schema check, deepcopy, repr) sees them.
    too_deep = f"arguments are nested more than {MAX_DEPTH} levels deep"
    if isinstance(arguments, str):
        try:
            arguments = loads(arguments)  # the depth is checked on the text
        except TooDeepError:
            return None, too_deep
        except json.JSONDecodeError as exc:
            return None, f"arguments are not valid JSON ({exc.msg})"
    elif value_depth(arguments) > MAX_DEPTH:  # the host's own object
        return None, too_deep
    if arguments.__class__ is not dict and not isinstance(arguments, Mapping):
        return None, f"arguments must be a JSON object, got {type(arguments).__name__}"
    return dict(arguments), ""
