"""What a failed tool result says went wrong, decided from structure (issue 13).

A result counts as failed only on structural evidence: ``_is_error`` metadata on the message, a
non-zero exit code (a JSON ``exit_code``, Claude Code's ``Exit code N`` header, mini-swe-agent's
``<returncode>N</returncode>``, OpenHands' ``[The command completed with exit code N.]``, ``exit code: N`` near the end), a JSON ``error``
that is not null/empty or ``"success": false``, a Python traceback, a line that *starts* with
``Error:``/``error:``/``ERROR:``/``fatal:``, a shell's ``command not found``, or pytest's
``FAILED test`` lines and ``=== N failed`` summary. A word inside code (``except sqlite3.Error:``) or a
``"error": null`` key never makes a result failed, and an explicit exit code 0 wins over text.

A call whose result was never recorded is not a failure: the placeholder a transcript repair
puts there (``MISSING_RESULT_TEXT``, flagged ``_is_error`` for the provider's sake) carries no
evidence, so ``failure_of`` gives ``None`` for it and ``no_result`` tells it apart from a success
(issue 29: a summary says "no result recorded", never "still failing").

``failure_of`` returns the exit code, the first and last error line (≤ 300 chars together,
whitespace collapsed so the line can be quoted on one line) and the ``file:line`` the text names.
Outputs are read whole up to 12 KB, else their first 2 KB and last 8 KB: tracebacks and
test summaries sit at the end of long outputs.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, NamedTuple

import orjson

from hermes_core.plugin import MISSING_RESULT_TEXT
from hermes_plugins._common.error_text import (
    HEADER_EXIT,
    SCAN_HEAD,
    SCAN_TAIL,
    compose_error,
    error_lines,
    location,
)

JSON_PARSE_MAX = 400_000

_TRACEBACK = "Traceback (most recent call last):"
_TAIL_EXIT = re.compile(
    r"(?:exit(?:ed)?[ _](?:code|status)(?: of)?|completed with exit code|returned non-zero exit status)"
    r"[\"']?\s*[:=]?\s*(-?\d+)",
    re.IGNORECASE,
)
#: A line that opens with an error word, or with an exception's name (a traceback's last line).
_ERROR_START = re.compile(
    r"[ \t]*(?:Error|error|ERROR|fatal|FATAL|[A-Za-z_][\w.]{0,60}(?:Error|Exception))(?:\[[^\]\n]*\])?:[ \t]*\S"
)


_DECODER = json.JSONDecoder()
_JSON_EXIT = re.compile(r'"(?:exit_code|returncode)"\s*:\s*"?(-?\d+)')
_JSON_ERROR = re.compile(r'"error"\s*:\s*(null|""|false|\[\]|\{\})?')


JSON_FULL_PARSE_MAX = 32_768
_JSON_STRING_KEY = re.compile(r'"(output|stdout|stderr|content)"\s*:\s*"')
_JSON_STATUS = re.compile(r'"(exit_code|returncode|error|success)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+|null|true|false)')


def _decode_piece(piece: str) -> str:
    """A slice of a JSON string's escaped body, decoded as far as it goes."""
    trailing = len(piece) - len(piece.rstrip("\\"))
    if trailing % 2:
        piece = piece[:-1]
    cut = piece.rfind("\\u", max(0, len(piece) - 6))
    if cut != -1 and len(piece) - cut < 6:
        piece = piece[:cut]
    try:
        return str(json.loads(f'"{piece}"'))
    except ValueError:
        return piece.replace("\\n", "\n").replace('\\"', '"')


