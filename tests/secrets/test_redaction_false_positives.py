"""What looks like a secret's place but holds none: documented placeholder shapes in docs and
config samples, code, a lookup key, a fetch option, a listing's description, a regex. Each
case was a placeholder on real third-party text (the real sessions, real AGENTS.md files) or
named in the redaction brief; next to each stands the same place with a value that could be
real, which stays masked - a word that could be a real password (``changeme``) is not a shape."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import Redactor, redact_text

from hypothesis_budget import examples

PW = "Qx7" + "vLm2" + "pR9s"  # assembled: no whole fake secret in the file
GH = "ghp_" + "Ab3dEf6hIj9kLm2n" + "Op5qRs8tUv1wXy4z" + "abcd"


@pytest.mark.parametrize(
    "text",
    [
        # placeholder shapes
        "GROQ_API_KEY=your_groq_api_key\nSUPERMEMORY_API_KEY=your_supermemory_api_key  # Optional",
        "echo 'TELEGRAM_BOT_TOKEN=your_token_here' >> ~/.env",
        'export API_TOKEN="<your-token>"',
        "api_key: YOUR_API_KEY",
        'export TELEGRAM_BOT_TOKEN="..."',
        "ZAI_API_KEY=...",
        "- `ELEVENLABS_API_KEY=... npx tsx scripts/generate.ts`",
        "SECRET_KEY=xxxxxxxx",
        "echo 'GITHUB_TOKEN=ghp_xxx...' >> ~/.hermes/.env",
        "  - Token: gho_************************************\n  - Token scopes: 'gist'",
        "mytool --api-key <your-api-key> run",
        'curl -H "Authorization: Bearer <YOUR_TOKEN>" https://api.example.com',
        # a lookup key, an auth mode: 1-3 characters under a name ending in KEY or AUTH
        "next_key: 1",
        "sort_key = 12",
        'if gh auth status; then\n  AUTH="gh"\nelse\n  AUTH="git"\nfi',
        # code: command substitution, a backtick, an env reference in a header
        'GITHUB_TOKEN=$(grep "github.com" ~/.git-credentials | head -1)',
        "TOKEN=`cat ~/.token`",
        "whose output carries only the `CRON_MONITOR_API_KEY=` line",
        'curl -s -H "Authorization: token $GITHUB_TOKEN" https://api.github.com/user',
        'curl -s -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com',
        # fetch's credentials option
        "fetch(url, { credentials: 'include' })",
        'fetch(url, {"credentials": "same-origin"})',
        # a listing's description: a one-word value, prose after it
        "    - github-auth: GitHub auth setup: HTTPS tokens, SSH keys, gh CLI",
        # a regex in a sed command is not a URL's user:password
        "sed 's|https://[^:]*:\\([^@]*\\)@.*|\\1|'",
    ],
)
def test_not_a_secret_stays_as_written(text: str) -> None:
    r = Redactor.for_session()
    assert r.redact(text) == text
    assert r.counts() == {}
    # the same text inside a JSON string (a tool call's arguments, a tool result)
    escaped = json.dumps({"command": text})
    assert r.redact(escaped) == escaped


@pytest.mark.parametrize(
    "text, secret",
    [
        # a word that could be a real password or token is not a placeholder shape
        ("DB_PASSWORD=changeme", "changeme"),
        ("export OPENAI_API_KEY=anything", "anything"),
        ('config = PlatformConfig(token="test-token")', "test-token"),
        ("PASSWORD=yourpassword1", "yourpassword1"),
        ("API_KEY=x9" + "Fq2Lm8vR", "x9Fq2Lm8vR"),
        # short values stay masked under a password, a secret or a token name
        ("DB_PASS=abc", "abc"),
        ('TOKEN="ab1"', "ab1"),
        ("api_key: " + PW, PW),
        # a real value in the places above
        ("next_key: " + PW, PW),
        ('AUTH="' + PW + '"', PW),
        ("fetch(url, { credentials: '" + PW + "' })", PW),
        ('curl -H "Authorization: token ' + GH + '" https://api.github.com', GH),
        ("mytool --api-key " + PW + " run", PW),
        ("  - Token: " + GH, GH),
        ("password: swordfish # the admin's", "swordfish"),
        ("password: " + PW + " is the admin's", PW),
        ("postgres://admin:" + PW + "^[x@db.example.com/app", PW),
    ],
)
def test_a_value_that_could_be_real_stays_masked(text: str, secret: str) -> None:
    for variant in (text, json.dumps({"output": "$ cat f\n" + text})):
        out = redact_text(variant)
        assert secret not in out, out
        assert "[REDACTED:" in out


def test_a_quoted_value_does_not_run_past_an_escaped_line_break() -> None:
    # ``grep -q "^GITHUB_TOKEN=" ~/.env; then`` inside a JSON string: the quote after ``=``
    # closes the grep pattern; the value used to run over the escaped line break to the next quote.
    script = 'if grep -q "^GITHUB_TOKEN=" ~/.env; then\n  GITHUB_TOKEN=$(grep "^GITHUB_TOKEN=" ~/.env | cut -d= -f2)\nfi'
    escaped = json.dumps({"command": script})
    assert redact_text(escaped) == escaped
    # a quoted value on one line is still masked whole, spaces included
    line = json.dumps({"command": f'GITHUB_TOKEN="{PW} {PW}"\necho done'})
    out = redact_text(line)
    assert PW not in out and "\\necho done" in out


def test_a_listing_value_keeps_the_escaped_line_break_after_it() -> None:
    # ``- Token: <value>\n  - Token scopes`` inside a JSON string: the ``\n`` is the line's end,
    # not part of the value (masking it joined two lines)
    out = redact_text(json.dumps(f"  - Token: {GH}\n  - Token scopes: 'gist'"))
    assert GH[4:] not in out
    assert "\\n  - Token scopes" in out


@settings(max_examples=examples(40), deadline=None)
@given(
    name=st.sampled_from(["API_KEY", "GROQ_API_KEY", "TOKEN", "DB_PASSWORD", "client_secret"]),
    value=st.text(alphabet="ABCDEFGHJKMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz23456789", min_size=12, max_size=40),
    form=st.sampled_from(["{n}={v}", '{n}="{v}"', "{n}: {v}", '"{n}": "{v}"', "export {n}='{v}'"]),
)
def test_a_key_like_value_in_every_form_stays_masked(name: str, value: str, form: str) -> None:
    # the placeholder rules never let a key-like value through, whatever the form
    text = form.format(n=name, v=value)
    assert value not in redact_text(text)
    assert value not in redact_text(json.dumps({"output": "$ cat f\n" + text}))


def test_a_masked_header_inside_a_json_string_keeps_the_escaped_closing_quote() -> None:
    # ``"Authorization: token <key>\"`` in a tool call's arguments: the backslash escapes the
    # closing quote; masking it with the key broke the JSON (and cut the command short)
    arguments = json.dumps({"command": f'curl -H "Authorization: token {GH}" https://api.github.com'})
    out = json.loads(redact_text(arguments))["command"]
    assert GH not in out and out.endswith('" https://api.github.com')


def test_a_flag_value_is_left_only_when_the_shell_expands_it() -> None:
    assert redact_text('deploy --token "$API_TOKEN" --password $(pass show db)') == (
        'deploy --token "$API_TOKEN" --password $(pass show db)')
    # a dotted word after a flag may be a real password (it is code only in an assignment)
    out = redact_text("deploy --password blue.horse.staple")
    assert "blue.horse" not in out
