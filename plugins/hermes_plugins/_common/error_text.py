"""The lines of a failed tool output that say what went wrong (``failures`` decides whether it
failed): the first and last error line, composed to at most 300 characters on one line, and the
``file:line`` the output names (the deepest frame of the project's own code).
"""

from __future__ import annotations

import re

from hermes_core.plugin import redact

ERROR_MAX = 300
#: Outputs are read whole up to this size, else their head and tail (tracebacks and test
#: summaries sit at the end of long outputs).
SCAN_WHOLE_MAX = 12_288
SCAN_HEAD = 2_048
SCAN_TAIL = 8_192
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: An exit code heading the output: Claude Code's ``Exit code N``, mini-swe-agent's
#: ``<returncode>N</returncode>`` observation.
HEADER_EXIT = re.compile(r"\A\s*(?:Exit code:?\s*|<returncode>\s*)(-?\d+)")
#: A line that states an error: an exception name ending the line or followed by ':', a line
#: opening with an error word, pytest's ``E`` lines and summaries, common shell failures.
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)(?::.*)?$"
    r"|^(?:error|Error|ERROR|fatal|FATAL|panic|FAILED|FAIL|npm ERR!)(?:\[[^\]]*\])?[: ].*"
    r"|^\S+:\d+(?::\d+)?: (?:fatal )?(?:error|Error|ERROR)\b.*"
    r"|^\*\* \(\w+\) .*"
    r"|^\S.*\[ERROR\].*"
    r"|.*(?:: command not found|No such file or directory|Permission denied)$"
    r"|.*\bAssertion\b.*\bfailed\b.*"
    r"|^=*\s*\d+ failed\b.*"
    r"|^\d+ tests?, [1-9]\d* failures?\b.*"
)
#: Lines agents add around every output (OpenHands' exit note, SWE-agent's prompt state).
_TRAILERS = ("[The command completed with exit code", "(Open file:", "(Current directory:", "bash-$",
             "[Command finished with exit code", "[Python interpreter:",
             "<returncode>", "<output>", "</output>")  # mini-swe-agent's observation tags
_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
#: ``.ext:N`` - starts with a literal, so the regex engine skips ahead at C speed; the path
#: before it is then read backwards by hand.
_EXT_LINE = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,4}):(\d+)\b")
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")
_LIBRARY_HINTS = ("site-packages", "dist-packages", "/lib/python", "<frozen")
#: A line is cut to this many characters before it is collapsed and redacted: only
#: ``ERROR_MAX`` of it can be shown, and a 50 KB single-line output cost more than the rest.
LINE_READ_MAX = 2_048


def _one_line(text: str) -> str:
    if len(text) > LINE_READ_MAX:
        text = text[:LINE_READ_MAX]
    if text.isprintable():
        # Every whitespace character but the space (and ESC) is unprintable: words are split
        # by spaces only, so a text without doubled or outer spaces is its own collapsed form
        # (splitting a 2 KB line into words to join them again cost more than the rest).
        if "  " not in text and text[:1] != " " and text[-1:] != " ":
            return text
        return " ".join(text.split())
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return " ".join(text.split())


def _one_line_plain(text: str) -> str:
    """``_one_line`` without its fast path (the reference the tests use)."""
    text = text[:LINE_READ_MAX]
    return " ".join(_ANSI.sub("", text).split())


def _window(text: str) -> str:
    if len(text) <= SCAN_WHOLE_MAX:
        return text
    return text[:SCAN_HEAD] + "\n" + text[-SCAN_TAIL:]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


#: Substrings one of the ``_ERROR_LINE`` forms needs: only lines holding one are matched.
_HINT = re.compile(
    r"rror|RROR|xception|Exit|Interrupt|Failure|atal|ATAL|panic|FAIL|ERR!|\*\* \(|"
    r"command not found|No such file|Permission denied|Assertion|failed|failure"
)