def _partial_json(text: str) -> dict[str, Any] | None:
    """The status keys and the ends of the output of a big JSON result, without parsing it all.

    A failed command's output can be hundreds of kilobytes; what a failure line needs is the
    status (first or last keys) and the ends of the output, where errors show.
    """
    head, tail = text[:2_048], text[-2_048:]
    obj: dict[str, Any] = {}
    for part in (head, tail):
        for match in _JSON_STATUS.finditer(part):
            try:
                obj[match.group(1)] = json.loads(match.group(2))
            except ValueError:
                continue
    key = _JSON_STRING_KEY.match(text, 1) or _JSON_STRING_KEY.search(head)
    if key is None:
        return obj or None
    start = key.end()
    end = len(text) - 1
    for match in _JSON_STATUS.finditer(tail):  # the status keys after the output end it
        end = min(end, len(text) - len(tail) + match.start())
        break
    end = _body_end(text, start, end)
    if end - start <= SCAN_HEAD + SCAN_TAIL:
        obj[key.group(1)] = _decode_piece(text[start:end])
    else:
        # Only the ends are read: slicing the body first copied the whole output.
        rest = text[end - SCAN_TAIL:end]
        boundary = rest.find("\\n")
        rest = rest[boundary + 2:] if boundary != -1 else rest
        obj[key.group(1)] = _decode_piece(text[start:start + SCAN_HEAD]) + "\n" + _decode_piece(rest)
    return obj


def _body_end(text: str, start: int, end: int) -> int:
    """Where ``text[start:end].rstrip().rstrip(",").rstrip().removesuffix('"')`` ends, without
    copying the body (a JSON string's body is followed by a few separator characters)."""
    j = end
    budget = 64
    for strip in (str.isspace, ",".__eq__, str.isspace):
        while j > start and strip(text[j - 1]):
            j -= 1
            budget -= 1
            if budget < 0:  # an odd tail: the plain form
                return start + len(text[start:end].rstrip().rstrip(",").rstrip().removesuffix('"'))
    if j > start and text[j - 1] == '"':
        j -= 1
    return j


def _json_may_fail(text: str) -> bool:
    """Whether a JSON result could report a failure (no parse for the usual successful ones).

    Tools put their status keys first or last (``{"success": false, "error": ...}``,
    ``{"output": ..., "exit_code": 1, "error": null}``): only those ends are looked at.
    """
    ends = text if len(text) <= 1_024 else text[:512] + "\n" + text[-512:]
    if '"success": false' in ends or '"success":false' in ends:
        return True
    # Each pattern opens with its key: no match starts before the key's first place (the
    # patterns, led by a quote, were tried at every quote of the ends).
    at = _first_of(ends, '"exit_code"', '"returncode"')
    if at != -1:
        for match in _JSON_EXIT.finditer(ends, at):
            if match.group(1) != "0":
                return True
    at = ends.find('"error"')
    return at != -1 and any(match.group(1) is None for match in _JSON_ERROR.finditer(ends, at))


def _first_of(text: str, a: str, b: str) -> int:
    """The first place of ``a`` or ``b`` in ``text``, or -1."""
    first, second = text.find(a), text.find(b)
    if first == -1:
        return second
    return first if second == -1 else min(first, second)


def _json_may_fail_plain(text: str) -> bool:
    """``_json_may_fail`` with the patterns tried everywhere (the reference the tests use)."""
    ends = text if len(text) <= 1_024 else text[:512] + "\n" + text[-512:]
    if '"success": false' in ends or '"success":false' in ends:
        return True
    for match in _JSON_EXIT.finditer(ends):
        if match.group(1) != "0":
            return True
    return any(match.group(1) is None for match in _JSON_ERROR.finditer(ends))


def _decode_object_plain(text: str) -> Any:
    try:
        # raw_decode: Hermes appends discovered context files after the JSON object.
        return _DECODER.raw_decode(text)[0]
    except (ValueError, RecursionError):
        return None


_NUMERIC_KEYS = ("exit_code", "returncode", "error", "metadata")


def _decode_object(text: str) -> Any:
    """``_decode_object_plain`` as far as failure detection reads it, by orjson (~3x faster).

    orjson refuses what it does not take exactly as ``json`` would (trailing text, NaN,
    integers beyond 64 bits, lone surrogates, deep nesting): those go the plain way.
    """
    try:
        obj = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return _decode_object_plain(text)
    if type(obj) is dict:
        # orjson reads integers beyond 64 bits as floats: where failure detection reads a
        # number or dumps a structure, the plain decoder decides (these are rare).
        for key in _NUMERIC_KEYS:
            value = obj.get(key)
            if value is not None and type(value) in (float, dict, list):
                return _decode_object_plain(text)
    return obj


class Failure(NamedTuple):
    """A failed result: exit code (``None`` when unknown), error text, ``file:line`` or ``None``."""

    code: str | None
    error: str
    where: str | None

    @property
    def first(self) -> str:
        """The first error line (the part a probe looks for)."""
        return self.error.split(" … ", 1)[0]


