"""The mid-turn steering marker (spec §11)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.steer import (
    STEER_MARKER_CLOSE,
    STEER_MARKER_OPEN,
    STEER_PLACEHOLDER,
    format_steer_marker,
    steer_marker_example,
)

from hypothesis_budget import examples


def test_marker_constants() -> None:
    assert STEER_MARKER_CLOSE == "[/OUT-OF-BAND USER MESSAGE]"
    assert STEER_MARKER_OPEN.startswith("[OUT-OF-BAND USER MESSAGE — ")
    assert "not output of the tool" in STEER_MARKER_OPEN


def test_format_shape() -> None:
    assert format_steer_marker("stop, use the staging db") == (
        "\n\n" + STEER_MARKER_OPEN + "\nstop, use the staging db\n" + STEER_MARKER_CLOSE
    )


def test_example_is_the_marker_with_a_placeholder() -> None:
    assert steer_marker_example() == f"{STEER_MARKER_OPEN}\n{STEER_PLACEHOLDER}\n{STEER_MARKER_CLOSE}"


@settings(max_examples=examples(100), deadline=None)
@given(st.text())
def test_the_message_is_kept_verbatim_between_the_markers(text: str) -> None:
    framed = format_steer_marker(text)
    assert framed.startswith("\n\n" + STEER_MARKER_OPEN + "\n")
    assert framed.endswith("\n" + STEER_MARKER_CLOSE)
    assert framed[len("\n\n" + STEER_MARKER_OPEN + "\n"): -len("\n" + STEER_MARKER_CLOSE)] == text


def test_appending_to_a_tool_result_keeps_it_intact() -> None:
    result = '{"exit": 0, "stdout": "ok"}'
    combined = result + format_steer_marker("also run the linter")
    assert combined.startswith(result + "\n\n[OUT-OF-BAND USER MESSAGE")
