"""Built-in plugin ``threat_scan``: the prompt-injection scan (spec §9.4, §12; issue 31).

Text from a cloned repository's AGENTS.md, from memory the model wrote, or from SOUL.md goes
into the system prompt verbatim, so it is the easiest place to smuggle instructions in. This
scanner answers ``hermes_context_scan`` with the ids of what it found, by family (see
``threat_rules``): instruction override (in 19 languages), fake authority, fetch-and-execute,
credential and environment exfiltration, dangerous link schemes, tool-call forgery and hidden
text. It matches normalised views of the text, not the raw bytes (``threat_text``): NFKC,
confusable skeletons (Unicode TS #39), invisible and bidi controls removed, and it decodes and
scans what hides inside (base64, hex, percent-encoding, HTML entities and comments, tag
characters). Add a scanner of your own through the same hook (findings are united), or block
this one (``plugins.disabled: [threat_scan]``) to use only yours.

Scope ``"context"`` (context files, SOUL.md) leaves out the strict patterns, which a project's
own docs legitimately contain (``cat ~/.ssh/id_rsa.pub`` in a setup guide); scope
``"strict"`` (memory entries, which the model itself writes) uses every pattern.

Judgement: the ids in ``hermes_core.injection.LOW_SEVERITY`` name shapes that ordinary docs
contain too - an override scoped to a topic ("ignore the previous rules about line length"),
an HTML comment that addresses editors ("you must keep this list short"), the joiners emoji and
Indic/Persian text need (U+200C/U+200D), a credential sent in a request header to the API it
belongs to, an official installer piped to a shell, tool-call markup quoted in a code span, a
word that mixes Latin with Cyrillic or Greek letters. ``hermes_core.injection`` warns about
those and blocks only the offending lines of the rest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from hermes_core import hookimpl
from hermes_core.injection import HIGH, severity
from hermes_plugins import threat_text
from hermes_plugins.threat_rules import (
    HEADER_SECRET,
    KNOWN_INSTALLERS,
    LANGUAGES,
    NEGATION,
    RULES,
    URL_HOST,
    WINDOW,
    Rule,
)

#: Decoded text is decoded again once (base64 inside an HTML comment, entities in base64).
MAX_DEPTH = 2
#: Rule ids whose match inside an inline code span (`...`) is a mention, not markup.
_MENTIONED = {"chat_template_token": "tool_markup_mention", "tool_call_forgery": "tool_markup_mention"}
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_LOOKALIKE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})


def scan(text: str, scope: str = "context") -> list[str]:
    """The ids of what ``text`` holds, in rule order, each once."""
    return list(dict.fromkeys(_scan(text, scope, 0)))


def _scan(text: str, scope: str, depth: int) -> list[str]:
    views = {"raw": text, "folded": threat_text.folded(text), "skeleton": threat_text.skeleton(text)}
    found: list[str] = []
    for rule in RULES:
        if rule.scope == "strict" and scope != "strict":
            continue
        view = views[rule.view]
        if rule.words and not any(word in view for word in rule.words):
            continue
        found.extend(_judged(rule, view))
    if _override_in_any_language(views):
        found.append("prompt_injection")
    if not text.isascii() and _mixed_script(text):
        found.append("mixed_script")
    if depth < MAX_DEPTH:
        found.extend(_hidden(text, scope, depth))
    return found


def _judged(rule: Rule, view: str) -> list[str]:
    """The ids one rule's matches give, after the judgement the pattern alone cannot make."""
    ids: list[str] = []
    for match in rule.pattern.finditer(view):
        line_start = view.rfind("\n", 0, match.start()) + 1
        before = view[line_start:match.start()]
        if rule.id in ("credential_access", "credential_exfiltration") and NEGATION.search(before):
            continue  # "never print ~/.ssh/id_rsa" forbids what it names
        if rule.id == "secret_exfiltration":
            line_end = view.find("\n", match.end())
            line = view[line_start:None if line_end < 0 else line_end]
            if HEADER_SECRET.search(line) and not rule.pattern.search(HEADER_SECRET.sub("", line)):
                ids.append("credential_in_header")
                continue
        if rule.id == "remote_script_execution" and _known_installer(match.group(0)):
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


def _override_in_any_language(views: dict[str, str]) -> bool:
    """A verb of ``LANGUAGES`` with an object and a qualifier of the same language near it, on
    its own line (every pattern reads one line)."""
    for view_name, verbs, objects, qualifiers in LANGUAGES.values():
        view = views[view_name]
        for verb in verbs:
            start = view.find(verb)
            while start >= 0:
                begin = max(view.rfind("\n", 0, start) + 1, start - WINDOW)
                newline = view.find("\n", start)
                end = min(len(view) if newline < 0 else newline, start + len(verb) + WINDOW)
                near = view[begin:end]
                if any(o in near for o in objects) and any(q in near for q in qualifiers):
                    return True
                start = view.find(verb, start + 1)
    return False


def _mixed_script(text: str) -> bool:
    """A word that mixes Latin letters with Cyrillic, Greek... look-alikes (TS #39 §5)."""
    for word in _LETTERS.findall(text):
        if word.isascii():
            continue
        scripts = {unicodedata.name(c, "?").split(" ")[0] for c in word}
        if "LATIN" in scripts and scripts & _LOOKALIKE_SCRIPTS:
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
