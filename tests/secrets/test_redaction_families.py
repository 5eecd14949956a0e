"""Every family of ``hermes_core.redaction`` is masked, with a stable keyed placeholder."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import FAMILIES, MASK, Redactor, redact, redact_data, redact_text

from hypothesis_budget import examples
from secret_samples import AWS_ID, GITHUB, OPENAI, PASSWORD, SAMPLES, SECRETS, STS_TOKEN

PLACEHOLDER = re.compile(r"\[REDACTED:([a-z_]+)#([0-9a-f]{6})\]")


@pytest.mark.parametrize("family, text, secret", SAMPLES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(SAMPLES)])
def test_every_family_is_masked_both_ways(family: str, text: str, secret: str) -> None:
    keyed = Redactor(b"test-key" * 4)
    out = keyed.redact(text)
    assert secret not in out, out
    assert PLACEHOLDER.search(out), out
    plain = redact(text)
    assert secret not in plain and MASK[:-1] in plain


def test_placeholders_name_real_families_and_are_counted() -> None:
    keyed = Redactor(b"k" * 32)
    for _, text, _ in SAMPLES:
        for family, _digest in PLACEHOLDER.findall(keyed.redact(text)):
            assert family in FAMILIES
    counts = keyed.counts()
    assert sum(counts.values()) >= len(SAMPLES)
    assert {"openai", "anthropic", "aws_secret", "private_key", "gcp_private_key_id", "jwt"} <= set(counts)


def test_the_same_secret_gets_the_same_placeholder_and_two_secrets_differ() -> None:
    keyed = Redactor(b"k" * 32)
    out = keyed.redact(f"first {OPENAI} then OPENAI_API_KEY={OPENAI} and {OPENAI[:-1]}Z")
    digests = [d for _, d in PLACEHOLDER.findall(out)]
    assert len(digests) == 3 and digests[0] == digests[1] != digests[2]
    # and in another text, later: the same placeholder
    assert keyed.redact(f"key={OPENAI}").endswith(f"#{digests[0]}]")


def test_the_placeholder_depends_on_the_key() -> None:
    a = Redactor(b"a" * 32).redact(f"password={PASSWORD}")
    b = Redactor(b"b" * 32).redact(f"password={PASSWORD}")
    assert a != b and PLACEHOLDER.search(a) and PLACEHOLDER.search(b)
    assert Redactor.for_session().redact(GITHUB) != Redactor.for_session().redact(GITHUB)


def test_aws_sts_json_is_masked_whole() -> None:
    text = SAMPLES[[f for f, _, _ in SAMPLES].index("aws_sts_json")][1]
    out = redact_text(text)
    assert STS_TOKEN not in out and AWS_ID not in out
    assert '"Expiration": "2026-12-06T05:00:00Z"' in out  # what is not secret stays


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(SAMPLES), min_size=1, max_size=4), st.sampled_from(["\n", " ", "; ", "\n\n"]))
def test_redaction_is_idempotent_and_loses_every_planted_secret(samples: list, sep: str) -> None:
    keyed = Redactor(b"k" * 32)
    text = sep.join(t for _, t, _ in samples)
    once = keyed.redact(text)
    assert keyed.redact(once) == once
    assert not any(secret in once for _, _, secret in samples)


def test_redact_data_walks_json_and_keeps_opaque_provider_bytes() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": f"the key is {GITHUB}", "signature": "sig" + GITHUB},
                    {"type": "text", "text": "ok"}],
        "tool_calls": [{"function": {"name": "run", "arguments": f'{{"password": "{PASSWORD}"}}'}}],
    }
    out = redact_data(message)
    flat = repr(out)
    assert GITHUB[4:] not in flat.replace("sig" + GITHUB, "") and PASSWORD not in flat
    assert out["content"][0]["signature"] == "sig" + GITHUB  # signed bytes stay byte-identical
    assert out["content"][1] is message["content"][1]  # unchanged parts are not rebuilt
    assert message["content"][0]["thinking"].endswith(GITHUB)  # the original is left alone


@pytest.mark.parametrize(
    "text",
    [
        "key = os.getenv('OPENAI_API_KEY')",
        "api_key=settings.api_key",
        "password = get_password()",
        "AUTH_TOKEN=${AUTH_TOKEN}",
        "max_tokens=4096, author=jane, sorted(x, key=len)",
        "the password: is required",  # prose, not a listing
        '{"max_tokens": 12, "primary_key": 3}',
        "APPLICATION and ACCOUNT and SKU-1",
        "see https://example.com/path?page=2&sort=desc",
    ],
)
def test_code_and_lookalikes_stay(text: str) -> None:
    assert redact_text(text) == text


def test_no_secret_sample_leaks_in_a_joined_session_text() -> None:
    text = "\n".join(t for _, t, _ in SAMPLES)
    out = redact_text(text)
    assert [s for s in SECRETS if s in out] == []


@pytest.mark.parametrize("family, text, secret", SAMPLES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(SAMPLES)])
def test_every_family_is_masked_inside_json_strings_once_and_twice_escaped(family: str, text: str, secret: str) -> None:
    # Tool call arguments are JSON strings; an archived call is ``name(arguments)``; a tool
    # result may itself print JSON that holds JSON.
    for variant in (json.dumps({"command": f"echo {text}"}), json.dumps(json.dumps(text)),
                    json.dumps({"command": f"cat <<EOF\n{text}\nEOF"}), json.dumps(f"\t{text}")):
        out = redact_text(variant)
        assert secret not in out and json.dumps(secret)[1:-1] not in out, out
