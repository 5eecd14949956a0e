"""The independent corpus (``secret_corpus``: 46 families, 161 layouts, written from the vendors'
published formats) is masked in every context a transcript holds it - and so are values drawn
afresh by hypothesis in the same formats (secrets no file of the repository holds). Texts that
look close (code reading a secret, hashes, UUIDs, variable names) stay as they are."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import MASK, Redactor, redact

from hypothesis_budget import examples
from secret_corpus import CONTEXTS, CORPUS, NOT_SECRETS, context_text, corpus, leaked

CASES = [(sample, context) for sample in CORPUS for context in CONTEXTS]


@pytest.mark.parametrize("sample, context", CASES, ids=[f"{s.family}-{s.layout}-{c}" for s, c in CASES])
def test_every_family_is_masked_in_every_context(sample, context) -> None:
    text = context_text(sample, context)
    assert leaked(sample.secrets, text) == list(sample.secrets)  # the sample holds what it says
    keyed = Redactor(b"corpus-key" * 4)
    out = keyed.redact(text)
    assert leaked(sample.secrets, out) == [], out
    assert "[REDACTED:" in out
    assert leaked(sample.secrets, redact(text)) == []
    # the anchor prefilter sees every one: the same result as the regex over the whole text
    assert keyed.redact_whole(text) == out


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_what_only_looks_like_a_secret_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    "thread_key = tool_id || fallback",          # a variable read (JavaScript)
    "    thread_key: tool_use_id,",               # an Elixir/JS map field
    "call(session_key=session_key, retries=3)",  # a keyword argument passing a variable
    "if (e.ctrlKey && e.key === 'D') {",          # a comparison, not an assignment
    "tokens.map(token => token.id)",              # an arrow function
    'AUTH="$(gh auth token)"',                    # the shell reads it at run time
    "password: null",
    "docker run -u 1000:1000 image",              # a uid:gid, not user:password
    "curl -u $USER:$TOKEN https://ci",
])
def test_code_that_handles_a_secret_is_not_masked(text: str) -> None:
    # Found on the real sessions: 104 placeholders of family "key" were code like these.
    assert redact(text) == text


@pytest.mark.parametrize("text, secret", [
    ("DB_PASS=hunter_two", "hunter_two"),                # a .env value is a secret even if it reads as a name
    ("password = 'correcthorse'", "correcthorse"),
    ("token: f2sOAyjOHK0hEkORHb0jWWKxuLtwl6 in the note", "f2sOAyjOHK0hEkORHb0jWWKxuLtwl6"),
    ('"{\\"auth\\": \\"x\\"}\\n    password: plainwords\\n"', "plainwords"),  # YAML inside a JSON string
])
def test_values_that_read_as_words_are_still_masked_where_they_are_secrets(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MASK[:-1] in out


@settings(max_examples=examples(6), deadline=None)
@given(salt=st.text(min_size=1, max_size=8), contexts=st.lists(st.sampled_from(CONTEXTS), min_size=1, max_size=2,
                                                                 unique=True))
def test_values_drawn_afresh_in_every_format_are_masked(salt: str, contexts: list[str]) -> None:
    # Every family and layout, with values no file holds (drawn for this example's salt).
    keyed = Redactor.for_session()
    for sample in corpus(salt):
        for context in contexts:
            out = keyed.redact(context_text(sample, context))
            assert leaked(sample.secrets, out) == [], (sample.family, sample.layout, context, out)
