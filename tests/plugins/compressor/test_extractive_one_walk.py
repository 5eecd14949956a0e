"""The extractive summary reads the middle once (issue 29, "Realistic cost").

When an earlier summary sat among the turns to condense (a ``SUMMARY_ANCHOR`` turn), the
handoff used to read the turns three times: all of them, then the older side and the newer side
on their own for their requests and summaries. One walk now notes what the older side held
when it passes the anchor. These tests hold the walk to once and its notes to what a walk of
each side on its own finds.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins.compressor import extractive, sections
from hermes_plugins.compressor import facts as facts_module
from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR

from compressor_support import assistant, call, tool, user
from hypothesis_budget import examples

ANCHOR = {"role": "system", "content": SUMMARY_ANCHOR}
OTHER_SUMMARY = "[CONTEXT SUMMARY]: earlier work\n## User requests\n- keep the API stable"

_REQUESTS = st.sampled_from(["add the ledger", "run the tests", "don't touch src/api.py",
                             "add the ledger", "use postgres instead of sqlite", OTHER_SUMMARY])


@st.composite
def sides(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(older turns, newer turns): user requests (some repeated, some another agent's
    summary) and calls with results. The newer side opens with an assistant turn, as the
    engine's middle does after the head it condensed before."""
    def side(prefix: str, opens_with_assistant: bool) -> list[dict[str, Any]]:
        turns: list[dict[str, Any]] = [assistant("Picking up.")] if opens_with_assistant else []
        for i in range(draw(st.integers(0, 5))):
            turns.append(user(draw(_REQUESTS)))
            if draw(st.booleans()):
                turns.append(assistant("", call(f"{prefix}{i}", "terminal", command="pytest -q")))
                turns.append(tool(f"{prefix}{i}", draw(st.sampled_from(["ok", '{"output": "E", "exit_code": 1}']))))
            else:
                turns.append(assistant(draw(st.sampled_from(["Done.", "Shall I go on?"]))))
        return turns

    return side("o", False), side("n", True)


def _counting_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    walks: list[int] = []
    collect = facts_module.Facts._collect

    def counted(self: Any, turns: Any) -> None:
        walks.append(len(turns))
        collect(self, turns)

    monkeypatch.setattr(facts_module.Facts, "_collect", counted)
    return walks


def test_a_handoff_with_an_anchor_walks_the_turns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    older = [user("first: keep the API stable"), assistant("", call("c1", "write_file", path="src/old.py")),
             tool("c1", "ok")]
    newer = [assistant("Picking up."), user("then: add the ledger"), assistant("Done.")]
    walks = _counting_walks(monkeypatch)
    text = build_handoff([*older, ANCHOR, *newer], previous_summary="## User requests\n- in between")
    assert walks == [len(older) + 1 + len(newer)]
    requests = text.split("## User requests\n", 1)[1].split("\n\n", 1)[0]
    assert requests.index("first: keep") < requests.index("in between")
    assert "## Latest user request\nthen: add the ledger" in text


@given(sides())
@settings(max_examples=examples(80), deadline=None)
def test_the_walk_notes_what_each_side_read_on_its_own_holds(
    both: tuple[list[dict[str, Any]], list[dict[str, Any]]]
) -> None:
    older, newer = both
    facts = facts_module.Facts([*older, ANCHOR, *newer])
    alone_older = facts_module.Facts(older)
    alone_newer = facts_module.Facts(newer)
    assert facts.anchor == len(older)
    assert facts.older_requests == alone_older.requests
    assert facts.older_latest == alone_older.latest_request
    assert facts.summaries[: facts.older_summaries] == alone_older.summaries
    assert facts.summaries[facts.older_summaries:] == alone_newer.summaries
    assert facts.latest_request == alone_newer.latest_request