#: An exit code is looked for in this many last characters (after a header at the start).
EXIT_TAIL = 600
#: "exit" in any case, found from its "x"/"X" (a one-character literal, which the regex engine
#: skips to at C speed; ``str.find`` of a short needle of common letters barely skips at all).
#: The "i" class holds what ``_TAIL_EXIT``'s case-insensitive "i" also matches ("ı", "İ").
_EXIT_WORD = re.compile(r"x(?<=[eE]x)[iIıİ][tT]")
_EXIT_WORD_UPPER = re.compile(r"X(?<=[eE]X)[iIıİ][tT]")
#: How far into a ``_TAIL_EXIT`` match its "exit" word's x stands at most
#: ("returned non-zero exit status": 19).
EXIT_X_OFFSET_MAX = 19


def _exit_code(text: str) -> str | None:
    match = HEADER_EXIT.match(text)
    if match:
        return match.group(1)
    start = len(text) - EXIT_TAIL
    if start < 0:
        start = 0
    # Every form holds "exit" in some case: the regex (a case-insensitive alternation, slow to
    # scan with) runs only where that word is, and on the text itself from ``start`` (a slice
    # would copy the tail of every output).
    lower = _EXIT_WORD.search(text, start) if text.find("x", start) != -1 else None
    upper = _EXIT_WORD_UPPER.search(text, start) if text.find("X", start) != -1 else None
    if lower is None:
        if upper is None:
            return None
        first = upper.start()
    else:
        first = lower.start() if upper is None else min(lower.start(), upper.start())
    # No match starts before the first "exit" word's form does: the case-insensitive pattern
    # is tried from there, not at every position of the tail (a JSON result ending in
    # ``"exit_code": 0}`` has its word in its last characters).
    scan = first - EXIT_X_OFFSET_MAX
    if scan < start:
        scan = start
    found = None
    for found in _TAIL_EXIT.finditer(text, scan):  # noqa: B007 - walks to the last match
        pass
    return found.group(1) if found else None


#: Substrings every error opening contains ("Error:", "error:", "ERROR:", "fatal:", "FATAL:").
_OPENING_NEEDLES = ("rror:", "RROR:", "atal:", "ATAL:")
#: Detection looks at the whole of a short output, else at its start and its end: failures
#: announce themselves there (a first "Error: ..." line, "fatal:" or an exception's last line
#: at the end). A traceback's header may stand further up than its last line: it is looked
#: for over a longer tail (one long needle, which ``str.find`` skips through fast).
DETECT_WHOLE_MAX = 2_048
DETECT_HEAD = 512
DETECT_TAIL = 1_536
TRACEBACK_TAIL = 3_072


def _detect_spans(size: int) -> tuple[tuple[int, int], ...]:
    if size <= DETECT_WHOLE_MAX:
        return ((0, size),)
    return ((0, DETECT_HEAD), (size - DETECT_TAIL, size))


#: An error opening's colon (``Error:``, ``error:``, ``ERROR:``, ``fatal:``, ``FATAL:``, ``KeyError:``):
#: a one-character literal the regex engine skips to at C speed, the word before it checked
#: behind it (its last letter first: JSON has a colon on every line). One pass per span
#: instead of a substring scan per needle, which cost two to four times as much.
_OPENING_COLON = re.compile(r":(?<=[rRlL]:)(?<=rror:|RROR:|atal:|ATAL:)")
#: Candidates looked at per needle and span (an output full of "error:" inside lines is not
#: read line by line).
OPENING_CANDIDATES = 16


def _traceback_between(text: str, start: int, end: int) -> bool:
    # The header holds a "(" and a "T": one-character searches (memchr) rule most regions out
    # before the search for the whole header, whose common letters keep ``str.find`` slow.
    return (text.find("(", start, end) != -1 and text.find("T", start, end) != -1
            and text.find(_TRACEBACK, start, end) != -1)


def _traceback_in(text: str, size: int) -> bool:
    if size <= DETECT_HEAD + TRACEBACK_TAIL:
        return _traceback_between(text, 0, size)
    return _traceback_between(text, size - TRACEBACK_TAIL, size) or _traceback_between(text, 0, DETECT_HEAD)


