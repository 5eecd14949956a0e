"""Secret redaction: one regex, one pass over each text, for everything we persist or show.

A summary is persisted and re-sent on every later request, so a key that leaks into it leaks for
good; the archive, spill files and the CLI's output outlive the session too. Every text bound for
the summariser, the archive (``sessions.db``, Redis), a spill file, ``hermes-ctx history`` /
``cache-report`` / ``compress --json`` output and our own log events goes through this module.

Two ways to call it:

* ``redact(text)`` - the old name, used by the compressor: every secret becomes ``[REDACTED]``
  (a vendor key keeps its prefix: ``sk-proj-[REDACTED]``; a PEM block becomes
  ``[REDACTED PRIVATE KEY]``).
* ``redact_text(text)`` / ``Redactor(key).redact(text)`` - a *stable per-secret placeholder*:
  ``[REDACTED:aws_secret#3f9a1c]``, the family and the first 6 hex digits of an HMAC-SHA256 of the
  secret under a random key held in memory only (one per ``Redactor``: a Session makes one; the
  module-level ``redact_text`` uses one per process). The same secret gets the same placeholder
  wherever it appears, so a model can still tell two keys apart, and nobody holding the stored
  text can brute-force a short password back from its placeholder (the key was never written).

Families (``FAMILIES``; detect-secrets' plugin list at least): PEM private keys (RSA, EC, DSA,
OpenSSH, PGP, PuTTY ``Private-Lines``) - also as one JSON string with ``\\n`` escapes, as in a GCP
service-account file, whose ``private_key_id`` is masked too; vendor-prefixed keys (OpenAI
``sk-``, Anthropic ``sk-ant-``, GitHub ``ghp_``/``github_pat_``..., GitLab ``glpat-``/``gldt-``...,
Slack ``xox?-``, Google ``AIza``, AWS ``AKIA``/``ASIA`` key ids, Hugging Face, npm, PyPI,
Stripe ``sk_live_``/``rk_``/``whsec_``, Square ``sq0csp-``/``sq0atp-``, Artifactory ``AKC``,
Groq, xAI, Doppler ``dp.pt.``, Databricks ``dapi``, Notion, Postman ``PMAK-``, Grafana, Sentry,
Vault ``hvs.``/``hvb.``, DigitalOcean, Atlassian ``ATATT3``, Terraform Cloud ``.atlasv1.``, Mapbox
``sk.``, Fly.io ``fm2_``/``fo1_``, Dynatrace, Harness ...); AWS session tokens by their fixed
opening (``IQoJb3JpZ2lu``, ``FwoGZXIvYXdz``: CLI table and text output name no key); AWS secret
access keys next to their key id or under an AWS-like name; Azure storage ``AccountKey=``/SAS
signatures and Azure AD client secrets (``...8Q~...``); JWTs; Slack and Discord webhooks;
SendGrid, Twilio, Discord, Telegram bot tokens (also in ``/bot<token>/`` URLs); Mailchimp keys;
Softlayer API URLs; a base64 PEM private key (kubeconfig ``client-key-data``); credentials in URLs
(``scheme://user:pw@``, ``scheme://<token>@``), ``curl -u user:pw`` and token query parameters;
``Authorization:`` headers and ``Bearer`` tokens; ``.netrc`` passwords; ``.pgpass`` lines where
the context names the file; ``az storage account keys list`` output; password flags of known
commands (``mysql -pVALUE``, ``docker login -p``, ``sshpass -p``, ``redis-cli -a``, ``htpasswd
-b``, ``keytool -storepass``, ``openssl pass:``, ``sqlcmd|osql -P``, ``mongosh -p``, ``7z -p``,
``zip -P``, ``smbclient -U user%pw``); and keyword assignments (``.env`` lines,
``NAME=value``, ``"name": "value"``, YAML ``name: value``, Go ``:=``, PHP ``=>``, ``--password
value``, a value alone on the next indented line) whose name ends in KEY/TOKEN/SECRET/PASSWORD/PASS/PWD/PAT/CREDENTIAL/AUTH
or a camel-case ``SecretAccessKey``/``SessionToken``/``ClientSecret`` (covers detect-secrets'
keyword, Cloudant, IBM Cloud IAM / COS HMAC and Softlayer keyword forms). The formats were
checked with an independent corpus (``tests/support/secret_corpus.py``).

Values that are code, not secrets, stay: ``os.getenv('OPENAI_API_KEY')``, ``api_key=settings.api_key``,
``token = os.environ["TOKEN"]``, ``password = get_password()``, ``AUTH_TOKEN=${AUTH_TOKEN}``,
``secret_key: str``, ``thread_key = tool_id`` and ``session_key=session_key`` (a variable after
code's ``=``; a ``.env`` line's ``DB_PASS=hunter_two`` stays a secret), ``e.key === "D"``,
``AUTH="$(gh auth token)"``; so do ``max_tokens=``, ``author=`` and ``key=len`` (the secret word
must end the name) and a git SHA next to an AWS key id (an AWS secret is mixed-case); so do
documented placeholders (``<your-token>``, ``your_api_key``, ``...``, ``xxxx``: ``_not_a_value``).

One pass: every family is an alternative of one compiled regex, and ``re.sub`` walks each text
once - over the lines that can hold a match. A cheap prefilter comes first (``windows``): every
match holds an anchor (a secret word, a vendor prefix, ``://``, ``eyJ``, ``PRIVATE`` ...), and a
``str.find`` per anchor (C speed) finds the lines that hold one; the regex runs on those lines
only (a PEM block, a PuTTY key and the 300 characters around an AWS key id are kept whole).
Alternatives that would cost on every text (an AWS secret is any 40-character base64 run, a
Mailchimp key any 32 hex digits, a command's name ...) join the regex only when their anchor is
in the text (``redaction_patterns.py`` holds the families and their anchors). Values cross a line
break only inside a PEM/PuTTY block and after a name that ends its line (``password:\n  value``).

Measured (``tests/benchmarks/bench_redaction.py``, the real sessions' text, 3.2 MB, loaded
runs): 73-154 ms/MB, 0.32x-0.38x the family-by-family passes this module used before, timed in
the same run. detect-secrets 1.5.0 took 5,180 ms/MB with its regex plugins alone and reports
secrets per line, not spans to mask, so it is not used. Figures: docs/hostile-input.md.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from hermes_core.redaction_patterns import (
    ANCHOR_OPTIONAL,
    ANCHORS,
    AWS_ID_SRC,
    AWS_SECRET_SRC,
    CASED_ANCHORS,
    COMMAND_GROUPS,
    COMMON,
    GROUP_FAMILY,
    OPTIONAL,
    PGPASS_ENTRY_SRC,
    PREFIX_FAMILIES,
    VENDOR_SRC,
)

MASK = "[REDACTED]"
#: Every placeholder starts with this (``[REDACTED]``, ``[REDACTED:family#hash]``,
#: ``[REDACTED PRIVATE KEY]``): a value that already is one is never masked again.
MASK_PREFIX = "[REDACTED"
PEM_MASK = "[REDACTED PRIVATE KEY]"
#: A keyed placeholder (``Redactor``): ``[REDACTED:<family>#<hash>]``.
KEYED_MASK = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+#[0-9a-f]+\]")


def plain_masks(text: str) -> str:
    """``text`` with every keyed placeholder written as the plain ``MASK``: what two texts
    masked by different redactors (the archive's, ``redact``) have in common."""
    return KEYED_MASK.sub(MASK, text) if "[REDACTED:" in text else text
#: Hex digits of the keyed hash in a placeholder (24 bits: two secrets of one session collide
#: with odds of about n^2 / 2^25, ~3e-4 for 100 secrets).
HASH_DIGITS = 6
AWS_PAIR_DISTANCE = 300

# A pure memo: a compiled pattern is immutable and a function of the family set alone.
_COMPILED: dict[frozenset[str], re.Pattern[str]] = {}
_COMPILED_LOCK = threading.Lock()


def _pattern(extra: frozenset[str]) -> re.Pattern[str]:
    """The one regex for a text: the common alternatives and the optional ones it may hold
    (compiled once per combination: at most 64, a few in practice)."""
    pattern = _COMPILED.get(extra)
    if pattern is None:
        with _COMPILED_LOCK:
            pattern = _COMPILED.get(extra)
            if pattern is None:
                if len(_COMPILED) >= 64:  # a bound: a combination seen again is compiled again
                    _COMPILED.clear()
                sources = (*COMMON, *(src for name, src in OPTIONAL.items() if name in extra))
                pattern = _COMPILED[extra] = re.compile("|".join(sources))
    return pattern


_ALL_OPTIONAL = frozenset(OPTIONAL)
_ONE = _pattern(_ALL_OPTIONAL)
#: A vendor key on its own (to name the family of an assignment's value).
_VENDOR = re.compile(VENDOR_SRC)
_AWS_KEY_ID = re.compile(AWS_ID_SRC)
#: An AWS secret access key candidate: masked apart, before the one regex (``_mask_aws``), because
#: a 40-character run that is not a secret (no key id near it) would otherwise swallow the start of
#: a secret that overlaps it (``0…0Authorization: <token>``).
_AWS_SECRET = re.compile(AWS_SECRET_SRC)
_DISCORD_SHAPE = re.compile(r"\.[A-Za-z0-9_\-]{6}\.")

#: Every family a placeholder can name (``[REDACTED:<family>#<hash>]``).
FAMILIES: tuple[str, ...] = tuple(sorted(
    {f for _, f in PREFIX_FAMILIES} | set(GROUP_FAMILY.values()) | {"password", "token", "secret", "key"}
))

#: A value that is code reading a secret, not the secret: an env reference, a command
#: substitution (``$(grep ...)``, a backtick), a dotted name, a call or a subscript, or a type annotation.
_CODE_VALUE = re.compile(r"\$\{?[A-Za-z_]\w*\}?$|\$\(|`|[A-Za-z_]+(?:\.[A-Za-z_]+)+$|[A-Za-z_][\w.]*[(\[]")
#: A flag's value the shell expands (``--token "$API_TOKEN"``, ``--password $(pass show db)``).
_ENV_VALUE = re.compile(r"\$\{?[A-Za-z_]\w*\}?$|\$\(")
_TYPE_NAMES = frozenset({"str", "bytes", "int", "Optional", "SecretStr", "SecretBytes", "Any", "None"})


def _is_code(value: str) -> bool:
    return value in _TYPE_NAMES or _CODE_VALUE.match(value) is not None


def _prefix_family(prefix: str) -> str:
    for start, family in PREFIX_FAMILIES:
        if prefix.startswith(start):
            return family
    return "key"


def _keyword_family(name: str, value: str) -> str:
    """The family of an assignment's value: a vendor key's when it is one, else by the name."""
    if "PRIVATE KEY" in value:  # a GCP service account's "private_key": "-----BEGIN ..."
        return "private_key"
    vendor = _VENDOR.fullmatch(value) or _AWS_KEY_ID.fullmatch(value)
    if vendor is not None:
        return _prefix_family(value)
    lowered = name.lower()
    if "aws" in lowered or lowered.endswith("secretaccesskey"):
        return "aws_secret"
    for word, family in (("pass", "password"), ("pw", "password"), ("token", "token"), ("auth", "token"),
                         ("secret", "secret"), ("credential", "secret"), ("pat", "token")):
        if word in lowered:
            return family
    return "key"


def _private_b64(text: str) -> bool:
    """Whether base64 ``text`` opens with a PEM private key's ``-----BEGIN ... PRIVATE KEY``."""
    head = text[:64]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4])
    except ValueError:
        return False


