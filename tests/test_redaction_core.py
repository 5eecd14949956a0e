"""The redaction patterns live in the core; the compressor's module re-exports the same objects."""

from __future__ import annotations

import hermes_core.redaction as core
import hermes_plugins.compressor.redact as compat


def test_compressor_module_reexports_the_core_patterns() -> None:
    assert compat.redact is core.redact
    assert compat.MASK == core.MASK


def test_core_redacts_a_vendor_key() -> None:
    out = core.redact("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
    assert "abcdefghijklmnop" not in out and core.MASK in out