def _text_says_failed(text: str) -> bool:
    """A traceback, or a line that starts with an error word, where failures show.

    Plain substring search for the traceback header (one long needle, after one-character
    tests) and one regex pass per span for the colon of an error opening; only a candidate's
    own line is checked. Gives what ``_text_says_failed_plain`` gives (tests compare them).
    """
    size = len(text)
    if size <= DETECT_WHOLE_MAX:
        if _traceback_between(text, 0, size):
            return True
        return (text.find(":") != -1 and _opening_between(text, 0, size)) or _words_between(text, 0, size)
    if _traceback_in(text, size):
        return True
    return (_opening_between(text, 0, DETECT_HEAD) or _opening_between(text, size - DETECT_TAIL, size)
            or _words_between(text, 0, DETECT_HEAD) or _words_between(text, size - DETECT_TAIL, size))


#: Failures a shell or a test runner states without an error opening (issue 29): a shell's
#: "command not found", pytest's ``FAILED test`` lines and its ``=== 2 failed, ...`` summary.
_FAILED_LINE = re.compile(r"(?m)^(?:FAILED \S|=+ (?:[^\n]*\D)?[1-9]\d* failed\b)")


def _words_between(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds one of those statements (substring tests first)."""
    if text.find("command not found", start, end) != -1:
        return True
    if text.find("FAILED ", start, end) == -1 and text.find(" failed", start, end) == -1:
        return False
    return _FAILED_LINE.search(text, start, end) is not None


def _opening_between(text: str, start: int, end: int) -> bool:
    """Whether a line starting with an error opening has its opening in ``text[start:end]``."""
    if text.find(":", start, end) == -1:
        return False  # no opening without its colon (memchr rules out prose at once)
    counts: dict[str, int] | None = None
    for found in _OPENING_COLON.finditer(text, start, end):
        at = found.start() - 4
        if at < start:
            continue  # the word starts before the span
        if counts is None:
            counts = {}
        needle = text[at:at + 4]
        seen = counts.get(needle, 0)
        if seen >= OPENING_CANDIDATES:
            continue
        counts[needle] = seen + 1
        line_start = text.rfind("\n", start, at) + 1
        if at - line_start <= 64 and _ERROR_START.match(text, line_start) is not None:
            return True
    return False


def _text_says_failed_plain(text: str) -> bool:
    """``_text_says_failed`` as four substring scans per span (the reference the tests use)."""
    size = len(text)
    if _traceback_in(text, size):
        return True
    for start, end in _detect_spans(size):
        if _words_between(text, start, end):
            return True
        for needle in _OPENING_NEEDLES:
            at = text.find(needle, start, end)
            checked = 0
            while at != -1 and checked < OPENING_CANDIDATES:
                line_start = text.rfind("\n", start, at) + 1
                if at - line_start <= 64 and _ERROR_START.match(text, line_start) is not None:
                    return True
                checked += 1
                at = text.find(needle, at + 1, end)
    return False


def _from_json(obj: dict[str, Any], is_error: bool) -> Failure | None:
    code: Any = obj.get("exit_code", obj.get("returncode"))
    meta = obj.get("metadata")
    if code is None and isinstance(meta, dict):
        code = meta.get("exit_code")
    if isinstance(code, str) and code.lstrip("-").isdigit():
        try:
            code = int(code)
        except ValueError:  # digits int() does not read ("²"), or "--1": no exit code
            code = None
    if type(code) is not int:
        code = None
    error = obj.get("error")
    has_error = error not in (None, "", False, [], {}) and not (isinstance(error, str) and not error.strip())
    failed = is_error or has_error or obj.get("success") is False or (code is not None and code != 0)
    if not failed:
        return None
    output: str = next((obj[k] for k in ("output", "stderr", "stdout", "message", "content")
                        if isinstance(obj.get(k), str) and obj[k].strip()), "")
    source = output
    if has_error:
        message = error.get("message") if isinstance(error, dict) else None
        source = error if isinstance(error, str) else (
            message if isinstance(message, str) else json.dumps(error, ensure_ascii=False))
    first, last = error_lines(source)
    if not first and output and source is not output:
        first, last = error_lines(output)
    where = location(source) or (location(output) if output and source is not output else None)
    return Failure(None if code in (None, 0) else str(code), compose_error(first, last), where)


#: Verdicts of results of at least this size are remembered per string object (see failure_of).
CACHE_MIN_CHARS = 256
#: Characters of remembered strings after which the ones nobody else holds any more are let go.
CACHE_CHARS = 64 * 1024 * 1024
#: Strings remembered at most: past it the dropped ones go, and when more than half are still
#: held elsewhere everything goes (judging again is always correct, only slower).
CACHE_ENTRIES = 100_000
# A memo of pure functions (the verdict on a string and two flags; the one-liner a caller built
# from it, see remember), so it may be the process's: every host would compute the same.
# It is keyed by identity but holds the string, so an id is never reused while its entry lives.
# Entries: (string, flags, verdict, line key, line).
_verdicts: dict[int, tuple[str, int, Failure | None, Any, str | None]] = {}
_held = 0
_sweep_at = CACHE_CHARS
#: What the memo gives for a string it does not hold (its first item is no string).
_MISSING: tuple[Any, int, Failure | None, Any, str | None] = (None, -1, None, None, None)
#: The one-liners ``remember`` kept, by identity -> (line, verdict of the result it replaced): a
#: history that holds our line instead of the result still has its outcome (a summary must not
#: judge the line's own text, whose paths and commands may hold "; ").
_line_verdicts: dict[int, tuple[str, Failure | None]] = {}


def _sweep() -> None:
    """Forget the strings only this cache still holds; the next sweep waits for twice the rest."""
    global _verdicts, _held, _sweep_at
    # A string held elsewhere has more references than the entry's and the call argument's
    # (CPython's count); the others are results the host has dropped.
    kept = {key: entry for key, entry in _verdicts.items() if sys.getrefcount(entry[0]) > 2}
    if len(kept) > CACHE_ENTRIES // 2:
        kept = {}  # a hard bound; the next sweep is then at least half the bound away
    _verdicts = kept
    _line_verdicts.clear()
    for entry in kept.values():
        if entry[4] is not None:
            _line_verdicts[id(entry[4])] = (entry[4], entry[2])
    _held = sum(len(entry[0]) for entry in kept.values())
    _sweep_at = max(CACHE_CHARS, 2 * _held)


def clear_cache() -> None:
    """Forget every remembered verdict and line (tests; a host that wants the memory back)."""
    global _verdicts, _held, _sweep_at
    _verdicts, _held, _sweep_at = {}, 0, CACHE_CHARS
    _line_verdicts.clear()


def failure_of(content: Any, *, is_error: Any = False, reads: Any = False) -> Failure | None:
    """The failure ``content`` reports, or ``None`` when the result did not fail.

    ``reads`` marks a file-reading tool: the file's own text (a log with ``ERROR:`` lines, code
    with tracebacks in docstrings) is not evidence, only metadata, JSON fields and a header are.

    Every compaction demotes the same old results again (a host keeps its full history), so
    the verdict on a result string is remembered for that very object (identity, checked, not
    equality: no hash of a 50 KB output). Strings the host drops are let go at the next sweep.
    """
    if type(content) is not str or len(content) < CACHE_MIN_CHARS:
        return _failure_of(content, is_error, reads)
    flags = (2 if is_error else 0) | (1 if reads else 0)
    entry = _verdicts.get(id(content), _MISSING)
    if entry[0] is content and entry[1] == flags:
        known: Failure | None = entry[2]
        return known
    verdict = _failure_of(content, is_error, reads)
    remember(content, flags, verdict, None, None, entry[0] is content)
    return verdict


def memo_entry(content: str) -> tuple[Any, int, Failure | None, Any, str | None]:
    """The memo's entry for this very string: ``(content, flags, verdict, line key, line)``;
    an entry whose first item is not ``content`` when it holds none."""
    return _verdicts.get(id(content), _MISSING)


def remembered_line(content: str, key: Any) -> str | None:
    """The line ``remember`` kept for ``content`` under an equal ``key``, or ``None``."""
    entry = _verdicts.get(id(content), _MISSING)
    if entry[0] is content and entry[3] == key:
        line: str | None = entry[4]
        return line
    return None


def remember(content: str, flags: int, verdict: Failure | None, key: Any, line: str | None, held: bool) -> None:
    """Keep a verdict (``flags``: 2 for ``is_error``, 1 for ``reads``) and, when ``line`` is
    given, the one-liner built from it (a pure function of ``content`` and of ``key``, which
    must compare equal only for equal inputs) in one entry. ``held``: the caller's look-up
    found an entry for this very string (so it is counted already).

    The free passes build the same lines again at every compaction of a history a host keeps
    whole; with the line, a warm pass skips the arguments and the formatting too. It goes
    with the verdict's entry (the same bound, sweep and ``clear_cache``)."""
    global _held
    if not held:
        if _held + len(content) > _sweep_at or len(_verdicts) >= CACHE_ENTRIES:
            _sweep()
        _held += len(content)
    _verdicts[id(content)] = (content, flags, verdict, key, line)
    if line is not None:
        if len(_line_verdicts) >= CACHE_ENTRIES:  # lines replaced for the same string: rebuild
            _sweep()
        _line_verdicts[id(line)] = (line, verdict)


