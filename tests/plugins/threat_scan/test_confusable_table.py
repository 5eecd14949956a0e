"""The confusables table is cached once for the process: no caller can change it for the others."""

from __future__ import annotations

import pytest

from hermes_plugins import threat_text

CYRILLIC_A = ord("\u0430")


def test_the_shared_table_cannot_be_changed() -> None:
    table = threat_text.confusable_map()
    assert table[CYRILLIC_A] == "a"
    with pytest.raises(TypeError):
        table[CYRILLIC_A] = "x"  # type: ignore[index]
    with pytest.raises((TypeError, AttributeError)):
        table.clear()  # type: ignore[attr-defined]
    with pytest.raises((TypeError, AttributeError)):
        table.update({CYRILLIC_A: "x"})  # type: ignore[attr-defined]
    assert threat_text.confusable_map() is table and table[CYRILLIC_A] == "a"
    assert threat_text.skeleton("Ign\u043er\u0435 \u0430ll") == "ignore all"


def test_a_copy_is_the_callers_own() -> None:
    mine = dict(threat_text.confusable_map())
    mine[CYRILLIC_A] = "x"
    assert threat_text.confusable_map()[CYRILLIC_A] == "a"
    assert "\u0430".translate(mine) == "x" and threat_text.skeleton("\u0430") == "a"
