"""The vendor-key prefilter of ``redact`` never rules out a text the vendor pattern matches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import redaction
from hermes_core.redaction import MASK, redact

_BODY = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=0, max_size=40)
_PREFIXES = st.sampled_from([
    "sk-", "sk-proj-", "sk-ant-api03-", "ghp_", "github_pat_", "xoxb-", "xapp-", "AIza", "AKIA", "ASIA",
    "hf_", "glpat-", "npm_", "pypi-", "sk_live_", "rk_test_", "gsk_", "xai-", "fw_", "r8_", "pplx-", "tvly-",
])


@given(before=st.text(max_size=30), prefix=_PREFIXES, body=_BODY, after=st.text(max_size=30))
@settings(max_examples=400, deadline=None)
def test_the_prefilter_never_hides_a_vendor_key(before: str, prefix: str, body: str, after: str) -> None:
    text = f"{before} {prefix}{body} {after}"
    if redaction._VENDOR.search(text) is not None:
        assert redaction._may_hold_vendor_key(text)


def test_prose_without_dashes_or_underscores_is_ruled_out_and_keys_are_still_masked() -> None:
    assert not redaction._may_hold_vendor_key("please deploy the billing service and keep it slow")
    assert redact("the key AIzaSyA1234567890abcdefghijklmnop is old") == f"the key AIza{MASK} is old"
    assert redact("use sk-proj-" + "Q" * 30) == f"use sk-proj-{MASK}"
