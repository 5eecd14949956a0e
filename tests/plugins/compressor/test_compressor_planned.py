"""The free passes plan the one-liners of old results and build only those that are needed.

``plan_free_passes`` does the whole walk of ``prune_tool_results`` but leaves the new one-liners
to build on demand; the engine builds what the boundaries measure, what it returns and what an
LLM summariser's prompt shows, and hands the condensed results raw to the extractive summary,
which reads each as its one-liner. None of this may change a byte of the output: the
properties below compare the engine with the plan against the engine with every one-liner
built up front (the eager form), for the extractive summariser and for an LLM summariser
whose prompt is recorded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.summarizer import SummaryRequest
from hermes_plugins._common import failures
from hermes_plugins._common.toolkinds import DATA_TOOLS
from hermes_plugins.compressor import engine as engine_module
from hermes_plugins.compressor import oneliners
from hermes_plugins.compressor import plan as plan_module
from hermes_plugins.compressor.extractive import ExtractiveSummarizer, build_handoff
from hermes_plugins.compressor.oneliners import looks_demoted
from hermes_plugins.compressor.plan import PlannedTurns, TurnDemotions
from hermes_plugins.compressor.prune import DUPLICATE_PREFIX, plan_free_passes, prune_tool_results

from compressor_support import assistant, make_engine, system, tool, user, work_history
from hypothesis_budget import examples

TOOLS = ("terminal", "read_file", "Write", "Edit", "TodoWrite", "str_replace_editor", "Grep",
         "search_files", "acme_lookup", "Bash")
BODY = "".join(f"line {i}: some output of the tool, value={i * 7}\n" for i in range(120))

_contents = st.one_of(
    st.integers(10, 3_000).map(lambda n: BODY[:n]),  # plain output, short or long
    st.integers(220, 2_500).map(lambda n: json.dumps({"output": BODY[:n], "exit_code": 1})),
    st.integers(220, 2_500).map(lambda n: json.dumps({"output": BODY[:n], "exit_code": 0, "error": None})),
    st.integers(220, 2_500).map(lambda n: BODY[:n] + 'Traceback (most recent call last):\n  File "src/app.py", '
                                "line 41, in run\nKeyError: 'currency_code'\n"),
    st.integers(220, 2_000).map(lambda n: "Error: the build failed; see above\n" + BODY[:n]),
    st.integers(220, 2_000).map(lambda n: "Found 3 files\n" + BODY[:n]),
    st.integers(220, 1_500).map(lambda n: "MEDIA:/tmp/shot.png " + BODY[:n]),
)
_arguments = st.fixed_dictionaries({}, optional={
    "command": st.sampled_from(["pytest -q", "make; make test", "ls -la src", "exit 3", "echo '` -> exit 2; boom'"]),
    # Paths that make a line hold "; " or run over two lines.
    "path": st.sampled_from(["src/app.py", "docs/a; b.md", "tests/test_x.py", "a\nError: b.md"]),
    "old_string": st.just("a\nb"),
    "todos": st.just([{"content": "fix it", "status": "in_progress"}, {"content": "ship", "status": "pending"}]),
    "pattern": st.sampled_from(["TODO", "def run"]),
})


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    """Valid histories: reused ids (across and within assistant messages), parallel calls,
    results out of call order, failed and successful results, duplicates, an earlier summary."""
    messages: list[dict[str, Any]] = [system()]
    seen: list[str] = []
    turns = draw(st.integers(3, 14))
    # Sometimes the newest turns are calls alone: the latest reply with text is far back, and
    # the tail reaches back to it past what the cut measured.
    quiet = draw(st.integers(0, 4))
    for turn in range(turns):
        if turn == 0 or draw(st.booleans()):
            messages.append(user(draw(st.sampled_from(
                ["please fix the failing test", "now run the whole suite", "Don't touch the API; keep it stable.",
                 "what does src/app.py do?"]))))
        if turn == 2 and draw(st.integers(0, 3)) == 0:
            messages.append({"role": "user", "content": "## Errors\n- old failure — still failing",
                             "_summary": "hermes-core"})
        for _step in range(draw(st.integers(1, 3))):
            count = draw(st.integers(1, 3))
            ids = [draw(st.sampled_from(["c1", "c2", "call_0", "t"])) for _ in range(count)]
            # Arguments as JSON text, or (some hosts) as the object itself.
            calls = [{"id": ident, "type": "function", "function": {
                "name": draw(st.sampled_from(TOOLS)),
                "arguments": draw(_arguments.map(json.dumps) | _arguments)}} for ident in ids]
            said = "" if turn >= turns - quiet else draw(st.sampled_from(["", "Looking.", "Shall I continue?"]))
            messages.append(assistant(said, *calls))
            order = list(range(count))
            if len(set(ids)) == count and draw(st.booleans()):
                order.reverse()  # distinct ids: any order pairs the same way
            for k in order:
                if seen and draw(st.integers(0, 5)) == 0:
                    content = draw(st.sampled_from(seen))[:]  # a duplicate (an equal string)
                else:
                    content = draw(_contents)
                    seen.append(content)
                if draw(st.integers(0, 15)) == 0:  # a screenshot result
                    content = [{"type": "text", "text": "page"},
                               {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
                result = tool(ids[k], content)
                if draw(st.integers(0, 6)) == 0:
                    result["_is_error"] = True
                messages.append(result)
        if turn < turns - quiet and draw(st.integers(0, 3)):
            messages.append(assistant(draw(st.sampled_from(["Done.", "Fixed it. Anything else?", "ok"]))))
    if draw(st.booleans()):
        messages.append(user("and now?"))
    return messages


def _eager(messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    """The free passes with every one-liner built before anything reads them (the old order)."""
    plan = plan_free_passes(messages, **kwargs)
    plan.materialize_all()
    return plan


class _Recording:
    """An LLM-like summariser (no ``reads_raw_turns``) that records its prompts."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, config: Any, *, model: str | None = None) -> Any:
        prompts = self.prompts

        class Summarizer:
            name = "recording"

            def summarize(self, request: SummaryRequest) -> str:
                prompts.append(request.prompt)
                return "## Latest user request\nsomething\n## Errors\n- none"

        return Summarizer()


