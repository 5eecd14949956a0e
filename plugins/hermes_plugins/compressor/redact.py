"""Secret redaction for summaries (§9.4): the patterns live in the core.

``hermes_core.redaction`` holds them so that every plugin (the compressor, the session store)
masks the same secrets with the same rules; this module re-exports them for existing imports.
"""

from __future__ import annotations

from hermes_core.plugin import MASK, redact

__all__ = ["MASK", "redact"]
