"""Built-in plugin ``threat_scan``: the prompt-injection scan (spec §9.4, §12; issue 31).

Text from a cloned repository's AGENTS.md, from memory the model wrote, or from SOUL.md goes
into the system prompt verbatim, so it is the easiest place to smuggle instructions in. This
scanner answers ``hermes_context_scan`` with the ids of what it found, by family (see
``threat_rules``, ``threat_override``, ``threat_languages``, ``threat_patterns``): instruction override (in 22 languages), fake authority, fetch-and-execute,
credential, environment and system-prompt exfiltration, dangerous link schemes, tool-call and
dialogue forgery and hidden text. It matches normalised views of the text, not the raw bytes (``threat_text``): NFKC,
confusable skeletons (Unicode TS #39), invisible and bidi controls removed, and it decodes and
scans what hides inside (base64, hex - also written apart -, percent-encoding, HTML entities
and comments, tag characters). Add a scanner of your own through the same hook (findings are united), or block
this one (``plugins.disabled: [threat_scan]``) to use only yours.

Scope ``"context"`` (context files, SOUL.md) leaves out the strict patterns, which a project's
own docs legitimately contain (``cat ~/.ssh/id_rsa.pub`` in a setup guide); scope
``"strict"`` (memory entries, which the model itself writes) uses every pattern.

Judgement: the ids in ``hermes_plugins._common.screening.LOW_SEVERITY`` name shapes that ordinary docs
contain too - an override scoped to a topic ("ignore the previous rules about line length"),
an HTML comment that addresses editors ("you must keep this list short"), the joiners emoji and
Indic/Persian text need (U+200C/U+200D), a credential sent in a request header to the API it
belongs to, an official installer piped to a shell, tool-call markup quoted in a code span, a
word that mixes Latin with Cyrillic or Greek letters. ``hermes_plugins._common.screening`` warns about
those and blocks only the offending lines of the rest.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import hookimpl
from hermes_plugins import threat_text
from hermes_plugins._common.screening import HIGH, severity
from hermes_plugins.threat_languages import AUTHORITY, LANGUAGES, PERSONA, WINDOW
from hermes_plugins.threat_patterns import KNOWN_INSTALLERS
from hermes_plugins.threat_rules import HEADER_SECRET, NEGATION, RULES, URL_HOST, Rule

#: Decoded text is decoded again once (base64 inside an HTML comment, entities in base64).
MAX_DEPTH = 2
#: Rule ids a prohibition before the match turns into advice ("never run `curl ... | sh`").
_NEGATABLE = frozenset({"credential_access", "credential_exfiltration", "remote_script_execution",
                        "env_exfiltration", "prompt_extraction"})
#: Rule ids whose match inside an inline code span (`...`) is a mention, not markup.
#: (A link in a code span is not rendered, so it cannot be clicked.)
_MENTIONED = {"chat_template_token": "tool_markup_mention", "tool_call_forgery": "tool_markup_mention",
              "dangerous_link": "link_mention"}
#: Clause punctuation of Chinese and Japanese (NFKC turns the full-width ，；：！？ into ASCII):
#: in those languages a clause, not a window of characters, holds an override's words.
_CLAUSE_MARKS = "。、,;:!?"
_CLAUSE_LANGUAGES = frozenset({"zh", "ja"})
#: The script of each language of ``threat_languages`` written outside Latin letters.
_SCRIPTS = {"ru": "cyrillic", "uk": "cyrillic", "zh": "han", "ja": "han", "ko": "hangul", "ar": "arabic",
            "fa": "arabic", "ur": "arabic", "hi": "devanagari", "bn": "bengali", "th": "thai"}
_SCRIPT_LETTERS = {
    "cyrillic": re.compile("[\u0400-\u04ff]"), "han": re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]"),
    "hangul": re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]"), "arabic": re.compile("[\u0600-\u06ff]"),
    "devanagari": re.compile("[\u0900-\u097f]"), "bengali": re.compile("[\u0980-\u09ff]"),
    "thai": re.compile("[\u0e00-\u0e7f]")}
#: The word tables of ``threat_languages`` and the finding each gives.
_LANGUAGE_TABLES = ((LANGUAGES, "prompt_injection"), (AUTHORITY, "fake_authority"), (PERSONA, "role_hijack"))
_LOOKALIKE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})


#: Up to this many characters a text is gated rule by rule with one regex (``Rule.gate``);
#: past it, word by word with ``str.find`` (one pass each, shared by the rules).
SHORT = 2000
#: Texts up to this size are remembered with their findings (``_remembered``): every session
#: opened in the same repository scans the same AGENTS.md, and a file with a finding is then
#: scanned line by line, where the same ordinary lines come back again and again.
CACHE_CHARS = 64 * 1024


def scan(text: str, scope: str = "context") -> list[str]:
    """The ids of what ``text`` holds, in rule order, each once."""
    if len(text) <= CACHE_CHARS:
        return list(_remembered(text, scope))
    return list(dict.fromkeys(_scan(text, scope, 0)))


@functools.lru_cache(maxsize=256)
def _remembered(text: str, scope: str) -> tuple[str, ...]:
    # bounded: at most 256 texts of at most 64 K characters (16 M characters at worst)
    return tuple(dict.fromkeys(_scan(text, scope, 0)))


def _scan(text: str, scope: str, depth: int) -> list[str]:
    views = _Views(text)
    found: list[str] = []
    for rule in RULES:
        if rule.scope == "strict" and scope != "strict":
            continue
        view = views.text(rule.view)
        if rule.comments:
            if "<!--" in view:
                # match, not search: each comment is read once, from its own "<!--"
                if any(rule.pattern.match(comment) for comment in threat_text.comments(view)):
                    found.append(rule.id)
            continue
        if rule.view == "raw" or rule.whole:  # a character class, or a pattern across lines
            if not rule.words or any(word in view for word in rule.words):
                found.extend(_judged(rule, view))
            continue
        found.extend(_by_line(rule, views))
    for table, finding in _LANGUAGE_TABLES:
        if _near_in_any_language(views, table):
            found.append(finding)
    if not text.isascii() and _mixed_script(text):
        found.append("mixed_script")
    if depth < MAX_DEPTH:
        found.extend(_hidden(text, scope, depth))
    return found


def _by_line(rule: Rule, views: _Views) -> list[str]:
    """A line rule's findings over the lines that hold one of its words (a rule's own line,
    or two when it ``wraps``); the first blocking match ends the rule."""
    found: list[str] = []
    lines = views.lines(rule.view)
    for row in views.rows(rule.view, rule.words, rule.gate):
        line = lines[row]
        if rule.wraps and row + 1 < len(lines):
            line += "\n" + lines[row + 1]
        if rule.also and not any(word in line for word in rule.also):
            continue
        ids = _judged(rule, line)
        found.extend(ids)
        if rule.id in ids:
            break  # one blocking match is enough for this rule
    return found


class _Views:
    """The views of one text (``threat_text``) and their lines. A rule's regex runs only
    on the lines that hold one of its words: ``str.find`` over the text is ~100x cheaper than
    a regex pass, and most texts hold no word of most rules."""

    def __init__(self, text: str) -> None:
        if "\x00" in text:  # NUL is invisible too, and "ig\0nore" must read as "ignore"
            text = text.replace("\x00", "")
        #: ASCII text has one view, lower case, under both names: one set of rows serves both
        self.ascii = text.isascii()
        skeleton = threat_text.skeleton(text)
        self.texts = {"raw": text, "skeleton": skeleton,
                      "folded": skeleton if self.ascii else threat_text.folded(text)}
        self._lines: dict[str, list[str]] = {}
        self._starts: dict[str, list[int]] = {}
        self._rows: dict[tuple[str, str], frozenset[int]] = {}
        self._present: dict[tuple[str, str], bool] = {}
        self._scripts: dict[str, bool] = {}

    def text(self, name: str) -> str:
        return self.texts[name]

    def has_script(self, language: str) -> bool:
        """Whether the text holds a letter of the script ``language`` is written in (one
        character-class search per script, instead of a search per word of each language)."""
        script = _SCRIPTS.get(language)
        if script is None:
            return True
        if script not in self._scripts:
            self._scripts[script] = _SCRIPT_LETTERS[script].search(self.texts["folded"]) is not None
        return self._scripts[script]

    def lines(self, name: str) -> list[str]:
        if name not in self._lines:
            self._lines[name] = self.texts[name].split("\n")
        return self._lines[name]

    def rows(self, name: str, words: Sequence[str], gate: re.Pattern[str] | None = None) -> list[int]:
        """The line numbers that hold one of ``words``, in order (``gate``: the same words as
        one regex, used for short texts)."""
        if self.ascii and name == "folded":
            name = "skeleton"
        view = self.texts[name]
        if gate is not None and len(view) <= SHORT:
            if not gate.search(view):
                return []
            lines = self.lines(name)
            return [row for row, line in enumerate(lines) if len(lines) == 1 or gate.search(line)]
        seen = self._present
        present = []
        for word in words:
            key = (name, word)
            if key not in seen:  # rules share words: each is looked for once per view
                seen[key] = word in view
            if seen[key]:
                present.append(word)
        if not present:
            return []
        lines = self.lines(name)
        if len(lines) <= 8:  # a line or a decoded payload: look at each line
            return [row for row, line in enumerate(lines) if any(word in line for word in present)]
        out: set[int] = set()
        for word in present:
            key = (name, word)
            if key not in self._rows:
                self._rows[key] = self._find(name, word)
            out |= self._rows[key]
        return sorted(out)

    def _find(self, name: str, word: str) -> frozenset[int]:
        view = self.texts[name]
        at = view.find(word)
        if at < 0:
            return frozenset()
        if name not in self._starts:
            starts = [0]
            index = view.find("\n")
            while index >= 0:
                starts.append(index + 1)
                index = view.find("\n", index + 1)
            self._starts[name] = starts
        starts = self._starts[name]
        rows = set()
        while at >= 0:
            row = bisect.bisect_right(starts, at) - 1
            rows.add(row)
            # the rest of this line cannot add a row: go on from the next one
            at = view.find(word, starts[row + 1]) if row + 1 < len(starts) else -1
        return frozenset(rows)


def _judged(rule: Rule, view: str) -> list[str]:
    """The ids one rule's matches give, after the judgement the pattern alone cannot make."""
    ids: list[str] = []
    for match in rule.pattern.finditer(view):
        line_start = view.rfind("\n", 0, match.start()) + 1
        before = view[line_start:match.start()]
        if rule.id in _NEGATABLE and NEGATION.search(before):
            continue  # "never print ~/.ssh/id_rsa" forbids what it names
        if rule.id == "secret_exfiltration":
            line_end = view.find("\n", match.end())
            line = view[line_start:None if line_end < 0 else line_end]
            if HEADER_SECRET.search(line) and not rule.pattern.search(HEADER_SECRET.sub("", line)):
                ids.append("credential_in_header")
                continue
        line_end = view.find("\n", match.end())
        # the URL may follow the match ('bash -c "$(curl -fsSL https://...)"' matches up to curl)
        command = match.group(0) + view[match.end():None if line_end < 0 else line_end]
        if rule.id == "remote_script_execution" and _known_installer(command):
            ids.append("known_installer")
            continue
        if rule.id in _MENTIONED and before.count("`") % 2 == 1:
            line_end = view.find("\n", match.end())
            if "`" in view[match.end():None if line_end < 0 else line_end]:
                ids.append(_MENTIONED[rule.id])  # quoted in a code span: a mention
                continue
        ids.append(rule.id)
        break  # one high match is enough for this rule
    return ids


