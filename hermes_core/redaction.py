"""Secret redaction: one set of patterns for everything we persist or summarise (§9.4).

A summary is persisted and re-sent on every later request, so a key that leaks into it leaks for
good. Every text bound for the summariser (turns, tool arguments, the previous summary, the focus
topic) and every text coming back goes through ``redact`` - always, whatever a user's other
redaction settings say. The session store masks the stored copy of the prompt with the same
patterns. Plugins import it from here (``hermes_plugins.compressor.redact`` re-exports it).

Families covered, each with its own pattern:

* vendor-prefixed keys (``sk-``, ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``, ``github_pat_``,
  ``xox*-``, ``AIza``, ``AKIA``/``ASIA``, ``hf_``, ``glpat-``, npm, PyPI, Stripe, Groq, xAI ...):
  the prefix is kept (it names the vendor, which helps), the rest is masked;
* ``NAME=value`` assignments, quoted ``"name": "value"`` pairs and ``--flag value`` options
  whose name ends in KEY/TOKEN/SECRET/PASSWORD/PASS/PWD/CREDENTIAL/AUTH (``max_tokens=`` and
  ``author=`` are left alone: the word must end the name);
* ``Authorization:`` headers and ``Bearer`` tokens;
* credentials in URLs (``scheme://user:password@host``, ``scheme://<token>@host``) and
  token-like query parameters (``access_token``, ``api_key``, ``signature`` ...);
* PEM private-key blocks.
"""

from __future__ import annotations

import re

MASK = "[REDACTED]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)

# The vendor prefix is group 1 and stays visible; the secret body is group 2.
_VENDOR = re.compile(
    r"(?<![A-Za-z0-9])("
    r"sk-(?:proj-|ant-(?:api\d\d-|admin\d\d-)?|svcacct-|admin-|or-v1-)?"
    r"|gh[pousr]_|github_pat_"
    r"|xox[abposre]-|xapp-"
    r"|AIza"
    r"|AKIA|ASIA"
    r"|hf_|glpat-|glptt-|gldt-|glrt-"
    r"|npm_|pypi-"
    r"|(?:sk|rk|pk)_(?:live|test)_"
    r"|gsk_|xai-|fw_|r8_|pplx-|tvly-"
    r")([A-Za-z0-9_\-]{16,})"
)

_SECRET_WORD = (
    r"(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret"
    r"|auth[_-]?token|token|secret|password|passwd|passphrase|credentials?"
    r"|(?<=[_.\-])(?:key|pass|pwd|pw|auth)|(?<![A-Za-z0-9_.\-])(?:pass|auth))"
)
_NAME = r"(?<![A-Za-z0-9_.\-])((?:[A-Za-z0-9_.\-]*[_.\-])?" + _SECRET_WORD + r")"

# NAME=value, NAME = "value", export NAME='value'
_ASSIGNMENT = re.compile(_NAME + r"(\s*=\s*)([\"']?)([^\s\"'&;,)]+)\3", re.IGNORECASE)
# "name": "value" / 'name': 'value' (JSON, Python dicts, YAML with quoted values)
_QUOTED_PAIR = re.compile(
    r"([\"']?)" + _NAME + r"\1(\s*:\s*)([\"'])([^\"'\n]+)\4", re.IGNORECASE
)
# name: value at the start of a line (YAML, .env-like listings)
_YAML_LINE = re.compile(r"(?m)^(\s*-?\s*)" + _NAME + r"(\s*:[ \t]+)([^\s#\"']\S*)", re.IGNORECASE)
# --password value, --api-key=value
_FLAG = re.compile(
    r"(?<![A-Za-z0-9-])(--?(?:[a-z0-9]+-)*(?:api-?key|access-key|secret|token|password|passwd|pass))"
    r"([= ])([\"']?)([^\s\"']+)\3",
    re.IGNORECASE,
)
_AUTH_HEADER = re.compile(
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|bot)?\s*)([^\s\"',;]{8,})"
)
_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9])(bearer\s+)([A-Za-z0-9._~+/=\-]{12,})")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s:@\"']+):([^/\s@\"']+)@")
_URL_TOKEN_USER = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([A-Za-z0-9_\-.~]{20,})@")
_QUERY_PARAM = re.compile(
    r"(?i)([?&;](?:access_token|refresh_token|id_token|auth_token|token|api_key|apikey|key"
    r"|client_secret|secret|password|passwd|pwd|code|signature|sig|x-amz-signature"
    r"|x-amz-credential|x-amz-security-token|x-goog-signature|auth|sessionid|session_id)=)"
    r"([^&#\s\"'<>]+)"
)


#: Lower-case words every assignment, pair, flag or header pattern needs (checked first).
_WORD_TRIGGERS = ("key", "token", "secret", "pass", "pw", "credential", "auth", "bearer")


def _mask_value(value: str) -> str:
    return value if value == MASK or value.startswith(MASK) else MASK


def redact(text: str) -> str:
    """``text`` with every secret this module recognises masked as ``[REDACTED]``.

    Each family runs only when a plain substring test says it could match (most texts - tool
    one-liners, prose - contain no trigger at all), so redacting a whole history stays cheap.
    """
    if not text or not isinstance(text, str):
        return text
    if "PRIVATE KEY-----" in text:
        text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    if _VENDOR.search(text) is not None:
        text = _VENDOR.sub(lambda m: m.group(1) + MASK, text)
    if "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{MASK}@", text)
        text = _URL_TOKEN_USER.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    lowered = text.lower()
    if "=" in text and ("?" in text or "&" in text or ";" in text):
        text = _QUERY_PARAM.sub(lambda m: m.group(1) + _mask_value(m.group(2)), text)
    if not any(word in lowered for word in _WORD_TRIGGERS):
        return text
    if "=" in text:
        text = _ASSIGNMENT.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{_mask_value(m.group(4))}{m.group(3)}",
            text,
        )
    if ":" in text:
        text = _QUOTED_PAIR.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{m.group(4)}"
            f"{_mask_value(m.group(5))}{m.group(4)}",
            text,
        )
        text = _YAML_LINE.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{_mask_value(m.group(4))}", text
        )
        if "authorization" in lowered:
            text = _AUTH_HEADER.sub(lambda m: m.group(1) + _mask_value(m.group(2)), text)
    if "-" in text:
        text = _FLAG.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{_mask_value(m.group(4))}{m.group(3)}",
            text,
        )
    if "bearer" in lowered:
        text = _BEARER.sub(lambda m: m.group(1) + _mask_value(m.group(2)), text)
    return text