@given(sides())
@settings(max_examples=examples(40), deadline=None)
def test_without_requests_after_the_anchor_the_latest_is_the_previous_summarys_then_the_older(
    both: tuple[list[dict[str, Any]], list[dict[str, Any]]]
) -> None:
    older, _newer = both
    turns = [*older, ANCHOR, assistant("Picking up.")]
    with_previous = build_handoff(turns, previous_summary="## Latest user request\nship the release\n")
    assert "## Latest user request\nship the release\n" in with_previous
    alone = facts_module.Facts(older)
    if alone.latest_request is not None:
        latest = build_handoff(turns).split("## Latest user request\n", 1)[1]
        assert latest.startswith(alone.latest_request.strip("\n")[:100])


def test_previous_errors_are_rejudged_against_one_set_of_successes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Built once per merge, not once per previous item (the merge was quadratic at 100k messages).
    built: list[int] = []
    key_set = facts_module.Facts.succeeded_key_set

    def counted(self: Any) -> set[str]:
        built.append(1)
        return key_set(self)

    monkeypatch.setattr(facts_module.Facts, "succeeded_key_set", counted)
    previous = "## Errors\n" + "".join(f"- `make t{i}` -> exit 2: boom — still failing\n" for i in range(50))
    turns = [user("fix the build"), assistant("", call("c1", "terminal", command="make t3")), tool("c1", "ok")]
    text = build_handoff(turns, previous_summary=previous)
    assert len(built) == 1
    assert "`make t3` -> exit 2: boom — resolved" in text
    assert "`make t4` -> exit 2: boom — still failing" in text


_ITEMS = st.lists(st.sampled_from(["a", " a", "b ", "c", "", "  ", "d"]), max_size=6)


@given(st.lists(_ITEMS, max_size=6))
@settings(max_examples=examples(100), deadline=None)
def test_merging_one_group_at_a_time_is_merging_them_all_at_once(groups: list[list[str]]) -> None:
    merged: dict[str, None] = {}
    for group in groups:
        sections.merge_into(merged, group)
    assert list(merged) == sections.merge_items(*groups)


def test_the_summaries_among_the_turns_merge_in_order_a_repeated_item_at_its_newest_place() -> None:
    summaries = [f"[CONTEXT SUMMARY]: part {i}\n## Decisions\n- rule {i}\n- keep the API stable\n" for i in range(3)]
    turns: list[dict[str, Any]] = []
    for i, text in enumerate(summaries):
        turns += [user(text), assistant(f"Continuing {i}.")]
    decisions = build_handoff(turns).split("## Decisions and constraints\n", 1)[1].split("\n\n", 1)[0]
    assert decisions.splitlines() == ["- rule 0", "- rule 1", "- rule 2", "- keep the API stable"]


def _recording_redact(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = extractive.redact

    def recording(text: str) -> str:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(extractive, "redact", recording)
    monkeypatch.setattr(facts_module, "redact", recording)
    return seen


@pytest.mark.parametrize("body", ['{"output": "Error: boom", "exit_code": 2}', '{"output": "ok", "exit_code": 0}'])
def test_a_long_command_is_redacted_once_for_all_its_clips(monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    # Clipped for its key (160), its failure line (160) or its success count (80): one redaction.
    command = "export TOKEN=ghp_" + "Zb4" * 12 + " && " + " && ".join(f"make step{i}" for i in range(40))
    turns = [user("build it"), assistant("", call("c1", "terminal", command=command)), tool("c1", body)]
    seen = _recording_redact(monkeypatch)
    text = build_handoff(turns)
    assert seen.count(command) == 1
    assert "Zb4Zb4" not in text and "make step0" in text


def test_the_latest_request_is_redacted_once_for_its_verbatim_form_and_its_item(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once as the walk reads it (its request item), once for the summary (verbatim and item).
    request = "deploy with the key sk-proj-" + "Q7x" * 12 + "\n" + "and keep the rollout slow " * 20
    seen = _recording_redact(monkeypatch)
    text = build_handoff([user("first, set up the bucket"), assistant("Done."), user(request), assistant("On it.")])
    assert seen.count(request) == 2
    assert "Q7xQ7x" not in text and "## Latest user request\ndeploy with the key sk-proj-[REDACTED]" in text