def _placeholder_value(value: str) -> bool:
    """``curl -u USER:TOKEN`` in docs, ``-u $USER:$PASS``, ``-u 1000:1000`` (a uid:gid)."""
    return value.isdigit() or value.startswith(("$", "<", "{")) or re.fullmatch(r"[A-Z_]+", value) is not None


#: A documented placeholder shape in docs and config samples, not a value: ``<your-token>``,
#: ``your_api_key`` / ``YOUR_TOKEN_HERE``, ``...``, all-``x`` or all-``*`` (after a vendor prefix
#: too: ``ghp_xxx...``, ``gho_****``). A word that could be a real password (``changeme``,
#: ``anything``, ``test-token``) is not a shape: it stays masked.
_PLACEHOLDER_SHAPE = re.compile(
    r"<[^<>\n]+>|(?i:your[_\-][a-z0-9_\-]+)|(?:\.{3,}|\u2026)|(?:[A-Za-z0-9]{1,8}[_\-])?(?:[xX]{3,}|\*{3,})[xX*.\u2026]*"
)
#: ``fetch``'s ``credentials`` option (``credentials: 'include'``): a mode, not a credential.
_FETCH_MODES = frozenset({"include", "same-origin", "omit"})
#: Prose after a one-word value (``- github-auth: GitHub auth setup: ...``): a description.
_PROSE_AFTER = re.compile(r" +[A-Za-z][A-Za-z,.:;'-]* +[A-Za-z]")