def _known_installer(command: str) -> bool:
    """Whether every URL the command fetches is an official installer's (``KNOWN_INSTALLERS``)."""
    urls = URL_HOST.findall(command)
    if not urls:
        return False
    for host, path in urls:
        host = host.lower().split("@")[-1].split(":")[0]
        bare = host.removeprefix("www.")
        if bare in KNOWN_INSTALLERS or any(bare.endswith("." + k) for k in KNOWN_INSTALLERS if "/" not in k):
            continue
        first = (path or "/").strip("/").split("/")[0].lower()
        if f"{bare}/{first}" in KNOWN_INSTALLERS:
            continue
        return False
    return True


def _near_in_any_language(views: _Views, table: Mapping[str, tuple[Any, ...]]) -> bool:
    """For one language of ``table`` (``view, anchors, *classes``): an anchor word (a verb,
    a priority claim) with a word of each class near it, on its own line (``threat_languages``)."""
    for language, (view_name, anchors, *classes) in table.items():
        if view_name == "folded" and (views.ascii or not views.has_script(language)):
            continue  # a language in another script cannot be in text without its letters
        view = views.texts[view_name]
        if not any(o in view for o in classes[0]):
            continue  # most texts hold no word of most languages: one cheap test each
        for anchor in anchors:
            start = view.find(anchor)
            while start >= 0:
                near = _window(view, start, len(anchor), language in _CLAUSE_LANGUAGES)
                if all(any(w in near for w in words) for words in classes):
                    return True
                start = view.find(anchor, start + 1)
    return False


