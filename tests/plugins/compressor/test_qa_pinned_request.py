"""The newest user request survives a forced compress verbatim.

The compressor used to keep the newest request live (``pinned_request``) but cut it to half
the tail budget with a marker: at a 2,000-token window a 686-character request lost 6 characters
and gained a 140-character marker. The user's words are never cut (issue 28, oversized protected
messages): when the request alone cannot fit, the documented path is a loud
``ContextOverflowError``, not an edit of what the person asked.
"""

from __future__ import annotations

from typing import Any

from compressor_support import assistant, call, make_engine, system, tool, user

REQUEST = "parser " * 98


def the_briefs_history() -> list[dict[str, Any]]:
    return [
        user("fix the parser"),
        user(REQUEST),
        assistant("", call("c1", "read_file", path="parser.py")),
        tool("c1", "x" * 3_000),
        assistant("fix the parser"),
    ]


def with_an_older_round() -> list[dict[str, Any]]:
    older = [
        user("old question 0"),
        assistant("", call("o0", "read_file", path="f0.py")),
        tool("o0", "content 0 " * 200),
        assistant("done 0"),
    ]
    return [system(), *older, *the_briefs_history()]


def kept_verbatim(out: list[dict[str, Any]]) -> bool:
    return any(m.get("role") == "user" and m.get("content") == REQUEST for m in out)


def test_a_forced_compress_of_the_briefs_history_keeps_the_request() -> None:
    # Everything but the call and its result is protected here (head, pinned request, tail):
    # whether the engine condenses them or answers "nothing to compress", the request stays.
    engine = make_engine(2_000)
    out = engine.compress(the_briefs_history(), force=True)
    report = engine.last_compression_report
    if report["status"] == "compressed":
        assert report["after"]["tokens"] < report["before"]["tokens"]
    assert kept_verbatim(out)


def test_a_forced_compress_never_cuts_the_newest_request() -> None:
    engine = make_engine(2_000)
    out = engine.compress(with_an_older_round(), force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert kept_verbatim(out)


def test_the_same_history_keeps_the_request_where_the_tail_budget_holds_it() -> None:
    # The control: at 4,000 tokens the tail budget (680) holds the request whole, so the
    # test above fails for the cut alone, not for the shape of the history.
    engine = make_engine(4_000)
    out = engine.compress(with_an_older_round(), force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert kept_verbatim(out)
