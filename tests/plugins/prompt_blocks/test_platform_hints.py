"""Platform hints (spec §6): the built-in table, Telegram rich messages, config overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import PromptContext, load_config
from hermes_plugins.platform_hints import (
    DESKTOP_TERMINAL_NOTE,
    PLATFORM_HINTS,
    TELEGRAM_RICH_MESSAGES_HINT,
    hermes_prompt_platform_hint,
    resolve_hint,
)


def hint(tmp_path: Path, platform: str, config: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> str | None:
    ctx = PromptContext(
        cwd=tmp_path, home=tmp_path, config=load_config(data=config or {}, env={}),
        platform=platform, env=env or {}, default_identity=True,  # the default prompt's hints
    )
    result = hermes_prompt_platform_hint(ctx)
    if isinstance(result, list):
        assert result == []
        return None
    assert result.name == "platform"
    return result.text


@pytest.mark.parametrize(
    "platform",
    ["cli", "tui", "desktop", "telegram", "discord", "whatsapp", "whatsapp_cloud", "slack", "signal",
     "email", "sms", "cron", "bluebubbles", "mattermost", "matrix", "feishu", "weixin", "wecom",
     "qqbot", "yuanbao", "api_server"],
)
def test_every_listed_platform_has_a_hint(tmp_path: Path, platform: str) -> None:
    text = hint(tmp_path, platform)
    assert text == PLATFORM_HINTS[platform] and len(text) > 40


def test_key_is_normalised(tmp_path: Path) -> None:
    assert hint(tmp_path, "  Telegram ") == PLATFORM_HINTS["telegram"]


def test_no_platform_or_unknown_platform_has_no_hint(tmp_path: Path) -> None:
    assert hint(tmp_path, "") is None
    assert hint(tmp_path, "carrier-pigeon") is None


def test_media_and_local_cron_explanations() -> None:
    assert "MEDIA:/absolute/path" in PLATFORM_HINTS["telegram"]
    assert "MEDIA:/absolute/path" in PLATFORM_HINTS["whatsapp"]
    assert "cron" in PLATFORM_HINTS["cli"] and "locally" in PLATFORM_HINTS["cli"]
    assert "cron" in PLATFORM_HINTS["tui"]


@pytest.mark.parametrize(
    ("config", "rich"),
    [
        ({}, False),
        ({"platforms": {"telegram": {"extra": {"rich_messages": False}}}}, False),
        ({"gateway": {"platforms": {"telegram": {"extra": {"rich_messages": True}}}}}, True),
        ({"platforms": {"telegram": {"extra": {"rich_messages": True}}}}, True),
        (
            {"gateway": {"platforms": {"telegram": {"extra": {"rich_messages": False}}}},
             "platforms": {"telegram": {"extra": {"rich_messages": True}}}},
            True,
        ),
        (
            {"gateway": {"platforms": {"telegram": {"extra": {"rich_messages": True}}}},
             "platforms": {"telegram": {"extra": {"rich_messages": False}}}},
            False,
        ),
        ({"platforms": {"telegram": {"extra": "yes please"}}}, False),
        ({"platforms": {"telegram": {"extra": {"rich_messages": "on"}}}}, True),
        ({"platforms": {"telegram": "odd"}}, False),
    ],
)
def test_telegram_rich_messages(tmp_path: Path, config: dict[str, Any], rich: bool) -> None:
    text = hint(tmp_path, "telegram", config)
    expected = PLATFORM_HINTS["telegram"].rstrip() + " " + TELEGRAM_RICH_MESSAGES_HINT
    assert text == (expected if rich else PLATFORM_HINTS["telegram"])
    if rich:
        assert "lean into it" in text and "task lists" in text


def test_rich_messages_only_for_telegram(tmp_path: Path) -> None:
    config = {"platforms": {"discord": {"extra": {"rich_messages": True}}}}
    assert hint(tmp_path, "discord", config) == PLATFORM_HINTS["discord"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "BASE"),
        ({"other": "x"}, "BASE"),
        ({"cli": "More."}, "BASE\n\nMore."),
        ({"cli": "   "}, "BASE"),
        ({"cli": {"replace": "  NEW  "}}, "NEW"),
        ({"cli": {"replace": "NEW", "append": "More."}}, "NEW\n\nMore."),
        ({"cli": {"append": "More."}}, "BASE\n\nMore."),
        ({"cli": {"replace": "  ", "append": " "}}, "BASE"),
        ({"cli": {"replace": 3}}, "BASE"),
        ({"cli": 42}, "BASE"),
        ({"cli": None}, "BASE"),
        ("not a mapping", "BASE"),
    ],
)
def test_resolve_hint_rules(overrides: Any, expected: str) -> None:
    assert resolve_hint(overrides, "cli", "BASE") == expected


def test_empty_key_ignores_overrides() -> None:
    assert resolve_hint({"": "x"}, "", "BASE") == "BASE"


def test_overrides_from_config(tmp_path: Path) -> None:
    assert hint(tmp_path, "discord", {"platform_hints": {"discord": "Use our emoji."}}) == (
        PLATFORM_HINTS["discord"] + "\n\nUse our emoji."
    )
    assert hint(tmp_path, "slack", {"platform_hints": {"slack": {"replace": "Plain text only."}}}) == "Plain text only."
    # A platform without a built-in hint gets one from config alone.
    assert hint(tmp_path, "irc", {"platform_hints": {"irc": "Lines under 400 chars."}}) == "Lines under 400 chars."


def test_override_applies_after_telegram_rich(tmp_path: Path) -> None:
    config = {
        "platforms": {"telegram": {"extra": {"rich_messages": True}}},
        "platform_hints": {"telegram": {"append": "Sign off with ☤."}},
    }
    text = hint(tmp_path, "telegram", config)
    assert text is not None and TELEGRAM_RICH_MESSAGES_HINT in text and text.endswith("\n\nSign off with ☤.")


def test_tui_desktop_clarifier(tmp_path: Path) -> None:
    assert DESKTOP_TERMINAL_NOTE not in (hint(tmp_path, "tui") or "")
    text = hint(tmp_path, "tui", env={"HERMES_DESKTOP_TERMINAL": "1"})
    assert text is not None and text.count(DESKTOP_TERMINAL_NOTE) == 1
    assert DESKTOP_TERMINAL_NOTE not in (hint(tmp_path, "cli", env={"HERMES_DESKTOP_TERMINAL": "1"}) or "")