def _window(view: str, start: int, length: int, clauses: bool) -> str:
    """``WINDOW`` characters either side of a word on its line; in CJK, its clause only: the
    object and qualifier of "忽略...规则" must be in the verb's clause, not the next sentence."""
    begin = max(view.rfind("\n", 0, start) + 1, start - WINDOW)
    newline = view.find("\n", start)
    end = min(len(view) if newline < 0 else newline, start + length + WINDOW)
    near = view[begin:end]
    if clauses:
        at = start - begin
        head = max((near.rfind(c, 0, at) for c in _CLAUSE_MARKS), default=-1)
        tails = [i for i in (near.find(c, at) for c in _CLAUSE_MARKS) if i >= 0]
        near = near[head + 1:min(tails) if tails else len(near)]
    return near


def _mixed_script(text: str) -> bool:
    """A word that mixes Latin letters with Cyrillic, Greek... look-alikes (TS #39 §5): a
    non-ASCII run that touches an ASCII letter and holds a letter of a look-alike script."""
    for match in threat_text.NON_ASCII.finditer(text):
        start, end = match.span()
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if not ((before.isascii() and before.isalpha()) or (after.isascii() and after.isalpha())):
            continue
        if any(unicodedata.name(c, "?").split(" ")[0] in _LOOKALIKE_SCRIPTS for c in match.group(0)):
            return True
    return False


def _hidden(text: str, scope: str, depth: int) -> list[str]:
    """Findings in what ``text`` hides: decoded payloads scanned like text of their own."""
    found: list[str] = []
    for kind, inner in threat_text.decoded(text):
        ids = [i for i in _scan(inner, scope, depth + 1) if severity(i) == HIGH]
        if not ids:
            continue
        found.extend(ids)
        found.append({"comment": "hidden_comment_instruction", "tags": "invisible_characters",
                      "entities": "encoded_payload"}.get(kind, "encoded_payload"))
    return found


@hookimpl(trylast=True)
def hermes_context_scan(text: str, source: str, scope: str) -> Sequence[str] | None:
    return scan(text, scope) or None


@hookimpl
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.scan_cli import scan_command  # click's command: only for the CLI

    cli.add_command(scan_command)
