"""The closing line (spec §2.6): day-precision date, zone suffix, optional identity lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_core import PromptContext, load_config
from hermes_core.diagnostics import collecting
from hermes_plugins.session_line import hermes_prompt_session_line, zone_suffix

NOON_UTC = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)


def line(tmp_path: Path, *, clock: Any = lambda: NOON_UTC, env: dict[str, str] | None = None,
         config: dict[str, Any] | None = None, **kwargs: Any) -> str:
    ctx = PromptContext(
        cwd=tmp_path, home=tmp_path, config=load_config(data=config or {}, env={}),
        env=env or {}, clock=clock, **kwargs,
    )
    block = hermes_prompt_session_line(ctx)
    assert block.name == "session_line"
    return block.text


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("UTC", "Conversation started: Friday, January 02, 2026 (UTC, UTC+00:00)"),
        ("America/New_York", "Conversation started: Friday, January 02, 2026 (America/New_York, EST, UTC-05:00)"),
        ("Asia/Kolkata", "Conversation started: Friday, January 02, 2026 (Asia/Kolkata, IST, UTC+05:30)"),
        ("Pacific/Kiritimati", "Conversation started: Saturday, January 03, 2026 (Pacific/Kiritimati, +14, UTC+14:00)"),
    ],
)
def test_date_and_zone_suffix(tmp_path: Path, zone: str, expected: str) -> None:
    assert line(tmp_path, config={"timezone": zone}) == expected


def test_env_zone_wins_over_config(tmp_path: Path) -> None:
    text = line(tmp_path, env={"HERMES_TIMEZONE": "Europe/Paris"}, config={"timezone": "Asia/Tokyo"})
    assert text == "Conversation started: Friday, January 02, 2026 (Europe/Paris, CET, UTC+01:00)"


def test_invalid_zone_warns_and_falls_back_to_server_local(tmp_path: Path) -> None:
    with collecting() as warnings:
        text = line(tmp_path, config={"timezone": "Mars/Olympus"})
    assert text.startswith("Conversation started: ")
    assert "Mars/Olympus" not in text
    assert [w.kind for w in warnings] == ["timezone_invalid"]


def test_server_local_when_no_zone(tmp_path: Path) -> None:
    local = NOON_UTC.astimezone()
    expected_offset = local.strftime("%z")
    text = line(tmp_path)
    assert text.startswith("Conversation started: " + local.strftime("%A, %B %d, %Y"))
    assert f"UTC{expected_offset[:3]}:{expected_offset[3:]}" in text


def test_day_precision_is_stable_within_a_day(tmp_path: Path) -> None:
    morning = line(tmp_path, clock=lambda: datetime(2026, 1, 2, 0, 0, 1, tzinfo=UTC), config={"timezone": "UTC"})
    night = line(tmp_path, clock=lambda: datetime(2026, 1, 2, 23, 59, 59, tzinfo=UTC), config={"timezone": "UTC"})
    after = line(tmp_path, clock=lambda: datetime(2026, 1, 2, 23, 59, 59, tzinfo=UTC) + timedelta(seconds=2),
                 config={"timezone": "UTC"})
    assert morning == night != after
    assert ":" not in morning.split("(")[0].split("started:")[1]  # no hours or minutes


def test_zone_suffix_bits() -> None:
    assert zone_suffix(datetime(2026, 1, 2), None) == ""  # naive: nothing known
    assert zone_suffix(NOON_UTC, None) == " (UTC, UTC+00:00)"
    assert zone_suffix(NOON_UTC, "UTC") == " (UTC, UTC+00:00)"  # the abbreviation repeats the key


@pytest.mark.parametrize(
    ("kwargs", "agent", "expected_lines"),
    [
        ({}, {}, []),
        ({"model": "gpt-4o"}, {}, ["Model: gpt-4o"]),
        ({"model": "m", "provider": "p", "platform": "cli"}, {}, ["Model: m", "Provider: p", "Platform: cli"]),
        ({"session_id": "s1", "model": "m"}, {}, ["Model: m"]),
        ({"session_id": "s1", "model": "m"}, {"pass_session_id": True}, ["Session ID: s1", "Model: m"]),
        ({"session_id": "", "model": "m"}, {"pass_session_id": True}, ["Model: m"]),
        ({"session_id": "s1", "pass_session_id": True}, {}, ["Session ID: s1"]),
        ({"provider": "p"}, {}, ["Provider: p"]),
    ],
)
def test_identity_lines(tmp_path: Path, kwargs: dict[str, Any], agent: dict[str, Any], expected_lines: list[str]) -> None:
    text = line(tmp_path, config={"timezone": "UTC", "agent": agent}, **kwargs)
    assert text.splitlines()[1:] == expected_lines


def test_naive_clock_is_local_time(tmp_path: Path) -> None:
    naive = datetime(2026, 7, 4, 12, 0)
    text = line(tmp_path, clock=lambda: naive, config={"timezone": "UTC"})
    assert text.startswith("Conversation started: " + naive.astimezone(UTC).strftime("%A, %B %d, %Y"))


def test_wall_clock_when_none_injected(tmp_path: Path) -> None:
    text = line(tmp_path, clock=None, config={"timezone": "UTC"})
    today = datetime.now(UTC)
    candidates = {(today + timedelta(days=d)).strftime("%A, %B %d, %Y") for d in (-1, 0)}
    assert any(c in text for c in candidates)