def _body_lines_plain(window: str, limit: int) -> list[str]:
    """The first ``limit`` lines that are neither empty, an agent's trailer nor an exit header."""
    out: list[str] = []
    for raw in window.splitlines():
        line = _one_line(raw)
        if line and not line.startswith(_TRAILERS) and not HEADER_EXIT.match(line):
            out.append(line)
            if len(out) >= limit:
                break
    return out


#: ``_body_lines`` splits a growing prefix of the window, not all of it (up to 10 KB of lines).
BODY_PREFIX = 1_024


def _body_lines(window: str, limit: int) -> list[str]:
    """``_body_lines_plain`` from the window's first lines only, as many as it takes.

    Splitting a whole 10 KB window into lines (hundreds of strings) to keep four of them
    cost more than the rest of a failure line; every line of a prefix but its last (which may
    be cut) is a line of the whole window, so a prefix that holds ``limit`` of them decides.
    """
    if len(window) > BODY_PREFIX:
        out: list[str] = []
        for raw in window[:BODY_PREFIX].splitlines()[:-1]:
            line = _one_line(raw)
            if line and not line.startswith(_TRAILERS) and not HEADER_EXIT.match(line):
                out.append(line)
                if len(out) >= limit:
                    return out
    # Too few lines in the prefix (long lines, or few): the whole window, split once (growing
    # the prefix split a one-line window two or three times over).
    return _body_lines_plain(window, limit)


def _error_line_at(window: str, found: re.Match[str]) -> str | None:
    """The line holding the hint ``found``, normalised, if it is an error line."""
    return _error_line_from(window, window.rfind("\n", 0, found.start()) + 1, found.end())


def _error_line_from(window: str, line_start: int, after: int) -> str | None:
    """The line starting at ``line_start`` (running past ``after``), normalised, if it is an
    error line."""
    line_end = window.find("\n", after)
    line = _one_line(window[line_start: len(window) if line_end == -1 else line_end])
    if line and not line.startswith(_TRAILERS) and _ERROR_LINE.match(line) and not HEADER_EXIT.match(line):
        return line
    return None


#: ``_HINT``'s alternatives as literal-led patterns, with the character each starts with. One
#: alternation is tried at every character that may start a hint - a quarter of all letters -
#: and read ~10 ns per character; each literal pattern is one skip loop in C (~1 ns), and the
#: ones led by a capital (rare in output) are skipped outright when that capital is absent.
_HINT_LITERALS = tuple((lead, re.compile(pattern)) for lead, pattern in (
    ("R", "RROR"), ("E", r"E(?:xit|RR!)"), ("I", "Interrupt"), ("F", "F(?:ailure|AIL)"),
    ("A", "A(?:TAL|ssertion)"), ("*", r"\*\* \("), ("N", "No such file"), ("P", "Permission denied"),
))
#: The lower-case-led hints, searched with ``str.find`` (whose skip loop beats the regex
#: engine's on these); "fail" stands for "failed" and "failure", checked after it.
_HINT_NEEDLES = ("rror", "xception", "atal", "panic", "command not found")


def _hint_lines(window: str) -> list[tuple[int, int]]:
    """(line start, end of a hint in it) of every line holding a ``_HINT``, in order."""
    found: list[tuple[int, int]] = []
    for lead, pattern in _HINT_LITERALS:
        if window.find(lead) != -1:
            found.extend(match.span() for match in pattern.finditer(window))
    find = window.find
    for needle in _HINT_NEEDLES:
        at = find(needle)
        while at != -1:
            end = at + len(needle)
            found.append((at, end))
            at = find(needle, end)
    at = find("fail")
    while at != -1:
        if window.startswith("ed", at + 4):
            found.append((at, at + 6))
        elif window.startswith("ure", at + 4):
            found.append((at, at + 7))
        at = find("fail", at + 4)
    if not found:
        return []
    found.sort()
    lines: list[tuple[int, int]] = []
    last_start = -1
    for start, end in found:
        line_start = window.rfind("\n", 0, start) + 1
        if line_start != last_start:
            lines.append((line_start, end))
            last_start = line_start
    return lines


