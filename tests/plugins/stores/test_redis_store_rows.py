"""Archive rows read back from Redis: an object gets its defaults, anything else is refused by name."""

from __future__ import annotations

import json

import pytest

from hermes_plugins.redis_store import _entry


def test_an_object_row_reads_back_with_its_extra_defaulted() -> None:
    row = {"ref": "m1.0", "text": "hello", "seq": 3}
    assert _entry(json.dumps(row)) == {**row, "extra": {}}
    assert _entry(json.dumps({**row, "extra": {"k": 1}}))["extra"] == {"k": 1}


@pytest.mark.parametrize("raw, kind", [("[1, 2]", "list"), ('"text"', "str"), ("7", "int"), ("null", "NoneType")])
def test_a_row_that_is_not_an_object_is_refused_saying_what_it_holds(raw: str, kind: str) -> None:
    # The store guard turns this into a StoreError naming the store; before, a list row failed
    # with "'list' object has no attribute 'setdefault'".
    with pytest.raises(ValueError, match=f"holds a JSON {kind}, not an object"):
        _entry(raw)
