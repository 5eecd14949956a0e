"""Opt-in pytest fixtures for plugin and engine authors: ``pytest_plugins = ["hermes_core.testing"]``.

``plugin_host``, ``register_plugin``, ``capture_events``, ``hook_recorder``, ``hermes_home`` and
``offline_tokenizer`` (docs/plugin-guide.md, "Testing plugins"); the ``EngineConformance`` kit
lives in ``hermes_core.testing.conformance``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.hookguard import HookCall
from hermes_core.host import PluginHost
from hermes_core.logging import ROOT
from hermes_core.tokens import ExactTokenizer, exact_tokenizer


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def plugin_host(monkeypatch: pytest.MonkeyPatch) -> PluginHost:
    for var in ("HERMES_DISABLE_PLUGINS", "HERMES_STRICT_PLUGINS", "HERMES_TRACE_HOOKS"):
        monkeypatch.delenv(var, raising=False)
    return PluginHost.create(only=())


@pytest.fixture
def register_plugin(plugin_host: PluginHost) -> Iterator[Callable[[object, str], object]]:
    names: list[str] = []

    def register(obj: object, name: str) -> object:
        plugin_host.register(obj, name)
        names.append(name)
        return obj

    yield register
    for name in names:
        plugin_host.unregister(name)


@pytest.fixture
def capture_events() -> Iterator[list[dict[str, Any]]]:
    """Every hermes-core log event of the test, debug included, as dicts (``event``,
    ``log_level`` and the context keys), whatever the process's logging set-up."""
    events: list[dict[str, Any]] = []

    class _Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            event = getattr(record, "hermes_event", None)
            events.append(dict(event) if event else {"event": record.getMessage(),
                                                      "log_level": record.levelname.lower()})

    root = logging.getLogger(ROOT)
    handler = _Capture(logging.DEBUG)
    saved = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield events
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)


class HookRecorder(list[HookCall]):
    """The ``HookCall`` records of ``plugin_host``: one per implementation call, in order."""

    def names(self) -> list[str]:
        """Hook names in call order, one entry per hook call (consecutive repeats folded)."""
        out: list[str] = []
        for call in self:
            if not out or out[-1] != call.hook or call.wrapper:
                out.append(call.hook)
        return out

    def by_hook(self, hook: str) -> list[HookCall]:
        return [call for call in self if call.hook == hook]


@pytest.fixture
def hook_recorder(plugin_host: PluginHost) -> Iterator[HookRecorder]:
    calls = HookRecorder()
    undo = plugin_host.observe(calls.append)
    yield calls
    undo()


@pytest.fixture(scope="session")
def offline_tokenizer() -> ExactTokenizer:
    return exact_tokenizer()