class _Host:
    def __init__(self, factory: Any) -> None:
        self.factory = factory

    def summarizers(self) -> dict[str, Any]:
        return {"recording": self.factory}


def _run(messages: list[dict[str, Any]], window: int, force: bool, eager: bool, llm: _Recording | None) -> Any:
    failures.clear_cache()  # each side judges from scratch (the memo changes no result)
    data = {"compression": {"summary": {"provider": "recording"}}} if llm is not None else None
    engine = make_engine(window, data=data, host=_Host(llm) if llm is not None else None)
    original = engine_module.plan_free_passes
    if eager:
        engine_module.plan_free_passes = _eager
    try:
        out = engine.compress(list(messages), force=force)
    finally:
        engine_module.plan_free_passes = original
    report = dict(engine.last_compression_report or {})
    report.pop("timings_ms", None)
    report.pop("elapsed_ms", None)
    return out, report


def _same_compaction(messages: list[dict[str, Any]], window: int, force: bool, llm: bool) -> None:
    lazy_llm, eager_llm = (_Recording(), _Recording()) if llm else (None, None)
    planned, planned_report = _run(messages, window, force, False, lazy_llm)
    built, built_report = _run(messages, window, force, True, eager_llm)
    assert json.dumps(planned, sort_keys=True, default=str) == json.dumps(built, sort_keys=True, default=str)
    if lazy_llm is not None and eager_llm is not None:
        assert lazy_llm.prompts == eager_llm.prompts  # byte-identical prompts
    # The report counts differently (see test_the_report_counts...), everything else is equal.
    for report in (planned_report, built_report):
        report["phases"] = {k: v for k, v in report["phases"].items() if not k.startswith("demoted")}
    assert planned_report == built_report


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages=histories(), window=st.sampled_from([6_000, 10_000, 16_000, 32_000]), force=st.booleans())
def test_the_planned_free_passes_give_the_eager_output_with_the_extractive_summary(
    messages: list[dict[str, Any]], window: int, force: bool
) -> None:
    _same_compaction(messages, window, force, llm=False)