def _not_a_value(name: str, value: str, listing: bool, text: str, end: int) -> bool:
    """A keyword value that is not a secret: a placeholder shape (``_PLACEHOLDER_SHAPE``), a
    1-3 character value under a name ending in KEY or AUTH (``next_key: 1``, ``AUTH="gh"``: a
    lookup key, an auth mode - a key or a token is longer), ``credentials: 'include'``, or a
    one-word value that prose follows on its line in a ``name: value`` listing (a description)."""
    lowered = name.lower()
    return (_PLACEHOLDER_SHAPE.fullmatch(value) is not None
            or (len(value) <= 3 and lowered.endswith(("key", "auth")))
            or (lowered.endswith("credentials") and value in _FETCH_MODES)
            or (listing and value.isalpha() and _PROSE_AFTER.match(text, end) is not None))


#: A value that names the password instead of holding it: ``PASSWORD``, ``%DB_PASS%``, ``{{ pw }}``.
_NAMED_VALUE = re.compile(r"[A-Z_]+|%\w+%|\{\{.*\}\}")


def _htpasswd_batch(m: re.Match[str]) -> bool:
    """``htpasswd -b file user password`` (``-nb user password``): the password is on the command
    line only with ``-b``, and it is the third argument (the second with ``-n``)."""
    letters = "".join(t[1:] for t in m.group("ht_f").split() if t.startswith("-"))
    words = m.string[m.end("ht_f"): m.start("ht_v")].strip("\\\"'").split()
    return "b" in letters and len(words) == (1 if "n" in letters else 2)


