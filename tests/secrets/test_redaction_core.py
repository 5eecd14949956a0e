"""The redaction patterns live in the core; the compressor's module re-exports the same objects."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import hermes_core.redaction as core
import hermes_plugins.compressor.redact as compat

from hypothesis_budget import examples


def test_compressor_module_reexports_the_core_patterns() -> None:
    assert compat.redact is core.redact
    assert compat.MASK == core.MASK


def test_core_redacts_a_vendor_key() -> None:
    out = core.redact("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
    assert "abcdefghijklmnop" not in out and core.MASK in out


_PIECES = [
    "sk-", "ghp_", "gh", "github_pat_", "xoxb-", "xox", "xapp-", "AIza", "AKIA", "ASIA", "hf_",
    "glpat-", "gl", "npm_", "pypi-", "sk_live_", "rk_test_", "pk_", "gsk_", "xai-", "fw_", "r8_",
    "pplx-", "tvly-", "proj-", "ant-api03-", "a", "Z", "7", "_", "-", " ", ".", "=",
]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.text(alphabet="abcXYZ019_-", min_size=16, max_size=24))
def test_the_anchor_prefilter_never_skips_a_key_the_pattern_finds(pieces: list[str], body: str) -> None:
    text = "".join(pieces) + body
    assert core.redact(text) == core._PLAIN.redact_whole(text)


def test_every_vendor_prefix_is_masked_behind_the_prefilter() -> None:
    for prefix in ("sk-", "sk-proj-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxb-", "xapp-",
                   "AIza", "hf_", "glpat-", "glptt-", "gldt-", "glrt-", "npm_", "pypi-", "sk_live_",
                   "rk_test_", "pk_live_", "gsk_", "xai-", "fw_", "r8_", "pplx-", "tvly-"):
        secret = "Ab3dEf6hIj9kLm2nOp5q"
        out = core.redact(f"the key is {prefix}{secret} ok")
        assert secret not in out and core.MASK in out, prefix


def test_a_quoted_assignment_is_masked_to_its_closing_quote_spaces_included() -> None:
    redact = core.redact
    # A quoted value used to stop at its first space and then fail its closing quote: the whole
    # secret stayed in clear.
    assert redact("export API_KEY='abc def'") == "export API_KEY='[REDACTED]'"
    assert redact('DB_PASSWORD="correct horse battery"') == 'DB_PASSWORD="[REDACTED]"'
    assert redact("password = 'hunter two' # set") == "password = '[REDACTED]' # set"
    # the next assignment on the line is not swallowed, and code stays code
    assert redact('a password="x y", user="z"') == 'a password="[REDACTED]", user="z"'
    assert redact("os.getenv('OPENAI_API_KEY')") == "os.getenv('OPENAI_API_KEY')"
    assert redact('token = os.environ["TOKEN"]') == 'token = os.environ["TOKEN"]'