@settings(max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages=histories(), window=st.sampled_from([6_000, 10_000, 16_000, 32_000]), force=st.booleans())
def test_the_planned_free_passes_give_an_llm_summariser_the_same_prompt(
    messages: list[dict[str, Any]], window: int, force: bool
) -> None:
    _same_compaction(messages, window, force, llm=True)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages=histories(), tail=st.integers(200, 6_000), count=st.integers(1, 12))
def test_materialising_the_plan_is_prune_tool_results(messages: list[dict[str, Any]], tail: int, count: int) -> None:
    out, stats = prune_tool_results(messages, protect_tail_count=count, protect_tail_tokens=tail)
    plan = plan_free_passes(messages, protect_tail_count=count, protect_tail_tokens=tail)
    # Reading through the view builds exactly the lines the eager form has, in any order.
    for i in reversed(range(len(messages))):
        assert plan.view[i] == out[i]
    assert plan.materialize_all() == out and plan.stats == stats
    assert plan.demoted_between(0, len(messages)) == stats.demoted


def test_the_condensed_results_reach_the_extractive_summary_raw() -> None:
    messages = work_history(100)
    plan = plan_free_passes(messages, protect_tail_count=20, protect_tail_tokens=4_000)
    assert len(plan.planned) > 20
    # Nothing was built: every planned result is still the very input message.
    assert all(plan.messages[i] is messages[i] for i in plan.planned)
    engine = make_engine(32_000)
    seen: list[Any] = []
    real = ExtractiveSummarizer.summarize

    def spy(self: Any, request: SummaryRequest) -> str:
        seen.append(request.turns)
        return real(self, request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ExtractiveSummarizer, "summarize", spy)
        engine.compress(messages, force=True)
    (turns,) = seen
    assert isinstance(turns, PlannedTurns) and turns.demotions is not None
    raw = [t for t in turns if t.get("role") == "tool" and any(t is m for m in messages)]
    assert len(raw) == len(turns.demotions.positions) > 20
    assert engine.last_compression_report["phases"]["demoted_in_summary"] >= len(raw)


def test_the_report_counts_one_liners_kept_and_results_condensed() -> None:
    messages = work_history(100)
    engine = make_engine(64_000)
    out = engine.compress(messages, force=True)
    phases = engine.last_compression_report["phases"]
    kept = sum(1 for m in out if m.get("role") == "tool" and m["content"].startswith("[read_file] read "))
    assert phases["demoted"] == kept
    tail_raw = sum(1 for m in out if m.get("role") == "tool" and m in messages)
    assert phases["demoted_in_summary"] == 100 - kept - tail_raw > 0


def test_the_extractive_summary_reads_a_planned_result_as_its_one_liner() -> None:
    # A failed result condensed raw gives the very handoff its one-liner gives.
    messages = [user("run it"), assistant("", {"id": "a", "type": "function", "function": {
        "name": "terminal", "arguments": '{"command": "pytest -k ledger"}'}}),
        tool("a", json.dumps({"output": BODY + "KeyError: 'currency_code'", "exit_code": 1})),
        assistant("Fixed?")]
    plan = plan_free_passes(messages, protect_tail_count=1)
    assert list(plan.planned) == [2]
    turns = PlannedTurns(messages)
    turns.demotions = TurnDemotions(plan, {2: 2})
    lazy = build_handoff(turns, demotions=turns.demotions)
    eager, _stats = prune_tool_results(messages, protect_tail_count=1)
    assert lazy == build_handoff(eager)
    assert "KeyError: 'currency_code'" in lazy and "exit 1" in lazy