#: A URL's user name (RFC 3986 userinfo allows no ``[ ] ^ \\ ( )``): ``https://[^:]*:\\(...@`` is a regex.
_USERINFO = re.compile(r"[^\[\]^\\()]*")
_LINE_BREAK = re.compile(r"\r?\n|(?:\\+r)?\\+n")
_PGPASS_ENTRY = re.compile(PGPASS_ENTRY_SRC)


def _pgpass(text: str, at: int, end: int) -> bool:
    """Whether the ``.pgpass``-shaped line at ``at`` is one: its line names the file (``echo ...
    >> ~/.pgpass``) or follows, through other entries, comments and blank lines, one that does
    (``cat ~/.pgpass``, a heredoc into it, ``PGPASSFILE``)."""
    lines = _LINE_BREAK.split(text[max(0, at - 4000): at])
    stop = _LINE_BREAK.search(text, end)
    if "pgpass" in (lines[-1] + text[end: len(text) if stop is None else stop.start()]).lower():
        return True
    for line in reversed(lines[-100:-1]):
        if "pgpass" in line.lower():
            return True
        line = line.strip()
        if line and not line.startswith("#") and _PGPASS_ENTRY.match(line) is None:
            return False
    return False


def _netrc(text: str, at: int, end: int) -> bool:
    """Whether ``password`` at ``at`` is a ``.netrc`` entry's: after ``login <name>`` on its line,
    or alone on its line with its value (``password`` is lower case in a ``.netrc``)."""
    start = text.rfind("\n", 0, at) + 1
    if " login " in f" {text[start:at]}":
        return True
    stop = text.find("\n", end)
    return text.startswith("password", at) and _opens_line(text, at) and not text[end:None if stop < 0 else stop].strip()


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _name_start(text: str, at: int) -> int:
    """Where the name whose secret word starts at ``at`` begins (``MY_API_KEY`` for ``KEY``)."""
    while at > 0 and text[at - 1] in _NAME_CHARS:
        at -= 1
    # an escaped line break (``\\npassword``: a file inside a JSON string) is not part of the name
    return at + 1 if at > 0 and text[at - 1] == "\\" and text[at] in "nrt" else at


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


#: A quoted value that the shell expands: ``"$(gh auth token)"``, ``"${TOKEN}"``, ``"$TOKEN"``.
_SHELL_VALUE = re.compile(r"\$[({A-Za-z_]")
_VARIABLE = re.compile(r"[a-z]+(?:_[a-z]+)+|[a-z]+(?:[A-Z][a-z]+)+|nil|null|none|true|false|undefined")


