"""The conformance kit's pairing check has teeth: it fails an engine that keeps the last N."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.config import Config
from hermes_core.engine import ContextEngine
from hermes_core.testing.conformance import check_pairing_at_every_cut, reused_id_history


class LastN(ContextEngine):
    """The naive engine: the system message and the last ``keep`` messages, nothing else."""

    name = "last_n"

    def __init__(self, keep: int) -> None:
        super().__init__(config=Config())
        self.keep = keep

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False) -> list[dict[str, Any]]:
        head = messages[:1] if messages and messages[0].get("role") == "system" else []
        return [*head, *messages[len(head):][-self.keep:]]


@pytest.mark.parametrize("keep", [3, 4, 6])
def test_the_kit_fails_a_keep_the_last_n_engine(keep: int) -> None:
    with pytest.raises(AssertionError, match="broke pairing"):
        check_pairing_at_every_cut(LastN(keep))


def test_the_history_has_parallel_calls_and_reused_ids() -> None:
    history = reused_id_history()
    ids = [c["id"] for m in history for c in m.get("tool_calls") or ()]
    assert len(ids) > len(set(ids))
    assert any(len(m.get("tool_calls") or ()) > 1 for m in history)


def test_the_built_in_compressor_passes() -> None:
    from hermes_core.host import PluginHost

    host = PluginHost.create(env={})
    engine = host.create_engine("compressor", Config())
    engine.update_model("test-model", 8_000)
    check_pairing_at_every_cut(engine)
