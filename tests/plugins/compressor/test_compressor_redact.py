"""Secret redaction (§9.4): one test per family, plus what must be left alone."""

from __future__ import annotations

import pytest

from hermes_plugins.compressor.redact import MASK, redact

VENDOR_KEYS = [
    ("sk-", "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"),
    ("sk-proj-", "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"),
    ("sk-ant-api03-", "sk-ant-api03-" + "abcDEF123456ghiJKL789012"),
    ("ghp_", "ghp_" + "a" * 36),
    ("gho_", "gho_" + "B" * 36),
    ("ghu_", "ghu_" + "c1" * 18),
    ("ghs_", "ghs_" + "D2" * 18),
    ("ghr_", "ghr_" + "e3" * 18),
    ("github_pat_", "github_pat_" + "11AAAAAAA0" + "_" + "b" * 40),
    ("xoxb-", "xoxb-" + "1234567890-0987654321-abcdefABCDEF"),
    ("xoxp-", "xoxp-" + "11111111111-22222222222-abcdef"),
    ("AIza", "AIza" + "SyD-1234567890abcdefghijklmnopqrstu"),
    ("AKIA", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("hf_", "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNm"),
    ("glpat-", "glpat-" + "xY12-ab34_cd56EF78gh"),
    ("npm_", "npm_" + "a1" * 18),
    ("sk_live_", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
]


@pytest.mark.parametrize("prefix, key", VENDOR_KEYS, ids=[p for p, _ in VENDOR_KEYS])
def test_vendor_keys_keep_only_their_prefix(prefix: str, key: str) -> None:
    text = f"use {key} for the call; then {key}."
    out = redact(text)
    assert key not in out
    assert out == f"use {prefix}{MASK} for the call; then {prefix}{MASK}."


@pytest.mark.parametrize(
    "text, secret, kept",
    [
        ("export OPENAI_API_KEY=abc123def456ghi", "abc123def456ghi", "export OPENAI_API_KEY="),
        ("GITHUB_TOKEN='tok_live_value_1'", "tok_live_value_1", "GITHUB_TOKEN='"),
        ('DB_PASSWORD="hunter2!"', "hunter2!", "DB_PASSWORD=\""),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key"),
        ("client_secret=s3cr3t-value", "s3cr3t-value", "client_secret="),
        ("db.password=pa55word", "pa55word", "db.password="),
        ("SSH_PASS=letmein99", "letmein99", "SSH_PASS="),
        ("MY_CREDENTIALS=user:pw-value", "user:pw-value", "MY_CREDENTIALS="),
        ("AUTH=opaque-auth-value", "opaque-auth-value", "AUTH="),
    ],
)
def test_key_value_assignments(text: str, secret: str, kept: str) -> None:
    out = redact(text)
    assert secret not in out
    assert kept in out and MASK in out


@pytest.mark.parametrize(
    "text, secret",
    [
        ('{"api_key": "k-123456", "model": "gpt"}', "k-123456"),
        ("{'password': 'correct horse'}", "correct horse"),
        ("token: abcdef123456\nname: demo", "abcdef123456"),
        ("mysql --password=topsecret -u root", "topsecret"),
        ("tool --api-key sk_value_0001 --verbose", "sk_value_0001"),
    ],
)
def test_quoted_pairs_yaml_lines_and_flags(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MASK in out


def test_yaml_and_json_keep_their_shape() -> None:
    assert redact('{"api_key": "k-123456", "model": "gpt"}') == f'{{"api_key": "{MASK}", "model": "gpt"}}'
    assert redact("token: abc\nname: demo") == f"token: {MASK}\nname: demo"


@pytest.mark.parametrize(
    "text, secret",
    [
        ("git clone https://bob:s3cr3tpass@github.com/org/repo.git", "s3cr3tpass"),
        ("postgres://admin:Pa$$w0rd@db.internal:5432/app", "Pa$$w0rd"),
        ("https://x-token-1234567890abcdefghij@github.com/org/repo", "x-token-1234567890abcdefghij"),
    ],
)
def test_url_credentials(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "@" in out and MASK in out


def test_url_userinfo_keeps_the_user_and_host() -> None:
    assert redact("https://bob:pw12345@example.com/x") == f"https://bob:{MASK}@example.com/x"


@pytest.mark.parametrize(
    "text, secret",
    [
        ("https://cb.example/auth?code=4/0AeanS0a&state=xyz", "4/0AeanS0a"),
        ("GET /api?access_token=ya29.a0Af&format=json", "ya29.a0Af"),
        ("https://s3.example/b/k?X-Amz-Signature=deadbeef0123&X-Amz-Credential=AKI/2024", "deadbeef0123"),
        ("https://maps.example/api?key=AB12cd34EF&z=3", "AB12cd34EF"),
        ("?refresh_token=rt-0001&client_secret=cs-0002", "cs-0002"),
    ],
)
def test_token_query_parameters(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MASK in out
    if "state=xyz" in text:
        assert "state=xyz" in out


def test_bearer_and_authorization_headers() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijk"
    assert jwt not in redact(f"curl -H 'Authorization: Bearer {jwt}' https://api")
    assert "dXNlcjpwYXNzd29yZA==" not in redact("Authorization: Basic dXNlcjpwYXNzd29yZA==")
    assert jwt not in redact(f"headers = {{'authorization': 'Bearer {jwt}'}}")


def test_private_key_blocks() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
    out = redact(f"key:\n{block}\nthen")
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in out and out.endswith("then")


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096 and token_count=12",
        "author=jane, passed=3, bypass=1",
        "sorted(items, key=len)",
        "PWD=/home/user",
        "the keyword argument is fine",
        "see https://example.com/path?page=2&sort=desc",
        "src/tokens.py line 40: def estimate_tokens(text):",
        "sk-short",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent() -> None:
    text = "OPENAI_API_KEY=abc123 and ghp_" + "a" * 36 + " https://u:p4ss@h.example"
    once = redact(text)
    assert redact(once) == once


# --- issue 13: more families, and code that only names a secret -------------------------------

AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GIT_SHA = "9f7c401" + "a" * 33
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
DISCORD = "MTE4NjU0MzIxMDk4NzY1NDMy" + ".GaBcDe." + "x" * 20 + "Y1z2" + "q" * 10


@pytest.mark.parametrize(
    "text, secret, kept",
    [
        (f"Authorization header value {JWT} sent", JWT, "Authorization header value"),
        ("post to https://hooks.slack.com/services/" + "T0001/B0002/" + "XXXXXXXXXXXXXXXXXXXXXXXX", "T0001/B0002/",
         "https://hooks.slack.com/services/"),
        ("SENDGRID key " + "SG." + "abcdefghijklmnop1234" + "." + "QRSTUVWXYZabcdef5678" + " here", "abcdefghijklmnop1234",
         "SG."),
        ("twilio key " + "SK" + "0123456789abcdef" * 2, "0123456789abcdef" * 2, "SK"),
        ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + "Zm9vYmFy" * 8 + "==;EndpointSuffix=core",
         "Zm9vYmFy" * 8, "AccountName=acme;AccountKey="),
        (f"bot token: {DISCORD}", DISCORD, "bot token"),
        (f"aws_access_key_id = {AWS_ID}\naws_secret = {AWS_SECRET}", AWS_SECRET, "AKIA"),
        (f"{AWS_ID} {AWS_SECRET}", AWS_SECRET, "AKIA"),
    ],
)
def test_more_secret_families_are_masked(text: str, secret: str, kept: str) -> None:
    out = redact(text)
    assert secret not in out
    assert kept in out and MASK in out


@pytest.mark.parametrize(
    "text",
    [
        "key = os.getenv('OPENAI_API_KEY')",
        'token = os.environ["GITHUB_TOKEN"]',
        "api_key=settings.api_key",
        "password = get_password()",
        "AUTH_TOKEN=${AUTH_TOKEN}",
        "    secret_key: str = Field(...)",
        f"commit {GIT_SHA} near {AWS_ID}".replace(AWS_ID, "the key id"),  # no key id: nothing to pair
        "eyJ is how base64 JSON starts; eyJhbGci alone is not a token",
        "see https://hooks.slack.com/ for webhooks",
        "SG.short.value and ACME and SKU123",
        "AccountName=acme;EndpointSuffix=core.windows.net",
        "Mr.Smith.Jones wrote this",
    ],
)
def test_code_and_lookalikes_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_git_sha_next_to_an_aws_key_id_is_not_a_secret() -> None:
    out = redact(f"{AWS_ID} at commit {GIT_SHA}")
    assert GIT_SHA in out and AWS_ID not in out