def _is_code_value(m: re.Match[str], group: str, name: str, value: str) -> bool:
    """An unquoted value that is code: ``_is_code``, or a snake- or camel-case name (no digit)
    or literal after code's spaced ``=``, a lower-case keyword argument (``session_key=session_key``)
    or a ``name: value`` pair (``thread_key: tool_id,``). A ``.env`` line's value stays a secret:
    ``DB_PASS=hunter_two``."""
    if _is_code(value):
        return True
    code_like = group == "ym" or (group == "as" and (" " in m.group("as_e") or not name.isupper()))
    return code_like and _VARIABLE.fullmatch(value.rstrip(",;")) is not None


def _looks_secret(value: str) -> bool:
    """For ``name: value`` inside a line (``{ _csrf_token: csrfToken }``, ``secret_access_key:
    0f1e...``): a value of 8+ characters with a digit that is not an identifier or code."""
    value = value.rstrip(",;)]}")
    if len(value) < 8 or not any(c.isdigit() for c in value) or _is_code(value):
        return False
    # an identifier is code (``user_id2``), unless it reads as a random key: 16+ letters and
    # digits of both cases, no underscore (``f2sOAyjOHK0hEkOR...``)
    return _IDENTIFIER.fullmatch(value) is None or (
        len(value) >= 16 and "_" not in value and not value.islower() and not value.isupper())


def _opens_line(text: str, at: int) -> bool:
    """Whether only blanks and a list dash stand between the line's start and ``at`` (an
    escaped ``\\n`` starts a line too: a file inside a JSON string)."""
    start = text.rfind("\n", 0, at) + 1
    escaped = text.rfind("\\n", start, at)
    line = text[start if escaped < 0 else escaped + 2: at].strip(" \t")
    return line in ("", "-") or (line.startswith("-") and not line[1:].strip(" \t"))


# --- the prefilter ----------------------------------------------------------------------------

def _trie(words: list[str]) -> str:
    """One regex for ``words`` whose every alternative opens with a literal (grouped by first
    character): sre then skips, in C, every position whose character opens no word."""
    by_first: dict[str, list[str]] = {}
    for word in sorted(set(words)):
        by_first.setdefault(word[0], []).append(word[1:])
    out = []
    for first, rests in sorted(by_first.items()):
        if "" in rests:  # a shorter anchor finds every line a longer one would
            out.append(re.escape(first))
        elif len(rests) == 1:
            out.append(re.escape(first) + re.escape(rests[0]))
        else:
            out.append(re.escape(first) + "(?:" + _trie(rests) + ")")
    return "|".join(out)


#: Every anchor, as one search over the lower-cased text: ~3x faster than a ``str.find``
#: per anchor, both on a one-line text with none and per MB of session text.
_ANCHOR_RE = re.compile(_trie(list(ANCHORS)))
_NO_WINDOWS: tuple[list[tuple[int, int]], frozenset[str]] = ([], frozenset())


def windows(text: str) -> tuple[list[tuple[int, int]], frozenset[str]]:
    """The spans of ``text`` that ``_ONE`` must see, sorted and disjoint, each from a line's
    start to a line's end: every line holding an anchor (no form but a PEM block crosses a
    line break); from a PEM ``BEGIN`` line to its ``END`` line; 300 characters around an AWS
    key id (where its secret may stand). Also the optional alternatives (``OPTIONAL``) whose
    anchor was seen: only they join the regex.

    Most texts redacted are short and hold no anchor (a tool's one-line summary, an error
    line): one regex search rules them out; a text without a line break is one window."""
    lowered = text.lower()
    first = _ANCHOR_RE.search(lowered)
    cased = [a for a in CASED_ANCHORS if a in text]
    discord = text.count(".") >= 2 and _DISCORD_SHAPE.search(text) is not None
    if first is None and not cased and not discord:
        return _NO_WINDOWS
    size = len(text)
    if "\n" not in text:
        return [(0, size)], _optional(lowered, cased, discord)
    raw: list[tuple[int, int]] = []

    def line_span(lo: int, hi: int) -> tuple[int, int]:
        end = text.find("\n", hi)
        return text.rfind("\n", 0, lo) + 1, size if end < 0 else end

    if first is not None:
        covered = -1
        for m in _ANCHOR_RE.finditer(lowered, first.start()):
            if m.start() > covered:
                start, end = line_span(m.start(), m.start())
                while end < size and _opens_value(text, max(start, text.rfind("\n", start, end) + 1), end):
                    end = line_span(end + 1, end + 1)[1]  # the value may stand on the next line
                raw.append((start, end))
                covered = end
    for anchor in cased:
        i = text.find(anchor)
        while i >= 0:
            raw.append(line_span(i, i))
            i = text.find(anchor, raw[-1][1])
    raw.extend(_key_blocks(text, lowered, line_span))
    if discord:
        raw.extend(line_span(m.start(), m.end()) for m in _DISCORD_SHAPE.finditer(text))
    # Every optional anchor stands on a line the anchors above picked: look for them there only.
    merged = _merged(raw)
    probe = lowered[merged[0][0]:merged[0][1]] if len(merged) == 1 else "\n".join(lowered[a:b] for a, b in merged)
    extra = _optional(probe, cased, discord)
    if "aws" in extra:  # where an AWS secret may stand: 300 characters around its key id
        raw.extend(line_span(max(0, m.start() - AWS_PAIR_DISTANCE), min(size, m.end() + AWS_PAIR_DISTANCE))
                   for m in _AWS_KEY_ID.finditer(text))
    for name, anchor, before, after in (("pgpass", "pgpass", 0, 4000), ("azure_keys", "keyname", 400, 400)):
        i = lowered.find(anchor) if name in extra else -1  # a .pgpass file's lines, an az key's JSON
        while i >= 0:
            raw.append(line_span(max(0, i - before), min(size, i + after)))
            i = lowered.find(anchor, raw[-1][1])
    return (_merged(raw) if len(raw) > len(merged) else merged), extra


