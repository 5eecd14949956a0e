"""The platform hint: how replies render and how files reach the user on each channel (spec §6).

Operators adjust a hint without code through ``platform_hints.<platform>`` in config.yaml: a
string is appended to the built-in hint; a mapping ``{replace: ..., append: ...}`` replaces it,
appends to it, or both. A platform with no built-in hint can be given one the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from hermes_core.plugin import ConfigSection, PromptBlock, PromptContext, field, free_mapping, hookimpl


@attrs.frozen(kw_only=True)
class PlatformKeys:
    platform_hints: Mapping[str, Any] = field({}, free_mapping, doc="platform -> hint text (replaces the built-in)")
    platforms: Mapping[str, Any] = field({}, free_mapping, doc="per-platform settings (telegram.extra)")
    gateway: Mapping[str, Any] = field({}, free_mapping, doc="the gateway's settings (gateway.platforms)")


PLATFORM_KEYS = ConfigSection(name="", model=PlatformKeys, doc="The platform hint block.")


@hookimpl
def hermes_config_sections() -> ConfigSection[PlatformKeys]:
    return PLATFORM_KEYS

_MEDIA = (
    "To send a file (an image, audio, a document), put MEDIA:/absolute/path/to/file on a line "
    "of its own; the gateway attaches it."
)

PLATFORM_HINTS: Mapping[str, str] = {
    "cli": (
        "You are talking to the user in a terminal (the Hermes CLI). Markdown is rendered, so "
        "headings, lists and code blocks are fine. Files you create are on this machine, so give "
        "their paths rather than pasting them. Output of scheduled (cron) jobs is saved locally "
        "and is not delivered to any chat platform."
    ),
    "tui": (
        "You are talking to the user in the Hermes terminal UI. Markdown is rendered, so "
        "headings, lists and code blocks are fine; refer to files by path. Output of scheduled "
        "(cron) jobs is saved locally and is not delivered to any chat platform."
    ),
    "desktop": (
        "You are talking to the user in the Hermes desktop app, which renders Markdown "
        "(headings, lists, tables, code blocks). Refer to local files by their absolute path."
    ),
    "telegram": (
        "You are on Telegram. It renders basic Markdown (bold, italic, inline code, code "
        "blocks, links) but not tables or headings; keep messages compact. " + _MEDIA
    ),
    "discord": (
        "You are on Discord. Markdown renders (bold, italics, lists, code blocks) except "
        "tables; a message holds at most 2000 characters, so keep replies short or split them. "
        + _MEDIA
    ),
    "whatsapp": (
        "You are on WhatsApp. It does not render Markdown: use *bold*, _italic_ and plain "
        "lists, no headings, tables or code fences. Keep messages short and conversational. "
        + _MEDIA
    ),
    "whatsapp_cloud": (
        "You are on WhatsApp (Cloud API). Markdown is not rendered: use *bold*, _italic_ and "
        "plain lists only, and keep messages short. " + _MEDIA
    ),
    "slack": (
        "You are on Slack, which uses its own mrkdwn: *bold*, _italic_, `code`, ``` blocks and "
        "<url|text> links; no headings or tables. " + _MEDIA
    ),
    "signal": (
        "You are on Signal, which shows plain text: no Markdown, headings or tables. Keep "
        "replies brief. " + _MEDIA
    ),
    "email": (
        "You are replying by email. Write complete, well-structured plain-text paragraphs with "
        "a clear first line; avoid Markdown syntax. Files are sent as attachments: " + _MEDIA
    ),
    "sms": (
        "You are replying by SMS: plain text only, no formatting, and as short as the answer "
        "allows (long messages are split and may arrive out of order). Media cannot be sent."
    ),
    "cron": (
        "You are running as a scheduled (cron) job with no user watching. Do the task without "
        "asking questions; your final reply is the job's output and is delivered as it is, so "
        "make it a self-contained report."
    ),
    "bluebubbles": (
        "You are on iMessage (through BlueBubbles): plain text, no Markdown rendering; keep "
        "messages short. " + _MEDIA
    ),
    "mattermost": (
        "You are on Mattermost, which renders Markdown including tables and code blocks. " + _MEDIA
    ),
    "matrix": (
        "You are on Matrix. Most clients render Markdown (lists, code blocks, links); keep "
        "messages readable as plain text too. " + _MEDIA
    ),
    "feishu": (
        "You are on Feishu/Lark. Basic Markdown renders in messages; avoid complex tables and "
        "keep replies compact. " + _MEDIA
    ),
    "weixin": (
        "You are on WeChat, which shows plain text: no Markdown. Keep messages short. " + _MEDIA
    ),
    "wecom": (
        "You are on WeCom (WeChat Work). Markdown support is limited: use plain text with simple "
        "lists. " + _MEDIA
    ),
    "qqbot": (
        "You are on QQ. Messages show as plain text; keep them short and avoid Markdown. " + _MEDIA
    ),
    "yuanbao": (
        "You are on Yuanbao. Basic Markdown renders; keep replies compact. " + _MEDIA
    ),
    "api_server": (
        "You are answering through the Hermes API server; the client decides how to render the "
        "reply, so plain Markdown is the safe choice. Refer to files by absolute path."
    ),
}

#: The same hints without the product's name, for a host that brings its own identity: the
#: agent is told where it runs, not that it is Hermes.
NEUTRAL_HINTS: Mapping[str, str] = {
    "cli": PLATFORM_HINTS["cli"].replace("in a terminal (the Hermes CLI)", "in a terminal"),
    "tui": PLATFORM_HINTS["tui"].replace("the Hermes terminal UI", "a terminal UI"),
    "desktop": PLATFORM_HINTS["desktop"].replace("the Hermes desktop app", "a desktop app"),
    "api_server": PLATFORM_HINTS["api_server"].replace("the Hermes API server", "an API server"),
}

TELEGRAM_RICH_MESSAGES_HINT = (
    "This chat has rich messages switched on: formatting renders fully, so lean into it with "
    "headings, tables and task lists (- [ ] / - [x]) where they make the answer clearer."
)
DESKTOP_TERMINAL_NOTE = (
    "This terminal UI runs inside the Hermes desktop app's embedded terminal pane; the user "
    "sees the same session in the app window."
)
NEUTRAL_DESKTOP_TERMINAL_NOTE = DESKTOP_TERMINAL_NOTE.replace("the Hermes desktop app's", "the desktop app's")


def _telegram_extra(config: Any) -> Mapping[str, Any]:
    def extra(root: Any) -> Mapping[str, Any]:
        if not isinstance(root, Mapping):
            return {}
        node = root.get("telegram")
        node = node.get("extra") if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else {}

    keys = config.section(PLATFORM_KEYS)
    gateway = keys.gateway.get("platforms") if isinstance(keys.gateway, Mapping) else None
    # The top-level ``platforms`` section wins key by key over ``gateway.platforms``.
    return {**extra(gateway), **extra(keys.platforms)}


def default_hint(ctx: PromptContext, key: str) -> str:
    named = ctx.default_identity  # the product is named only beside its own identity
    hint = PLATFORM_HINTS.get(key, "") if named else NEUTRAL_HINTS.get(key, PLATFORM_HINTS.get(key, ""))
    if key == "telegram" and hint:
        try:
            rich = _telegram_extra(ctx.config).get("rich_messages")
        except Exception:  # noqa: BLE001 - an odd config shape keeps the base hint
            rich = False
        if _truthy(rich) if isinstance(rich, str) else bool(rich):
            hint = hint.rstrip() + " " + TELEGRAM_RICH_MESSAGES_HINT
    note = DESKTOP_TERMINAL_NOTE if named else NEUTRAL_DESKTOP_TERMINAL_NOTE
    if key == "tui" and _truthy(ctx.env.get("HERMES_DESKTOP_TERMINAL")) and note not in hint:
        hint = hint.rstrip() + " " + note
    return hint


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def resolve_hint(overrides: Any, key: str, default: str) -> str:
    """Apply ``platform_hints.<key>`` to ``default`` (spec §6 rules)."""
    if not key or not isinstance(overrides, Mapping) or not overrides or key not in overrides:
        return default
    entry = overrides[key]
    if isinstance(entry, str):
        return f"{default}\n\n{entry}".strip() if entry.strip() else default
    if isinstance(entry, Mapping):
        replace = entry.get("replace")
        base = replace.strip() if isinstance(replace, str) and replace.strip() else default
        append = entry.get("append")
        if isinstance(append, str) and append.strip():
            return f"{base}\n\n{append}".strip()
        return base
    return default


@hookimpl(trylast=True)
def hermes_prompt_platform_hint(ctx: PromptContext) -> PromptBlock | list[PromptBlock]:
    key = (ctx.platform or "").lower().strip()
    if not key:
        return []
    text = resolve_hint(ctx.config.section(PLATFORM_KEYS).platform_hints, key, default_hint(ctx, key))
    return PromptBlock(name="platform", text=text) if text.strip() else []
