"""The anchor prefilter of ``redact`` (``windows``) never changes what the one regex masks.

``Redactor.redact`` runs ``_ONE`` only over the lines that hold an anchor; ``redact_whole`` runs
it over the whole text. Any text, with secrets of every family planted among lines of noise,
must come out the same both ways.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import redaction
from hermes_core.redaction import MASK, Redactor, redact

from hypothesis_budget import examples

_BODY = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=0, max_size=40)
_PREFIXES = st.sampled_from([
    "sk-", "sk-proj-", "sk-ant-api03-", "ghp_", "github_pat_", "xoxb-", "xapp-", "AIza", "AKIA", "ASIA",
    "hf_", "glpat-", "npm_", "pypi-", "sk_live_", "rk_test_", "gsk_", "xai-", "fw_", "r8_", "pplx-", "tvly-",
    "sq0csp-", "whsec_", "AKC", "SG.", "SK", "AC", "eyJ", "gldt-",
])
# Pieces that open, close or neighbour a match: names, operators, quotes, line breaks, URLs.
_NOISE = st.sampled_from([
    "password", "API_KEY", "token", "SecretAccessKey", "SessionToken", "auth", "Bearer ", "Authorization: ",
    "=", ": ", '"', "'", "\n", " ", "-", "_", ".", "://", "@", "?key=", "&sig=", "--password ",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "Private-Lines: 1\n",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "0123456789abcdef0123456789abcdef", "-us1", ":AA",
    "8Q~", "AccountKey=", "https://user:pw", "MTE4NjU0MzIxMDk4NzY1NDMy.GaBcDe.", "x" * 30,
    # the forms told by their place: command flags, .pgpass lines, az keys, a value on the next line
    "mysql -p", "docker login -p ", "sshpass -p ", "redis-cli -a ", "htpasswd -b f u ", "-storepass ",
    "~/.pgpass", "db:5432:app:u:", "password:\n    ", "token =\n  ", "key1  FULL  ", "\tFULL\t",
    '"keyName": "key1", "value": "', "Zk3" * 28 + "ab==", "ab1234567890cd.atlasv1.", "sk.eyJ", "fm2_", "fo1_",
    "\r\n", ": |\n  ", " | ",
])


@given(before=st.text(max_size=30), prefix=_PREFIXES, body=_BODY, after=st.text(max_size=30))
@settings(max_examples=examples(200), deadline=None)
def test_a_vendor_key_anywhere_comes_out_as_the_whole_text_pass_has_it(
    before: str, prefix: str, body: str, after: str
) -> None:
    text = f"{before} {prefix}{body} {after}"
    assert redact(text) == redaction._PLAIN.redact_whole(text)


@given(st.lists(st.one_of(_NOISE, _PREFIXES, _BODY, st.text(max_size=8)), max_size=25))
@settings(max_examples=examples(300), deadline=None)
def test_windows_and_the_whole_text_pass_agree(pieces: list[str]) -> None:
    text = "".join(pieces)
    keyed = Redactor(b"k" * 32)
    assert keyed.redact(text) == keyed.redact_whole(text)


def test_prose_has_no_window_and_keys_are_still_masked() -> None:
    assert redaction.windows("the key is in the drawer")[0] == [(0, 24)]
    assert redaction.windows("please deploy the billing service and make it fast")[0] == []
    assert redact("the key AIzaSyA1234567890abcdefghijklmnop is old") == f"the key AIza{MASK} is old"
    assert redact("use sk-proj-" + "Q" * 30) == f"use sk-proj-{MASK}"


def test_a_window_is_only_the_lines_that_hold_an_anchor() -> None:
    text = "line one\nmy password=hunter22\nline three\n"
    spans, extra = redaction.windows(text)
    assert [text[a:b] for a, b in spans] == ["my password=hunter22"] and not extra
    assert redaction.windows("AKIA and Q~ and -us1")[1] == {"aws", "azure_ad", "mailchimp"}
    assert redact(text) == f"line one\nmy password={MASK}\nline three\n"


def test_a_long_run_that_is_not_an_aws_secret_never_hides_the_secret_after_it() -> None:
    # 27 digits + "Authorization" is a 40-character base64 run: an AWS secret candidate. Rejected
    # (no key id near it), it used to swallow the header's name, and the token went out verbatim.
    keyed = Redactor(b"k" * 32)
    for text in ("0" * 27 + "Authorization: hunter2secret",
                 "AKIAIOSFODNN7EXAMPLE far " + "x" * 400 + " " + "0" * 27 + "Authorization: hunter2secret"):
        for out in (keyed.redact(text), keyed.redact_whole(text)):
            assert "hunter2secret" not in out and "[REDACTED:authorization#" in out


def test_code_that_merely_says_zip_is_not_scanned() -> None:
    # The zip/unzip -P family is anchored on "zip -", not "zip": Python's zip(...), gzip and
    # words holding the letters put every such line through the whole regex (2.2x the cost of
    # redacting a forced compaction's texts).
    for text in ("for a, b in zip(xs, ys): total += a * b", "tar czf out.tgz . && gzip.open(p)",
                 "lxaazipig ryhian zipcode"):
        assert redaction.windows(text) == ([], frozenset()), text
    assert "zip" in redaction.windows("zip -r -P hunter22 backup.zip docs/")[1]
    assert "hunter22" not in redact("zip -r -P hunter22 backup.zip docs/")
