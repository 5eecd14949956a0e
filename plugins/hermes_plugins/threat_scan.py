"""Built-in plugin ``threat_scan``: a baseline prompt-injection scanner (spec §9.4, §12).

Text from a cloned repository's AGENTS.md, from memory the model wrote, or from SOUL.md goes
into the system prompt verbatim, so it is the easiest place to smuggle instructions in. This
scanner knows a small set of well-known shapes - instruction overrides, hidden HTML, invisible
characters, secret exfiltration - and answers ``hermes_context_scan`` with the ids it found.
It is a baseline, not a library: add a scanner of your own through the same hook (findings
are united), or block this one (``plugins.disabled: [threat_scan]``) to use only yours.

Scope ``"context"`` (context files, SOUL.md) leaves out the strict patterns, which a project's
own docs legitimately contain (``cat ~/.ssh/id_rsa.pub`` in a setup guide); scope
``"strict"`` (memory entries, which the model itself writes) uses every pattern.

Judgement: the ids in ``LOW_SEVERITY`` name shapes that ordinary docs contain too - an
override scoped to a topic ("ignore the previous rules about line length"), an HTML comment
that addresses editors ("you must keep this list short"), the joiners emoji and Indic/Persian
text need (U+200C/U+200D), a credential sent in a request header to the API it belongs to.
``hermes_core.injection`` warns about those and blocks only the offending lines of the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_core import hookimpl

_I = re.IGNORECASE

#: Followed by one of these, an override names what it is about: a project's own rule, not an
#: attack on the agent ("ignore the previous rules about line length").
_SCOPED = r"(?=\s+(?:about|on|regarding|concerning|when|around|that\s+(?:say|concern)))"
_UNSCOPED = r"(?!\s+(?:about|on|regarding|concerning|when|around|that\s+(?:say|concern)))"
_OVERRIDE = (
    r"\b(?:ignore|disregard|forget|skip)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|preceding|original)\s+"
    r"(?:instructions?|prompts?|rules|directions|guidelines|context)\b"
)
_RULES = (
    r"\b(?:disregard|ignore|bypass|override|forget)\s+(?:all\s+)?(?:of\s+)?(?:your|the|any|all)\s+"
    r"(?:rules|guidelines|instructions|restrictions|guardrails|safety\s+policies)\b"
)

#: id -> pattern, for every scope.
CONTEXT_PATTERNS: dict[str, re.Pattern[str]] = {
    "prompt_injection": re.compile(_OVERRIDE + _UNSCOPED, _I),
    "rule_override": re.compile(_RULES + _UNSCOPED, _I),
    "scoped_override": re.compile(f"(?:{_OVERRIDE}|{_RULES}){_SCOPED}", _I),
    "system_override": re.compile(
        r"\bsystem\s+prompt\s+override\b|\b(?:developer|god|jailbreak)\s+mode\s+"
        r"(?:enabled|activated|on)\b|\boverride\s+(?:mode\s+)?activated\b", _I),
    "role_hijack": re.compile(
        r"\b(?:act|behave|pretend|respond)\s+as\s+(?:if|though)\s+you\s+(?:have|had|were)\s+"
        r"(?:no|without)\s+(?:restrictions|rules|limits|limitations|guidelines|filters)\b"
        r"|\byou\s+are\s+now\s+(?:DAN|an?\s+unrestricted|jailbroken|free\s+of)\b", _I),
    "hidden_comment_instruction": re.compile(
        r"<!--(?:(?!-->).){0,400}?\b(?:ignore|disregard|override|bypass|system\s+prompt|"
        r"reveal|exfiltrat\w*|api\s+keys?|secrets?|passwords?)\b(?:(?!-->).){0,400}?-->",
        _I | re.DOTALL),
    "hidden_comment_note": re.compile(
        r"<!--(?:(?!-->).){0,400}?\b(?:you\s+must|instructions?)\b(?:(?!-->).){0,400}?-->",
        _I | re.DOTALL),
    "hidden_html": re.compile(
        r"<[a-z][^>]*\bstyle\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|"
        r"font-size\s*:\s*0)", _I),
    "invisible_characters": re.compile("[\u200b\u2060\u2062\u2063\u2064\ufeff\u202a-\u202e\u2066-\u2069]"),
    "joiner_characters": re.compile("[\u200c\u200d]"),
    "secret_exfiltration": re.compile(
        r"\b(?:curl|wget|fetch|invoke-webrequest|iwr|nc|ncat)\b[^\n]{0,200}"
        r"\$\{?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b", _I),
    "secret_file_read": re.compile(
        r"\b(?:cat|type|less|more|head|tail|base64|xxd)\s+(?:-\S+\s+)*[\"']?(?:~|\$HOME)?[\w./-]*"
        r"(?:/|\b)\.env\b", _I),
    "execute_translation": re.compile(
        r"\btranslate\s+(?:this|that|it|the\s+following)\s+(?:in)?to\s+(?:bash|shell|sh|python|"
        r"powershell|code|a\s+command)\s+and\s+(?:execute|run)\b", _I),
}

#: id -> pattern, added for scope ``"strict"`` (memory entries).
STRICT_PATTERNS: dict[str, re.Pattern[str]] = {
    "ssh_key_access": re.compile(r"~?/?\.ssh/(?:id_[a-z0-9]+|authorized_keys|config)\b", _I),
    "persistence": re.compile(
        r"\bcrontab\s+-[a-z]*e?\b|\b(?:systemctl\s+enable|launchctl\s+load)\b|"
        r">>\s*~?/?\.(?:bashrc|zshrc|profile|bash_profile)\b", _I),
    "remote_script_execution": re.compile(
        r"\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|"
        r"\bbase64\s+(?:-d|--decode)\b[^\n|]{0,100}\|\s*(?:ba|z)?sh\b", _I),
    "credential_files": re.compile(
        r"/etc/(?:passwd|shadow)\b|\.aws/credentials\b|\.netrc\b|\.git-credentials\b", _I),
}


#: id -> words of which a match must contain at least one (lower case). A regex runs only on
#: text that holds one of its words: most text holds none, and a substring test is ~100x
#: cheaper than a case-insensitive regex pass (the scan runs on every context file).
KEYWORDS: dict[str, tuple[str, ...]] = {
    "prompt_injection": ("ignore", "disregard", "forget", "skip"),
    "rule_override": ("disregard", "ignore", "bypass", "override", "forget"),
    "system_override": ("system", "mode", "override"),
    "role_hijack": ("act", "behave", "pretend", "respond", "you are now"),
    "hidden_comment_instruction": ("<!--",),
    "hidden_comment_note": ("<!--",),
    "scoped_override": ("ignore", "disregard", "forget", "skip", "bypass", "override"),
    "hidden_html": ("style",),
    "secret_exfiltration": ("curl", "wget", "fetch", "webrequest", "iwr", "nc"),
    "secret_file_read": (".env",),
    "execute_translation": ("translate",),
    "ssh_key_access": (".ssh/",),
    "persistence": ("crontab", "systemctl", "launchctl", "rc", "profile"),
    "remote_script_execution": ("curl", "wget", "base64"),
    "credential_files": ("/etc/", ".aws", ".netrc", ".git-credentials"),
}


#: Findings that ordinary docs produce too: warned about, never blocked (see the docstring).
LOW_SEVERITY = frozenset({"scoped_override", "hidden_comment_note", "joiner_characters",
                          "credential_in_header"})

#: A credential sent in a request header (``curl -H "Authorization: Bearer $API_TOKEN"``) goes
#: to the API it is for; a secret in a URL or a body is what exfiltration looks like.
_HEADER_SECRET = re.compile(
    r"(?:-H|--header)[\s=]+[\"']?[\w-]+:\s*(?:Bearer\s+|Basic\s+|token\s+)?"
    r"\$\{?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b\}?", _I)


def scan(text: str, scope: str = "context") -> list[str]:
    """The ids of the patterns ``text`` matches, in table order."""
    lower = text.lower()
    table = list(CONTEXT_PATTERNS.items())
    if scope == "strict":
        table += STRICT_PATTERNS.items()
    found = [
        name for name, pattern in table
        if (name not in KEYWORDS or any(word in lower for word in KEYWORDS[name]))
        and pattern.search(text)
    ]
    if "secret_exfiltration" in found and _HEADER_SECRET.search(text):
        without = _HEADER_SECRET.sub("", text)
        if not CONTEXT_PATTERNS["secret_exfiltration"].search(without):
            found[found.index("secret_exfiltration")] = "credential_in_header"
    return found


@hookimpl(trylast=True)
def hermes_context_scan(text: str, source: str, scope: str) -> Sequence[str] | None:
    return scan(text, scope) or None