def _opens_value(text: str, start: int, end: int) -> bool:
    """Whether the line ``text[start:end]`` ends with ``:`` or ``=``, or with one and a YAML block
    scalar's ``|``/``>`` (not a Markdown table's ``|``): its value may stand on the next line.
    Read from the end, without copying the line (it runs for every line with an anchor)."""
    i = end
    while i > start and text[i - 1] in " \t\r":
        i -= 1
    if i > start + 1 and text[i - 1] in "-+" and text[i - 2] in "|>":
        i -= 1
    if i > start and text[i - 1] in "|>":
        i -= 1
        while i > start and text[i - 1] in " \t":
            i -= 1
    return i > start and text[i - 1] in ":="


#: The optional anchors in lower case (a ``str.find`` each beat one search of them all: 4 against
#: 8 ms/MB on the real sessions' windows).
_LOWER_OPTIONAL = tuple((anchor, name) for anchor, name in ANCHOR_OPTIONAL.items() if anchor.lower() == anchor)


def _optional(lowered: str, cased: list[str], discord: bool) -> frozenset[str]:
    """The optional alternatives whose anchor is in ``lowered`` (or among the ``cased`` anchors seen)."""
    extra = {name for anchor, name in _LOWER_OPTIONAL if anchor in lowered}
    extra.update(ANCHOR_OPTIONAL[a] for a in cased if a in ANCHOR_OPTIONAL)
    if discord:
        extra.add("discord")
    return frozenset(extra)