_values = st.one_of(
    st.text(max_size=120), st.text(alphabet="ab; \n\\\"é/", max_size=40), st.integers(), st.booleans(),
    st.none(), st.floats(allow_nan=False), st.lists(st.integers(), max_size=3),
)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from([*oneliners._BY_TOOL, "acme_lookup", "x;y", "duplicate tool output", "a\nb", "Edit"]),
    args=st.dictionaries(st.sampled_from(["path", "file_path", "command", "query", "url", "ref", "code", "name",
                                          "pattern", "offset", "subagent_type", "input", "k;ey", "message"]),
                         _values, max_size=4),
    ascii_only=st.booleans(),
    content=st.one_of(st.text(max_size=300), st.sampled_from(["Found 12\nfiles here", "exit code: 7", "ok"])),
)
def test_a_call_certain_to_give_a_plain_line_gives_one(
    name: str, args: dict[str, Any], ascii_only: bool, content: str
) -> None:
    """``plain_line_certain`` lets the summary read a planned success without its line: the
    line it would have read must be our plain one-liner, whatever the output."""
    arguments = json.dumps(args, ensure_ascii=ascii_only)
    if not oneliners.plain_line_certain(name, arguments, oneliners.parse_arguments(arguments)):
        return
    line = oneliners.tool_line(name, arguments, content, False)
    if failures.failure_of(content, reads=name in DATA_TOOLS) is not None:
        return  # a failed result's line carries its error (not read this way)
    assert line.startswith(f"[{name}]") and "; " not in line and "MEDIA:" not in line
    assert looks_demoted(line) and not line.startswith(DUPLICATE_PREFIX)


def _planned_and_eager(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """The handoff of ``messages`` (all but the last reply condensed) from planned results, and
    from the free passes' output with every one-liner built; each judged from scratch."""
    failures.clear_cache()
    plan = plan_free_passes(messages, protect_tail_count=1)
    turns = PlannedTurns(plan.messages)  # the free passes' output, planned results still raw
    turns.demotions = TurnDemotions(plan, {i: i for i in plan.planned})
    lazy = build_handoff(turns, demotions=turns.demotions)
    failures.clear_cache()
    eager, _stats = prune_tool_results(messages, protect_tail_count=1)
    return lazy, build_handoff(eager)


def _shell_history(commands: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [user("run the checks")]
    for k, (name, arguments, content) in enumerate(commands):
        messages.append(assistant("", {"id": f"k{k}", "type": "function",
                                       "function": {"name": name, "arguments": arguments}}))
        messages.append(tool(f"k{k}", content))
    messages.append(assistant("Done?"))
    return messages


def test_planned_shell_search_and_write_results_are_read_without_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results whose line is not certain to be plain (commands, searches, writes, patches)
    are read as the line ``tool_line`` would build, built once and not remembered: the
    summary of planned results calls no ``tool_line`` and gives what the built lines give."""
    long_path = "p/" + "x" * 900  # its line runs past 800 characters: read the general way
    commands = [
        ("terminal", json.dumps({"command": "make; make test"}), json.dumps({"output": BODY, "exit_code": 0})),
        ("terminal", json.dumps({"command": "echo '` -> exit 2; boom'"}), json.dumps({"output": BODY, "exit_code": 1})),
        ("terminal", json.dumps({"command": "pytest -q"}), BODY + "Error: the build failed; see above\n"),
        ("search_files", json.dumps({"pattern": "a; b", "path": "docs/a; b.md"}), BODY),
        ("write_file", json.dumps({"path": "docs/a; b.md", "content": "x\ny"}), BODY),
        ("write_file", json.dumps({"path": long_path, "content": "x"}), BODY * 2),
        ("patch", json.dumps({"path": "src/app.py", "old_string": "a", "new_string": "b"}), BODY),
        ("terminal", json.dumps({"command": "make; make test"}), json.dumps({"output": BODY, "exit_code": 0})),
    ]
    messages = _shell_history(commands)
    lazy, eager = _planned_and_eager(messages)
    assert lazy == eager
    assert "`make; make test` ×2" in lazy and "exit 1" in lazy and "the build failed; see above" in lazy
    built: list[str] = []
    real = oneliners.tool_line

    def counting(name: Any, *args: Any) -> str:
        built.append(name)
        return real(name, *args)

    failures.clear_cache()
    plan = plan_free_passes(messages, protect_tail_count=1)
    monkeypatch.setattr(oneliners, "tool_line", counting)
    monkeypatch.setattr(plan_module, "tool_line", counting)
    turns = PlannedTurns(plan.messages)
    turns.demotions = TurnDemotions(plan, {i: i for i in plan.planned})
    assert build_handoff(turns, demotions=turns.demotions) == lazy
    assert built == ["write_file"]  # only the line too long to be ours
