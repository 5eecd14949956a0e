"""The line that closes the prompt: the date, then Session ID / Model / Provider / Platform.

Day precision on purpose (spec §2.6): an hour or minute would make every rebuild of the same
day's session produce different bytes and miss the provider's prefix cache. A model that needs
the exact time can ask a tool.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import attrs

from hermes_core.plugin import ConfigSection, PromptBlock, PromptContext, field, hookimpl, record_warning, string


@attrs.frozen(kw_only=True)
class SessionLineKeys:
    timezone: str | None = field(None, string(optional=True), doc="IANA zone of the date line")


SESSION_LINE = ConfigSection(
    name="", model=SessionLineKeys, doc="The date/session/model line.", env={"HERMES_TIMEZONE": "timezone"},
)


@hookimpl
def hermes_config_sections() -> ConfigSection[SessionLineKeys]:
    return SESSION_LINE


def configured_zone(ctx: PromptContext) -> tuple[str | None, tzinfo | None]:
    """(IANA key, zone) from ``$HERMES_TIMEZONE`` (the session's env) else ``timezone``."""
    key = (ctx.env.get("HERMES_TIMEZONE") or "").strip() or (ctx.config.section(SESSION_LINE).timezone or "").strip()
    if not key:
        return None, None
    try:
        return key, ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        record_warning(
            "timezone_invalid",
            f"unknown time zone {key!r} ({type(exc).__name__}); using the server's local time",
            plugin="session_line",
            timezone=key,
        )
        return None, None


def current_time(ctx: PromptContext) -> tuple[datetime, str | None]:
    """Now (from ``ctx.clock`` when injected) in the configured zone, else server-local."""
    now = ctx.clock() if ctx.clock is not None else datetime.now(UTC)
    key, zone = configured_zone(ctx)
    if zone is not None:
        return now.astimezone(zone), key
    return now.astimezone(), None


def zone_suffix(now: datetime, key: str | None) -> str:
    """`` (<key>, <abbrev>, UTC±HH:MM)`` with repeats dropped; ``""`` for a naive time."""
    bits: list[str] = []
    if key:
        bits.append(key)
    abbrev = now.strftime("%Z") if now.tzinfo is not None else ""
    if abbrev and abbrev != key:
        bits.append(abbrev)
    offset = now.strftime("%z") if now.tzinfo is not None else ""
    if offset:
        bits.append(f"UTC{offset[:3]}:{offset[3:5]}")
    return f" ({', '.join(bits)})" if bits else ""


def session_line(ctx: PromptContext, now: datetime, key: str | None) -> str:
    line = "Conversation started: " + now.strftime("%A, %B %d, %Y") + zone_suffix(now, key)
    if (ctx.pass_session_id or ctx.config.agent.pass_session_id) and ctx.session_id:
        line += f"\nSession ID: {ctx.session_id}"
    for label, value in (("Model", ctx.model), ("Provider", ctx.provider), ("Platform", ctx.platform)):
        if value:
            line += f"\n{label}: {value}"
    return line


@hookimpl(trylast=True)
def hermes_prompt_session_line(ctx: PromptContext) -> PromptBlock:
    now, key = current_time(ctx)
    return PromptBlock(name="session_line", text=session_line(ctx, now, key))