def _merged(raw: list[tuple[int, int]]) -> list[tuple[int, int]]:
    # Sorted spans, those that touch or overlap joined.
    raw.sort()
    merged = [raw[0]]
    for start, end in raw[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end + 1:
            if end > last_end:
                merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged


def _key_blocks(
    text: str, lowered: str, line_span: Callable[[int, int], tuple[int, int]]
) -> list[tuple[int, int]]:
    # A PEM block (or a GCP key's one-line JSON string) to its END line; a PuTTY key's lines.
    spans: list[tuple[int, int]] = []
    i = lowered.find("-----begin")
    while i >= 0:
        close = lowered.find("-----end", i)
        spans.append(line_span(i, close + 8) if close >= 0 else (text.rfind("\n", 0, i) + 1, len(text)))
        i = lowered.find("-----begin", i + 10)
    if "private-lines:" in lowered:
        spans.append((text.rfind("\n", 0, lowered.find("private-lines:")) + 1, len(text)))
    return spans


# --- the redactor -------------------------------------------------------------------------------


class Redactor:
    """Masks every secret of ``FAMILIES`` in one pass per text.

    ``key``: the HMAC key of the placeholders' hashes (``[REDACTED:family#hash]``); ``None``
    gives the plain ``[REDACTED]`` masks of ``redact``. Counts what it masked, by family
    (``counts()``), for the reports and warnings of its callers. Thread-safe.
    """

    __slots__ = ("_key", "_seen", "_counts", "_lock")

    #: Distinct secrets whose placeholders are remembered (a bound, not a limit: past it the
    #: placeholder is computed again, and comes out the same).
    MEMO = 4096

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key
        self._seen: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_session(cls) -> Redactor:
        """A redactor with a fresh random key held only in memory (one per session or store)."""
        return cls(os.urandom(32))

    @property
    def labelled(self) -> bool:
        return self._key is not None

    def counts(self) -> dict[str, int]:
        """How many secrets were masked so far, by family."""
        with self._lock:
            return dict(self._counts)

    def placeholder(self, family: str, secret: str) -> str:
        """The placeholder of ``secret`` (the same for the same secret, with this key)."""
        with self._lock:
            self._counts[family] = self._counts.get(family, 0) + 1
            if self._key is None:
                return PEM_MASK if family == "private_key" else MASK
            memo = self._seen.get((family, secret))
            if memo is None:
                digest = hmac.new(self._key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
                memo = f"[REDACTED:{family}#{digest[:HASH_DIGITS]}]"
                if len(self._seen) >= self.MEMO:
                    self._seen.clear()
                self._seen[(family, secret)] = memo
            return memo

    def redact(self, text: str) -> str:
        """``text`` with every secret masked: one ``re.sub`` of ``_ONE`` over the lines that
        hold an anchor (``windows``), the rest of the text untouched."""
        if not text or not isinstance(text, str):
            return text
        spans, extra = windows(text)
        if not spans:
            return text
        if "aws" in extra:
            masked = self._mask_aws(text)
            if masked != text:
                text = masked
                spans, extra = windows(text)
        pattern = _pattern(extra)
        if len(spans) == 1 and spans[0] == (0, len(text)):
            return pattern.sub(self._replace, text)
        out: list[str] = []
        done = 0
        for start, end in spans:
            out.append(text[done:start])
            out.append(pattern.sub(self._replace, text[start:end]))
            done = end
        out.append(text[done:])
        return "".join(out)

    def redact_whole(self, text: str) -> str:
        """``redact`` without the anchor prefilter: ``_ONE`` over the whole text (the
        reference the prefilter is tested against; slower, same result)."""
        if not text or not isinstance(text, str):
            return text
        return _ONE.sub(self._replace, self._mask_aws(text))

    def _mask_aws(self, text: str) -> str:
        # AWS secrets: a 40-character mixed-case run within AWS_PAIR_DISTANCE of a key id.
        ids = [m.start() for m in _AWS_KEY_ID.finditer(text)]
        return _AWS_SECRET.sub(lambda m: self._aws_secret(m, ids), text) if ids else text

    def _replace(self, m: re.Match[str]) -> str:
        # The last group to close names the alternative: ``<tag>`` (masked whole) or
        # ``<tag>_v`` (what comes before the value is kept, what follows it too).
        name = m.lastgroup or ""
        group = name.partition("_")[0]
        whole = m.group(0)
        if group == name:
            if group == "bpem" and not _private_b64(whole):
                return whole
            return self.placeholder(GROUP_FAMILY[group], whole)
        if group in ("as", "qp", "ym", "gp", "ml"):
            return self._keyword(m, group)
        if group in COMMAND_GROUPS:
            return self._command_flag(m, group)
        value = m.group(name)
        if value.startswith(MASK_PREFIX):
            return whole
        offset = m.start()
        start, end = m.span(name)
        kept = whole[: start - offset]
        if group == "pg" and not _pgpass(m.string, offset, m.end()):
            # not a .pgpass line: what it spans is scanned for every other family
            return _pattern(_ALL_OPTIONAL - {"pgpass"}).sub(self._replace, whole)
        if ((group == "cu" and _placeholder_value(value)) or (group == "nr" and not _netrc(m.string, offset, m.end()))
                or (group == "qy" and _is_code(value))
                or (group in ("ah", "fl") and _PLACEHOLDER_SHAPE.fullmatch(value) is not None)
                or (group == "ah" and _is_code(value)) or (group == "fl" and _ENV_VALUE.match(value) is not None)
                or (group == "uu" and not _USERINFO.fullmatch(whole[3: start - offset - 1]))
                or (group == "azj" and "keyname" not in m.string[max(0, offset - 300): m.end() + 300].lower())):
            return whole
        if group in ("v", "v2", "aid", "b", "b2", "gfk"):  # a vendor key: hashed whole, its prefix kept in front
            family = _prefix_family(kept)
            secret = whole[: end - offset]
        elif group == "fl":
            if value.startswith(("env:", "file:", "fd:")) or value == "stdin":  # openssl -passin: where it is
                return whole
            if value.startswith("pass:"):  # openssl -passin pass:VALUE
                kept, value = kept + "pass:", value[5:]
            family, secret = _keyword_family(kept, value), value
        else:
            family, secret = GROUP_FAMILY[group], value
        return kept + self.placeholder(family, secret) + whole[end - offset:]

    def _command_flag(self, m: re.Match[str], group: str) -> str:
        # ``mysql ... -pVALUE`` and the like: the arguments between the command and its flag are
        # scanned for the other families (not the command's name: it would match its own args).
        whole, offset = m.group(0), m.start()
        start, end = m.span(f"{group}_v")
        value = m.group(f"{group}_v")
        head = whole[0] + self.redact(whole[1: start - offset])
        tail = whole[end - offset:]
        if (value.startswith(MASK_PREFIX) or _SHELL_VALUE.match(value) is not None or _NAMED_VALUE.fullmatch(value) is not None
                or (group == "ht" and not _htpasswd_batch(m))):
            return head + value + tail
        return head + self.placeholder(GROUP_FAMILY[group], value) + tail

    def _keyword(self, m: re.Match[str], group: str) -> str:
        whole, offset = m.group(0), m.start()
        start, end = m.span(f"{group}_v")
        value = m.group(f"{group}_v")
        text = m.string
        name_start = _name_start(text, offset)
        name = text[name_start:m.start(f"{group}_e")]
        if ((group == "ym" and not _opens_line(text, name_start) and not _looks_secret(value))
                or (group == "ml" and (not _opens_line(text, name_start) or value.endswith(":")))):
            # ``the password: is required`` is prose, not a listing, and ``password:`` over a
            # nested ``key:`` opens a mapping: the value is only scanned for the other families.
            return whole[: start - offset] + self.redact(value) + whole[end - offset:]
        quoted = group in ("qp", "gp") or (group in ("as", "ml") and m.group(f"{group}_q") is not None)
        if (value.startswith(MASK_PREFIX) or _not_a_value(name, value, group == "ym", text, end)
                or (_SHELL_VALUE.match(value) is not None if quoted
                    else _is_code_value(m, "ym" if group == "ml" else group, name, value))):
            return whole
        mask = self.placeholder(_keyword_family(name, value), value)
        return whole[: start - offset] + mask + whole[end - offset:]

    def _aws_secret(self, m: re.Match[str], aws_ids: list[int]) -> str:
        value = m.group(0)
        here = m.start()
        near = any(abs(here - key_at) <= AWS_PAIR_DISTANCE for key_at in aws_ids)
        mixed = (any(c.isupper() for c in value) and any(c.islower() for c in value)
                 and any(c.isdigit() or c in "/+" for c in value))
        return self.placeholder("aws_secret", value) if near and mixed else value


_PLAIN = Redactor()
_PROCESS = Redactor.for_session()


def redact(text: str) -> str:
    """``text`` with every secret this module recognises masked as ``[REDACTED]`` (a vendor
    key keeps its prefix). The compressor's and the recall tools' call; see ``redact_text``
    for stable per-secret placeholders."""
    return _PLAIN.redact(text)


def redact_text(text: str, redactor: Redactor | None = None) -> str:
    """``text`` with every secret replaced by its stable placeholder
    (``[REDACTED:family#hash]``), keyed by ``redactor`` (default: one per process)."""
    return (redactor or _PROCESS).redact(text)


#: Keys whose values are opaque provider bytes that must come back as they went (a signed
#: thinking block's signature, encrypted reasoning): never rewritten.
OPAQUE_KEYS = frozenset({"signature", "data", "encrypted_content"})


def redact_data(value: Any, redactor: Redactor | None = None) -> Any:
    """A copy of JSON-like ``value`` with every string redacted (``redact_text``); mappings and
    lists are rebuilt only where something changed; ``OPAQUE_KEYS`` values are kept."""
    r = redactor or _PROCESS
    if isinstance(value, str):
        return r.redact(value)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        changed = False
        for k, v in value.items():
            new = v if k in OPAQUE_KEYS else redact_data(v, r)
            changed = changed or new is not v
            out[k] = new
        return out if changed or not isinstance(value, dict) else value
    if isinstance(value, (list, tuple)):
        items = [redact_data(v, r) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value
