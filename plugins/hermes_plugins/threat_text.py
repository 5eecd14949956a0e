"""What the injection scan matches on: the text as a reader sees it, and what hides inside it.

An attacker does not write "ignore previous instructions" in plain ASCII when a keyword list
is in the way. The same words survive, for the model, through Cyrillic look-alike letters,
fullwidth or mathematical letters, zero-width characters between letters, bidi controls,
invisible Unicode tag characters, HTML entities, percent- or base64-encoding. So the scanner
never matches the raw text alone; it matches *views* of it:

- ``folded``: NFKC, invisible and bidi controls removed, case-folded. Non-Latin patterns
  (Russian, Chinese, Arabic ...) run here.
- ``skeleton``: ``folded`` with every non-ASCII character that has an ASCII prototype in the
  Unicode TS #39 confusables table replaced by it, then accents stripped (NFD, marks
  dropped). English and the other Latin-script patterns run here, written without accents.
  Only non-ASCII characters are mapped: the table also folds ASCII into ASCII (``m`` ->
  ``rn``, ``I`` -> ``l``), which would make our own patterns unreadable, and an attacker who
  writes ASCII is already seen by them as written.
- decoded payloads: base64, hex (also as bytes written apart, "49 67 6e ..."), ``\\uXXXX``
  and percent-encoded runs, HTML entities, the inside of HTML comments and invisible
  tag-character text, words cut into syllables ("ig-no-re") or written with digits ("1gn0r3"), each decoded when it gives readable text, and then normalised and
  scanned like the line itself (two levels deep).

The confusables table is the one ``confusable-homoglyphs`` ships (MIT; generated from
Unicode's confusables.txt); it is loaded on the first line that holds a non-ASCII character.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from urllib.parse import unquote

#: Removed before matching: zero-width characters, joiners, bidi controls, the soft hyphen,
#: variation selectors, Hangul fillers, tag characters. None of them is visible; each can sit
#: between two letters of a keyword.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]")
#: Unicode tag characters (U+E0020..U+E007E) mirror ASCII and render as nothing: text written
#: in them is read by models and seen by nobody ("ASCII smuggling").
TAG_RUN = re.compile("[\U000e0020-\U000e007e]{4,}")


#: The longest stretch of one token that is looked at for base64 or hex.
MAX_TOKEN = 64 * 1024
NON_ASCII = re.compile(r"[^\x00-\x7f]+")
#: The combining accents of Latin, Greek and Cyrillic letters (not the vowel signs of Indic
#: scripts, which are letters' parts and stay for the folded view's patterns).
_LATIN_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


@lru_cache(maxsize=1)
def confusable_map() -> Mapping[int, str]:
    """``str.translate`` table: non-ASCII code point -> its ASCII prototype (TS #39).

    Read-only: the one cached table serves every caller, so none may change it for the others.
    (The view costs nothing measurable in ``skeleton``: only the short non-ASCII runs are
    translated.)

    Built from ``confusable-homoglyphs``' data, in which each character lists the characters
    of its confusable class; a non-ASCII character's ASCII class member is its prototype.
    Case is taken from the character (Cyrillic ``А`` -> ``A``, ``а`` -> ``a``), so that a
    capital look-alike of ``I`` (prototype ``l``) reads as ``I``.
    """
    data = json.loads(
        resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[int, str] = {}
    for char, homoglyphs in data.items():
        if len(char) != 1 or char.isascii():
            continue
        target = next((h["c"] for h in homoglyphs if h["c"].isascii() and h["c"].strip()), None)
        lower = char.lower()
        if lower != char and len(lower) == 1 and lower in data:
            # an upper-case letter: take its lower case's prototype, then upper-case it
            small = next((h["c"] for h in data[lower] if h["c"].isascii() and h["c"].isalpha()), None)
            if small is not None:
                target = small.upper()
        if target is not None:
            table[ord(char)] = target
    return MappingProxyType(table)


def folded(text: str) -> str:
    """NFKC, invisible characters removed, case-folded."""
    if text.isascii():
        return text.lower()
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold()


def skeleton(text: str) -> str:
    """``folded`` with non-ASCII look-alikes mapped to ASCII and accents stripped."""
    if text.isascii():
        return text.lower()
    table = confusable_map()
    plain = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    # only the non-ASCII runs are looked up: most context files are mostly ASCII
    mapped = NON_ASCII.sub(lambda m: m.group(0).translate(table), plain)
    stripped = _LATIN_MARKS.sub("", unicodedata.normalize("NFD", mapped))
    return unicodedata.normalize("NFC", stripped).casefold()


_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
#: A digit, or a + or =, next to letters of both cases: what base64 of text looks like (an
#: identifier has no digit, a path has no +).
_LIKE_BASE64 = re.compile(r"(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9+=])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[\s:]?){8,}|(?:\\x[0-9A-Fa-f]{2}){6,}")
_UESC = re.compile(r"(?:\\u[0-9A-Fa-f]{4}){4,}")
_SPACED = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_*]{1,4}){5,}[^\W\d_](?![^\W\d_])")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY = re.compile(r"&(?:#\d{2,7}|#x[0-9A-Fa-f]{1,6}|[A-Za-z]{2,10});")
_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)


def _readable(raw: bytes) -> str | None:
    """The decoded bytes as text when they read as words (not a hash, key or image)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 8:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    letters = sum(1 for c in text if c.isalpha())
    if printable < 0.95 * len(text) or letters < 0.5 * len(text.replace(" ", "")):
        return None
    return text if " " in text.strip() else None


def decoded(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` for each readable text hidden in ``text`` (one level; see the
    docstring). Kinds: ``tags``, ``comment``, ``entities``, ``percent``, ``escapes``,
    ``spaced`` (letters or syllables written apart), ``leet`` (digits for letters), ``hex``, ``base64``."""
    out: list[tuple[str, str]] = []
    if not text.isascii() and TAG_RUN.search(text):
        out.extend(("tags", "".join(chr(ord(c) - 0xE0000) for c in run))
                   for run in TAG_RUN.findall(text))
    if "<!--" in text:
        out.extend(("comment", c[4:].removesuffix("-->")) for c in comments(text)
                   if c[4:].removesuffix("-->").strip())
    if "&" in text or "%" in text or "\\u" in text:
        _escaped_lines(text, out)
    if " " in text or "-" in text or "." in text:
        _spaced_lines(text, out)
    if "-" in text:
        _syllables(text, out)
    if any(c in text for c in "01345"):
        _leet(text, out)
    _encoded_tokens(text, out)
    _spaced_hex(text, out)
    return out


def _escaped_lines(text: str, out: list[tuple[str, str]]) -> None:
    # Entities, percent-encoding and \\u escapes are decoded line by line, each changed line
    # scanned again: a document full of &amp; is not scanned twice whole.
    for line in text.split("\n"):
        if "&" in line and _ENTITY.search(line):
            unescaped = html.unescape(line)
            if unescaped != line:
                out.append(("entities", unescaped))
        if "%" in line and len(_PERCENT.findall(line)) >= 3:
            unquoted = unquote(line, errors="replace")
            if unquoted != line:
                out.append(("percent", unquoted))
        if "\\u" in line and _UESC.search(line):
            out.append(("escapes", _UESC.sub(_unescape, line)))


def _spaced_lines(text: str, out: list[tuple[str, str]]) -> None:
    # l e t t e r s  s p a c e d  o u t: one space inside a word, two or more between words
    # or by dots, dashes, underscores, stars ("i-g-n-o-r-e"); joined in place, so the words
    # around read on. Only lines dense in separators are looked at: spelling out letters
    # makes them so, and most lines are not.
    for line in text.split("\n"):
        if len(line) > 4000 or sum(line.count(c) for c in " .-_*") * 5 < len(line):
            continue
        if _SPACED.search(line):
            out.append(("spaced", _SPACED.sub(_join_spaced, line)))


#: A word cut into short pieces ("ig-no-re", "sys-tem"); a line with two, one of them in three
#: pieces or more, is read joined ("end-to-end" and "built-in" joined read as nothing).
_SYLLABLES = re.compile(r"(?<![\w-])[^\W\d_]{1,5}(?:-[^\W\d_]{1,5})+(?![\w-])")
#: A word that mixes letters with the digits that stand for letters ("1gn0r3", "pr3v10u5").
_LEET = re.compile(r"(?<!\w)(?=\w*[^\W\d_])(?=\w*[013457])\w{2,}")
_LEET_TABLE = str.maketrans("013457", "oieast")
#: What the text must hold for the patterns above to be tried on a line: a middle piece
#: ("-no-"), a digit before a letter ("1g"). Both start with a literal or a class, which the
#: regex engine skips to; the full patterns are tried at every word.
_SYLLABLE_HINT = re.compile(r"-[^\W\d_]{1,5}-")
_LEET_HINT = re.compile(r"[013457][A-Za-z]")


def _syllables(text: str, out: list[tuple[str, str]]) -> None:
    # A line with two such words, one in three pieces or more, is read again with their
    # hyphens removed. One pass over the text finds them; only their lines are looked at.
    for line in _lines_with(text, _SYLLABLE_HINT, 1):
        cut = _SYLLABLES.findall(line)
        if len(cut) >= 2 and any(word.count("-") >= 2 for word in cut):
            out.append(("spaced", _SYLLABLES.sub(lambda m: m.group(0).replace("-", ""), line)))


def _leet(text: str, out: list[tuple[str, str]]) -> None:
    # A line where most words are letters-and-digits is read again with the digits as letters
    # (version strings and hashes give one such word or two, and read as nothing).
    for line in _lines_with(text, _LEET_HINT, 3):
        mixed = _LEET.findall(line)
        if len(mixed) >= 3 and 2 * len(mixed) >= len(line.split()):
            out.append(("leet", _LEET.sub(lambda m: m.group(0).translate(_LEET_TABLE), line)))


def _lines_with(text: str, pattern: re.Pattern[str], least: int) -> list[str]:
    """The lines (up to 4,000 characters) of ``text`` that hold ``least`` matches of ``pattern``
    or more, found in one pass over the text."""
    counts: dict[int, int] = {}
    for match in pattern.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        counts[start] = counts.get(start, 0) + 1
    lines = []
    for start, count in counts.items():
        if count >= least:
            end = text.find("\n", start)
            line = text[start:None if end < 0 else end]
            if len(line) <= 4000:
                lines.append(line)
    return lines


#: Hex bytes written apart ("49 67 6e 6f 72 65 ..."): each token is too short to be looked at alone.
_SPACED_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ ,:]){8,}[0-9A-Fa-f]{2}(?![0-9A-Fa-f])")


def _spaced_hex(text: str, out: list[tuple[str, str]]) -> None:
    if text.count(" ") < 8:
        return
    for match in _SPACED_HEX.finditer(text):
        found = _readable(bytes.fromhex(re.sub(r"[ ,:]", "", match.group(0))))
        if found is not None:
            out.append(("hex", found))


def _encoded_tokens(text: str, out: list[tuple[str, str]]) -> None:
    # base64 and hex runs are long tokens: only tokens of 16+ characters are looked at, and of
    # a token longer than MAX_TOKEN its start (an instruction is short; a megabyte of one
    # character is not worth decoding)
    for token in text.split():
        if len(token) < 16:
            continue
        token = token[:MAX_TOKEN]
        for match in _HEX.finditer(token):
            digits = re.sub(r"[\s:]|\\x", "", match.group(0))
            found = _readable(bytes.fromhex(digits[:len(digits) - len(digits) % 2]))
            if found is not None:
                out.append(("hex", found))
        for match in _BASE64.finditer(token):
            run = match.group(0)
            # match, not search: the lookaheads read the run once, not once per position
            if not _LIKE_BASE64.match(run) or run.count("/") > len(run) // 12:
                continue  # an identifier or a path: base64 of text mixes cases and digits
            found = _b64(run)
            if found is not None:
                out.append(("base64", found))


def comments(text: str, limit: int = 1000) -> list[str]:
    """The HTML comments of ``text``, ``<!--`` to ``-->`` (or to the end when one is left open),
    found in one pass; at most ``limit`` of them."""
    out = []
    for match in _COMMENT.finditer(text):
        out.append(match.group(0))
        if len(out) >= limit:
            break
    return out


def _join_spaced(match: re.Match[str]) -> str:
    run = match.group(0)
    words = re.split(r"[ .\-_*]{2,}", run)
    if len(words) == 1 and " " in run and re.search(r"\w[.\-_*]\w", run):
        words = run.split(" ")  # "i.g.n.o.r.e a.l.l": dots inside words, a space between them
    return " ".join(re.sub(r"[ .\-_*]", "", word) for word in words)


def _unescape(match: re.Match[str]) -> str:
    run = match.group(0)
    return "".join(chr(int(run[i + 2:i + 6], 16)) for i in range(0, len(run), 6))


def _b64(run: str) -> str | None:
    body = run.rstrip("=")
    for alphabet in (None, b"-_"):
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=alphabet, validate=True)
        except (binascii.Error, ValueError):
            continue
        found = _readable(raw)
        if found is None and len(raw) >= 16 and raw[1::2].count(0) * 2 >= len(raw) // 2:
            try:  # UTF-16LE, what powershell -EncodedCommand takes
                found = _readable(raw.decode("utf-16-le").encode("utf-8"))
            except UnicodeDecodeError:
                found = None
        if found is not None:
            return found
    return None
