"""The identity block: the host's ``identity``, else ``$HERMES_HOME/SOUL.md``, else hermes-core's
default identity (the only one that says "Hermes"; it is marked so that the blocks about Hermes
itself - the documentation pointer, product names in platform hints - follow it and nothing else).

SOUL.md is read from HERMES_HOME only (a SOUL.md in the working directory is ignored), once per
prompt build; when it is the identity, the context-file block never loads it again.
"""

from __future__ import annotations

import os

from hermes_core.plugin import PromptBlock, PromptContext, hookimpl, max_read_bytes, read_text_bounded
from hermes_plugins._common.screening import findings, flagged_soul

DEFAULT_IDENTITY = (
    "You are Hermes, an AI agent that works with tools on the user's behalf. Match the length "
    "of your answer to what was asked: short questions get short answers, and depth is spent "
    "only where it earns its place. Skip filler and do not narrate tool calls the user can "
    "already see. When you are unsure, say so and say what would settle it; when the user is "
    "wrong, say that too, plainly and kindly. Prefer doing the work over describing it."
)

SOUL_MAX_BYTES = 500_000


def read_soul(ctx: PromptContext) -> tuple[str | None, str]:
    """Return (text, path) of SOUL.md; text is None when absent, empty or unusable (refused,
    unreadable or binary: one warning naming the file, from ``read_text_bounded``)."""
    path = ctx.home / "SOUL.md"
    limit = min(SOUL_MAX_BYTES, max_read_bytes(ctx.config))
    text = read_text_bounded(path, limit, "the identity", plugin="identity", marker_sep="\n\n",
                             skipped="the default identity is used instead")
    return (text.strip() or None) if text is not None else None, str(path)


#: The ``source`` of an identity the host passed to ``Session.open(identity=...)``.
HOST_IDENTITY_SOURCE = "<Session.open(identity=...)>"


@hookimpl(trylast=True)
def hermes_prompt_identity(ctx: PromptContext) -> PromptBlock:
    own = ctx.identity.strip() if isinstance(ctx.identity, str) else ""
    if own:
        # The host's identity wins over SOUL.md (which the context-file block then appends).
        return PromptBlock(name="identity", text=own, source=HOST_IDENTITY_SOURCE)
    text, path = read_soul(ctx)
    if text is None:
        # A SOUL.md that is there but unusable was reported once, here: the context-file block
        # (which appends SOUL.md when another identity replaced this one) leaves it alone.
        refused = {"soul_refused": path} if os.path.lexists(path) else {}
        return PromptBlock(name="identity", text=DEFAULT_IDENTITY, meta={**refused, "default_identity": True})
    ids = findings(ctx, text, "SOUL.md")
    if ids:
        flagged_soul(ids, path=path)  # the user's own file: loaded, with a warning
    return PromptBlock(name="identity", text=text, source=path)