def line_verdict(line: str) -> tuple[bool, Failure | None]:
    """(found, verdict) of the result this very one-liner string replaced (see ``remember``)."""
    entry = _line_verdicts.get(id(line))
    if entry is not None and entry[0] is line:
        return True, entry[1]
    return False, None


#: Result texts that say no result was recorded for the call (our transcript repair's placeholder).
NO_RESULT_TEXTS = (MISSING_RESULT_TEXT,)
#: What a summary or a one-liner says for such a call.
NO_RESULT = "no result recorded"


def no_result(content: Any) -> bool:
    """Whether a result's ``content`` is a placeholder for a result that was never recorded."""
    if type(content) is not str or content[:1] != "[":
        return False
    for text in NO_RESULT_TEXTS:  # equal lengths first: a long output costs nothing
        if len(content) == len(text) and content == text:
            return True
    return False


def is_no_result(message: Any) -> bool:
    """Whether a tool message stands for a result that was never recorded (``_no_result``
    metadata, or the placeholder text)."""
    if not isinstance(message, dict):
        return False
    return bool(message.get("_no_result")) or no_result(message.get("content"))


def _opens_object(text: str) -> bool:
    """Whether ``text`` starts with ``{`` after whitespace (without copying a long output)."""
    head = text[:64].lstrip()
    if head or len(text) <= 64:
        return head.startswith("{")
    return text.lstrip().startswith("{")


