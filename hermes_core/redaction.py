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
* ``NAME=value`` assignments (a quoted value up to its closing quote, spaces included), quoted ``"name": "value"`` pairs and ``--flag value`` options
  whose name ends in KEY/TOKEN/SECRET/PASSWORD/PASS/PWD/CREDENTIAL/AUTH (``max_tokens=`` and
  ``author=`` are left alone: the word must end the name);
* ``Authorization:`` headers and ``Bearer`` tokens;
* credentials in URLs (``scheme://user:password@host``, ``scheme://<token>@host``) and
  token-like query parameters (``access_token``, ``api_key``, ``signature`` ...);
* PEM private-key blocks.

JWTs, Slack webhook URLs, SendGrid, Twilio and Discord bot tokens, Azure connection-string
``AccountKey=``/``SharedAccessKey=`` values, and AWS secret access keys written near their
``AKIA``/``ASIA`` key id (a 40-character mixed-case value; a git SHA is lower-case hex) are
masked too. Values that are code, not secrets, stay: ``os.getenv('OPENAI_API_KEY')``,
``api_key=settings.api_key``, ``token = os.environ["TOKEN"]``, ``password = get_password()``,
``AUTH_TOKEN=${AUTH_TOKEN}``, ``secret_key: str``.
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
# A quoted value runs to its closing quote, spaces included (``export API_KEY='abc def'``); an
# unquoted one stops at the first space or separator.
_ASSIGNMENT = re.compile(
    _NAME + r"(\s*=\s*)([\"'])?((?(3)[^\"'\n]+|[^\s\"'&;,)]+))(?(3)\3)", re.IGNORECASE
)
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


_JWT = re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
_SLACK_WEBHOOK = re.compile(r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_\-]{8,}")
_SENDGRID = re.compile(r"(?<![A-Za-z0-9])(SG\.)[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")
_TWILIO = re.compile(r"(?<![A-Za-z0-9])(SK|AC)[0-9a-fA-F]{32}(?![A-Za-z0-9])")
_AZURE = re.compile(r"(?i)((?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([^;\s\"']+)")
_DISCORD = re.compile(
    r"(?<![A-Za-z0-9_\-])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"
)
_AWS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
AWS_PAIR_DISTANCE = 300
#: A value that is code reading a secret, not the secret: an env reference, a dotted name, a
#: call or a subscript, or a type annotation.
_CODE_VALUE = re.compile(r"\$\{?[A-Za-z_]\w*\}?$|[A-Za-z_]+(?:\.[A-Za-z_]+)+$|[A-Za-z_][\w.]*[(\[]")
_TYPE_NAMES = frozenset({"str", "bytes", "int", "Optional", "SecretStr", "SecretBytes", "Any", "None"})


def _is_code(value: str) -> bool:
    return value in _TYPE_NAMES or _CODE_VALUE.match(value) is not None


def _aws_secrets(text: str) -> str:
    """Mask 40-character AWS secret keys that stand near an access key id."""
    spans = [(max(0, m.start() - AWS_PAIR_DISTANCE), m.end() + AWS_PAIR_DISTANCE) for m in _AWS_KEY_ID.finditer(text)]
    if not spans:
        return text

    def mask(match: re.Match[str]) -> str:
        value = match.group(0)
        near = any(lo <= match.start() < hi for lo, hi in spans)
        mixed = (any(c.isupper() for c in value) and any(c.islower() for c in value)
                 and any(c.isdigit() or c in "/+" for c in value))
        return MASK if near and mixed else value

    return _AWS_SECRET.sub(mask, text)


#: A literal part of every ``_VENDOR`` prefix. ``_VENDOR`` opens with a look-behind, so the
#: regex engine cannot skip ahead and tries every position (~5 µs on a 100-character line);
#: these substring tests rule most texts out first at a fraction of that.
_VENDOR_LITERALS = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "xapp-", "AIza", "AKIA",
    "ASIA", "hf_", "glpat-", "glptt-", "gldt-", "glrt-", "npm_", "pypi-", "k_live_", "k_test_",
    "gsk_", "xai-", "fw_", "r8_", "pplx-", "tvly-",
)


def _may_hold_vendor_key(text: str) -> bool:
    # Every prefix but AIza / AKIA / ASIA holds a "-" or "_": prose without either (most
    # requests and replies) is ruled out by two searches instead of 27.
    if "-" not in text and "_" not in text:
        return "AIza" in text or "AKIA" in text or "ASIA" in text
    for literal in _VENDOR_LITERALS:
        if literal in text:
            return True
    return False


#: Lower-case words every assignment, pair, flag or header pattern needs (checked first).
_WORD_TRIGGERS = ("key", "token", "secret", "pass", "pw", "credential", "auth", "bearer")


def _has_word_trigger(lowered: str) -> bool:
    # Unrolled ``any(...)`` over _WORD_TRIGGERS: this runs for every text redacted, most of
    # them short lines, where the generator cost more than the substring tests.
    return ("key" in lowered or "token" in lowered or "secret" in lowered or "pass" in lowered
            or "pw" in lowered or "credential" in lowered or "auth" in lowered or "bearer" in lowered)


def _mask_value(value: str) -> str:
    return value if value == MASK or value.startswith(MASK) else MASK


def _mask_unless_code(value: str) -> str:
    """For unquoted assignments: ``api_key=settings.api_key`` reads a secret, it is not one."""
    return value if _is_code(value) else _mask_value(value)


def redact(text: str) -> str:
    """``text`` with every secret this module recognises masked as ``[REDACTED]``.

    Each family runs only when a plain substring test says it could match (most texts - tool
    one-liners, prose - contain no trigger at all), so redacting a whole history stays cheap.
    """
    if not text or not isinstance(text, str):
        return text
    if "PRIVATE KEY-----" in text:
        text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    if "AKIA" in text or "ASIA" in text:
        text = _aws_secrets(text)  # before the key id itself is masked: it locates the secret
    if "eyJ" in text:
        text = _JWT.sub(MASK, text)
    if "hooks.slack.com" in text:
        text = _SLACK_WEBHOOK.sub(lambda m: m.group(1) + MASK, text)
    if "SG." in text:
        text = _SENDGRID.sub(lambda m: m.group(1) + MASK, text)
    if "SK" in text or "AC" in text:
        text = _TWILIO.sub(lambda m: m.group(1) + MASK, text)
    if "Key=" in text or "key=" in text or "Signature=" in text:
        text = _AZURE.sub(lambda m: m.group(1) + MASK, text)
    if "." in text:
        text = _DISCORD.sub(MASK, text)
    if _may_hold_vendor_key(text) and _VENDOR.search(text) is not None:
        text = _VENDOR.sub(lambda m: m.group(1) + MASK, text)
    if "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{MASK}@", text)
        text = _URL_TOKEN_USER.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    lowered = text.lower()
    if "=" in text and ("?" in text or "&" in text or ";" in text):
        text = _QUERY_PARAM.sub(lambda m: m.group(1) + _mask_value(m.group(2)), text)
    if not _has_word_trigger(lowered):
        return text
    if "=" in text:
        text = _ASSIGNMENT.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}"
            f"{_mask_unless_code(m.group(4)) if not m.group(3) else _mask_value(m.group(4))}{m.group(3) or ''}",
            text,
        )
    if ":" in text:
        text = _QUOTED_PAIR.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{m.group(4)}"
            f"{_mask_value(m.group(5))}{m.group(4)}",
            text,
        )
        text = _YAML_LINE.sub(
            lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{_mask_unless_code(m.group(4))}", text
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
