"""The plugin-author test kit's paths the rest of the suite never reached: ``HookRecorder.names``
(documented in docs/plugin-guide.md), ``xfail_reasons`` of the engine conformance suite, and
the pairing check skipping prefixes that are not valid input."""

from __future__ import annotations

import types
from typing import Any

import pytest

from hermes_core.hookguard import HookCall
from hermes_core.testing import HookRecorder
from hermes_core.testing.conformance import EngineConformance, check_pairing_at_every_cut


def _call(hook: str, wrapper: bool = False) -> HookCall:
    return HookCall(hook=hook, plugin="p", wrapper=wrapper, args={}, result="None", seconds=0.0)


def test_hook_recorder_names_fold_repeats_but_not_wrappers() -> None:
    calls = HookRecorder([_call("a"), _call("a"), _call("b"), _call("b", wrapper=True), _call("a")])
    assert calls.names() == ["a", "b", "b", "a"]
    assert calls.by_hook("b") == [calls[2], calls[3]]


class _Suite(EngineConformance):
    engine_name = "compressor"
    xfail_reasons = {"known gap": ["test_one"]}


def test_xfail_reasons_mark_the_named_tests_as_strict_expected_failures() -> None:
    marks: list[Any] = []
    apply = EngineConformance.__dict__["_apply_xfails"].__wrapped__
    for name in ("test_one", "test_two"):
        request = types.SimpleNamespace(node=types.SimpleNamespace(originalname=name), applymarker=marks.append)
        apply(_Suite(), request)
    [mark] = marks
    assert mark.kwargs == {"reason": "known gap", "strict": True} and mark.name == "xfail"


class _MustNotRun:
    def compress(self, messages: list[dict[str, Any]], force: bool = False) -> list[dict[str, Any]]:
        raise AssertionError("an invalid prefix reached the engine")


def test_the_pairing_check_skips_prefixes_that_are_not_valid_input() -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "orphan", "content": "a result without its call"},
        {"role": "assistant", "content": "done"},
    ]
    check_pairing_at_every_cut(_MustNotRun(), history)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="invalid prefix"):
        check_pairing_at_every_cut(_MustNotRun(), history[:1] + history[2:])  # type: ignore[arg-type]