def _failure_of(content: Any, is_error: Any, reads: Any) -> Failure | None:
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    if text[:1] == "[" and no_result(text):
        return None  # no result is no evidence, whatever flag the placeholder carries
    lead = text[:1]
    # ``_opens_object`` only when the text starts with whitespace: most outputs decide here.
    if (lead == "{" or (lead.isspace() and _opens_object(text))) and len(text) <= JSON_PARSE_MAX:
        stripped = text.lstrip()
        if not is_error and not _json_may_fail(stripped):
            return None
        obj = _partial_json(stripped) if len(stripped) > JSON_FULL_PARSE_MAX else None
        if obj is None:
            obj = _decode_object(stripped)
        if isinstance(obj, dict):
            return _from_json(obj, bool(is_error))
    if reads:
        # A read file's own text is no evidence, an "exit code: 1" near its end included: only
        # a header the tool put before it is (it was read as the file's, and scanned for).
        header = HEADER_EXIT.match(text)
        code = header.group(1) if header else None
    else:
        code = _exit_code(text)
    if code == "0" and not is_error:
        return None
    failed = bool(is_error) or (code is not None and code != "0")
    if not failed and not reads:
        failed = _text_says_failed(text)
    if not failed:
        return None
    first, last = error_lines(text)
    return Failure(None if code in (None, "0") else code, compose_error(first, last), location(text))


def suffix(failure: Failure) -> str:
    """``; <error> (<file:line>)``: what a one-liner appends for a failed result."""
    parts = ""
    if failure.error:
        parts = f"; {failure.error}"
    if failure.where and failure.where not in failure.error:
        parts += f" ({failure.where})"
    return parts or "; failed"