def error_lines(text: str) -> tuple[str, str]:
    """(first, last) error line of ``text`` (``last`` is "" when there is only one).

    Error lines are found from their hints (literal scans over the read part of the output);
    only the first and the last count, so lines holding a hint are checked from the start up
    to the first error line and from the end down to the last. Without an error line, the first
    line of the output stands for it (and the last, for outputs of up to 3 lines). Gives what
    ``error_lines_plain`` gives (tests compare them).
    """
    window = _window(text)
    lines = _hint_lines(window)
    first = last = ""
    for k, (line_start, after) in enumerate(lines):
        line = _error_line_from(window, line_start, after)
        if line is not None:
            first = last = line
            for line_start, after in reversed(lines[k + 1:]):
                line = _error_line_from(window, line_start, after)
                if line is not None:
                    last = line
                    break
            break
    if not first:
        body = _body_lines(window, 4)
        if not body:
            return "", ""
        first = body[0]
        last = body[-1] if 1 < len(body) <= 3 else first
    first = first[2:].lstrip() if first.startswith("E ") else first
    last = last[2:].lstrip() if last.startswith("E ") else last
    return first, ("" if last == first else last)


def error_lines_plain(text: str) -> tuple[str, str]:
    """``error_lines`` from every error line of the read part (the reference the tests use)."""
    window = _window(text)
    hits: list[str] = []
    last_start = -1
    for found in _HINT.finditer(window):
        line_start = window.rfind("\n", 0, found.start()) + 1
        if line_start == last_start:
            continue
        last_start = line_start
        line = _error_line_at(window, found)
        if line is not None:
            hits.append(line)
    if not hits:
        body = _body_lines(window, 4)
        hits = body[:1]
        if 1 < len(body) <= 3:
            hits.append(body[-1])
    if not hits:
        return "", ""
    first, last = hits[0], hits[-1]
    first = first[2:].lstrip() if first.startswith("E ") else first
    last = last[2:].lstrip() if last.startswith("E ") else last
    return first, ("" if last == first else last)


def compose_error(first: str, last: str) -> str:
    """First and last error line joined by `` … ``, within ``ERROR_MAX`` characters (secrets
    masked: the line outlives the result it came from)."""
    # What lies beyond LINE_READ_MAX is never shown; a secret starting within ERROR_MAX is
    # whole in what is kept, so it is masked as in the full line.
    first, last = redact(first[:LINE_READ_MAX]), redact(last[:LINE_READ_MAX])
    if not last:
        return _clip(first, ERROR_MAX)
    if len(first) + len(last) + 3 <= ERROR_MAX:
        return f"{first} … {last}"
    half = (ERROR_MAX - 3) // 2
    head = _clip(first, max(half, ERROR_MAX - 3 - len(last)))
    return f"{head} … {_clip(last, ERROR_MAX - 3 - len(head))}"


def location(text: str) -> str | None:
    """The ``file:line`` a failure names: the innermost project frame of a traceback, else the
    first ``path.ext:N`` of the text."""
    window = _window(text)
    frames = _PY_FRAME.findall(window)
    if frames:
        own = [f for f in frames if not any(hint in f[0] for hint in _LIBRARY_HINTS)]
        path, line = (own or frames)[-1]
        return f"{path}:{line}"
    for tried, match in enumerate(_EXT_LINE.finditer(window)):
        if tried >= 20:
            break
        start = match.start()
        while start > 0 and window[start - 1] in _PATH_CHARS and match.start() - start < 200:
            start -= 1
        stem = window[start:match.start()].lstrip("./") if window[start:start + 1] == "." else window[start:match.start()]
        if stem and (stem[-1].isalnum() or stem[-1] in "_-"):
            return f"{window[start:match.start()]}.{match.group(1)}:{match.group(2)}"
    return None
