"""Phase 3, the summary (§9, §11, §12): input, budget, prompt, extractive handoff, failures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core import PluginHost, hookimpl
from hermes_core.summarizer import (
    SummarizerAuthError,
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerNetworkError,
    SummarizerTimeoutError,
    SummaryRequest,
)
from hermes_plugins.compressor.extractive import (
    ExtractiveSummarizer,
    build_handoff,
    parse_sections,
)
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR, classify_message
from hermes_plugins.compressor.prompt import NO_USER_SENTINEL, build_summary_prompt
from hermes_plugins.compressor.serialize import (
    bound_text,
    clip_middle,
    flatten_content,
    prepare_turns,
    serialize_turn,
    serialize_turns,
)

from compressor_support import (
    FakeClock,
    assistant,
    call,
    make_engine,
    snapshot,
    summary_of,
    tool,
    user,
    work_history,
)

# --- serialisation --------------------------------------------------------------------------


def test_long_bodies_keep_head_and_tail() -> None:
    text = "H" * 4_000 + "M" * 3_000 + "T" * 1_500
    clipped = clip_middle(text)
    assert clipped.startswith("H" * 4_000) and clipped.endswith("T" * 1_500)
    assert "M" not in clipped and "[truncated]" in clipped
    assert clip_middle("short") == "short"


def test_turns_are_redacted_flattened_and_labelled() -> None:
    messages = [
        user([{"type": "text", "text": "key OPENAI_API_KEY=abc123xyz"}, {"type": "image_url", "image_url": {"url": "https://x.example/a.png"}},
              {"type": "input_image", "image_url": "data:image/png;base64,AAA"}, {"type": "audio"}]),
        assistant("<think>secret plan</think>Visible answer MEDIA:/tmp/a.mp3", call("c1", "terminal", command="curl -H 'Authorization: Bearer abcdefghijklmnop1234'")),
        tool("c1", "ok"),
    ]
    before = snapshot(messages)
    turns = prepare_turns(messages)
    assert snapshot(messages) == before
    assert "abc123xyz" not in turns[0]["content"]
    assert "[image: https://x.example/a.png]" in turns[0]["content"] and "[image]" in turns[0]["content"]
    assert "[audio]" in turns[0]["content"]
    assert turns[1]["content"] == "Visible answer [media attachment]"
    assert "abcdefghijklmnop1234" not in turns[1]["tool_calls"][0]["function"]["arguments"]
    text = serialize_turns(turns)
    assert text.startswith("[USER]: ")
    assert "[ASSISTANT]: Visible answer" in text and "[Tool calls:\n  terminal(" in text
    assert "[TOOL RESULT c1 (terminal)]: ok" in text  # the call it answers, by the pairing rule


def test_long_arguments_are_cut_in_the_serialisation() -> None:
    turn = prepare_turns([assistant("", call("c", "write_file", content="x" * 3_000))])[0]
    line = serialize_turn(turn)
    assert "x" * 1_100 in line and "x" * 1_300 not in line and "...)" in line


def test_whole_input_is_bounded_head_and_tail() -> None:
    text = "a" * 100_000 + "b" * 100_000
    bounded = bound_text(text, 160_000)
    assert len(bounded) <= 160_000
    assert bounded.startswith("a" * 70_000) and bounded.endswith("b" * 80_000)
    assert "characters omitted" in bounded
    many = prepare_turns([user(f"turn {i} " + "z" * 100) for i in range(3_000)])
    assert len(serialize_turns(many)) <= 160_000


def test_flatten_content_shapes() -> None:
    assert flatten_content(None) == ""
    assert flatten_content({"text": "t"}) == "t"
    assert flatten_content(["a", {"type": "text", "text": "b"}]) == "a\nb"


# --- budget and prompt ------------------------------------------------------------------------


def test_budget_is_20_percent_within_floor_and_ceiling() -> None:
    engine = make_engine(1_000_000)
    assert engine._summary_budget([user("x" * 400)]) == 2_000
    assert engine._summary_budget([user("x" * 199_960)]) == 10_000
    huge = [user("x" * 2_000_000)]
    assert engine._summary_budget(huge) == 12_000
    tiny_window = make_engine(20_000)
    assert tiny_window.max_summary_tokens == 1_000
    assert tiny_window._summary_budget(huge) == 2_000  # the floor wins


def test_prompt_first_time_update_and_focus() -> None:
    first = build_summary_prompt("[USER]: hi", previous_summary=None, focus_topic=None, budget_tokens=2_000, has_user_turn=True)
    assert "TURNS TO SUMMARIZE:\n[USER]: hi" in first and "PREVIOUS SUMMARY" not in first
    assert "Target ~2,000 tokens" in first and "FOCUS TOPIC" not in first
    update = build_summary_prompt("[USER]: more", previous_summary="## Goal\nold", focus_topic="database schema",
                                  budget_tokens=3_000, has_user_turn=False)
    assert "PREVIOUS SUMMARY:\n## Goal\nold" in update and "NEW TURNS TO INCORPORATE:" in update
    assert "TURNS TO SUMMARIZE" not in update
    assert 'FOCUS TOPIC: "database schema"' in update and "PRIORITISE" in update and "60-70%" in update
    assert NO_USER_SENTINEL in update


# --- the extractive handoff ------------------------------------------------------------------


def extractive_turns() -> list[dict[str, Any]]:
    return prepare_turns([
        user("Please migrate the billing service to Postgres 16. Don't touch the legacy API."),
        assistant("", call("c1", "read_file", path="services/billing/db.py")),
        tool("c1", "import psycopg2\n" * 40),
        assistant("", call("c2", "terminal", command="pytest -q tests/billing")),
        tool("c2", '{"output": "FAILED tests/billing/test_db.py::test_conn - OperationalError: port 5433 refused", "exit_code": 1}'),
        assistant("", call("c3", "patch", path="services/billing/db.py", mode="replace")),
        tool("c3", "patched"),
        assistant("Should I also bump the driver to psycopg 3.1.18?"),
        user("Yes, use psycopg 3.1.18 and keep port 5433. Ticket BILL-2291."),
    ])


def test_extractive_lists_facts_with_identifiers_exact() -> None:
    text = build_handoff(extractive_turns())
    sections = parse_sections(text)
    assert sections["Latest user request"] == "Yes, use psycopg 3.1.18 and keep port 5433. Ticket BILL-2291."
    assert sections["User requests"] == [
        "Please migrate the billing service to Postgres 16. Don't touch the legacy API."]
    actions = sections["Completed actions"]
    assert actions[0] == "[read_file] read services/billing/db.py from line 1 (640 chars)"
    assert any(a.startswith("[terminal] ran `pytest -q tests/billing` -> exit 1") for a in actions)
    assert sections["Commands"] == [("`pytest -q tests/billing` -> exit 1: FAILED tests/billing/test_db.py::test_conn"
                                    " - OperationalError: port 5433 refused")]
    assert sections["Files"] == ["services/billing/db.py — modified (read_file, patch)"]
    assert sections["Errors"] == [("`pytest -q tests/billing` -> exit 1: FAILED tests/billing/test_db.py::test_conn"
                                  " - OperationalError: port 5433 refused — still failing")]
    decisions = " ".join(sections["Decisions and constraints"])
    assert "Don't touch the legacy API." in decisions and "use psycopg 3.1.18" in decisions
    assert "Should I also bump the driver to psycopg 3.1.18?" in sections["Open items"]


def test_sections_come_from_structure_not_keywords() -> None:
    """Code and JSON that merely contain error words, and paths only mentioned in prose, stay out."""
    turns = prepare_turns([
        user("Look at how Node.js and llama.cpp handle it, then continue"),
        assistant("", call("c1", "read_file", path="db.py")),
        tool("c1", "try:\n    run()\nexcept sqlite3.Error:\n    pass\n" * 30),
        assistant("", call("c2", "terminal", command="curl localhost")),
        tool("c2", '{"output": "{\\"error\\": null}", "exit_code": 0, "error": null}'),
        {"role": "user", "content": "<system-reminder>Remember the todo list.</system-reminder>"},
        {"role": "user", "content": "This session is being continued from a previous conversation that ran out"
                                    " of context.\nSummary:\n1. Primary Request and Intent:\n   Build it."},
    ])
    sections = parse_sections(build_handoff(turns))
    assert "Errors" not in sections
    assert sections["Files"] == ["db.py — read (read_file)"]
    assert sections["Latest user request"] == "Look at how Node.js and llama.cpp handle it, then continue"
    assert "User requests" not in sections  # the only request is the latest one
    assert "Build it." in " ".join(sections["Earlier summary"])  # the continuation is a summary, merged


def test_errors_say_whether_a_later_call_succeeded() -> None:
    turns = prepare_turns([
        user("make the tests pass"),
        assistant("", call("a", "terminal", command="pytest")),
        tool("a", '{"output": "E   KeyError: \'currency_code\'", "exit_code": 1}'),
        assistant("", call("b", "Bash", command="npm run build")),
        {"role": "tool", "tool_call_id": "b", "content": "Exit code 2\nerror: Could not resolve js/app.js",
         "_is_error": True},
        assistant("", call("c", "terminal", command="pytest")),
        tool("c", '{"output": "1 passed", "exit_code": 0}'),
    ])
    errors = parse_sections(build_handoff(turns))["Errors"]
    assert "`pytest` -> exit 1: KeyError: 'currency_code' — resolved" in errors
    assert "`npm run build` -> exit 2: error: Could not resolve js/app.js — still failing" in errors


def test_text_agents_observations_give_errors_and_aider_edits_give_files() -> None:
    """SWE-agent 0.x and Aider write command output into the user role (``_injected``): a failed
    observation is an error of the command the reply before it ran; Aider's applied edits are
    files modified."""
    observation = {"role": "user", "_injected": "observation"}
    turns = prepare_turns([
        user("fix the pixel handler"),
        assistant("Let me reproduce it.\n```\npython reproduce_bug.py\n```"),
        {**observation, "content": "Traceback (most recent call last):\n  File \"reproduce_bug.py\", line 17, "
                                   "in <module>\nAttributeError: Unable to convert the pixel data\nbash-$"},
        assistant("Now the search.\n```\nfind_file handler.py\n```"),
        {**observation, "content": "Found 3 matches\nbash-$"},
        assistant("Run it again.\n```\npython reproduce_bug.py\n```"),
        {**observation, "content": "Script completed successfully, no errors.\nbash-$"},
        assistant("The build."),
        {"role": "user", "_injected": "aider-output",
         "content": "Applied edit to src/pixel/handler.py\nCommit 1a2b3c4 fix\nerror: linker failed on libpixel.so"},
    ])
    sections = parse_sections(build_handoff(turns))
    errors = " ".join(sections["Errors"])
    assert "`python reproduce_bug.py`: AttributeError: Unable to convert the pixel data" in errors
    assert "— resolved" in errors  # the same command succeeded later
    assert "(observation): error: linker failed on libpixel.so — still failing" in errors
    assert "src/pixel/handler.py — modified (aider)" in sections["Files"]
    assert not any("find_file" in item for item in sections["Errors"])


def test_extractive_is_deterministic_and_capped() -> None:
    turns = extractive_turns() * 200
    first = build_handoff(turns)
    assert first == build_handoff(turns)
    assert len(first) <= 8_000
    assert "earlier items omitted" in first or "earlier item omitted" in first


def test_priority_under_the_cap_latest_request_failing_errors_files_decisions() -> None:
    turns: list[dict[str, Any]] = []
    for i in range(120):
        turns += [user(f"request number {i} " + "x" * 150 + f" Never use tool{i}."),
                  assistant("", call(f"w{i}", "write_file", path=f"src/mod{i}.py", content="a")),
                  tool(f"w{i}", "ok"),
                  assistant("", call(f"t{i}", "terminal", command=f"pytest tests/test_{i}.py")),
                  tool(f"t{i}", '{"output": "E   ValueError: case %d broke", "exit_code": 1}' % i)]  # noqa: UP031
    text = build_handoff(prepare_turns(turns), max_chars=8_000)
    sections = parse_sections(text)
    assert len(text) <= 8_000
    assert sections["Latest user request"].startswith("request number 119")
    assert sections["Errors"][-1].endswith("ValueError: case 119 broke — still failing")
    assert "src/mod119.py — created (write_file)" in sections["Files"]
    assert "(… " in text.split("## Errors", 1)[1].split("\n", 2)[1]  # trimmed sections say so


def test_extractive_updates_the_previous_summary() -> None:
    first = build_handoff(extractive_turns())
    later = prepare_turns([
        assistant("", call("c9", "terminal", command="make deploy")),
        tool("c9", '{"exit_code": 0}'),
        assistant("", call("c8", "terminal", command="pytest -q tests/billing")),
        tool("c8", '{"exit_code": 0}'),
        assistant("", call("c7", "write_file", path="NOTES.md", content="x")),
        tool("c7", "ok"),
        user("Now write the release notes."),
    ])
    updated = build_handoff(later, previous_summary=first)
    sections = parse_sections(updated)
    assert sections["Latest user request"] == "Now write the release notes."
    # every section of the previous summary is carried, merged with the new facts
    assert sections["User requests"] == [
        "Please migrate the billing service to Postgres 16. Don't touch the legacy API.",
        "Yes, use psycopg 3.1.18 and keep port 5433. Ticket BILL-2291."]
    assert sections["Files"] == ["services/billing/db.py — modified (read_file, patch)", "NOTES.md — created (write_file)"]
    assert sections["Errors"] == [("`pytest -q tests/billing` -> exit 1: FAILED tests/billing/test_db.py::test_conn"
                                  " - OperationalError: port 5433 refused — resolved")]
    assert "Don't touch the legacy API." in sections["Decisions and constraints"]
    actions = sections["Completed actions"]
    assert actions[0].startswith("[read_file] read services/billing/db.py")
    assert actions[-1] == "[write_file] wrote to NOTES.md (1 lines)"
    assert "4. [terminal] ran `make deploy`" in updated  # numbering continues
    again = build_handoff(prepare_turns([user("ship it")]), previous_summary=updated)
    assert parse_sections(again)["Files"] == sections["Files"]  # merged, not duplicated


def test_other_agents_summaries_are_merged_section_by_section() -> None:
    hermes_agent = ("[CONTEXT COMPACTION - REFERENCE ONLY] Earlier turns were compacted.\n"
                    "## Goal\nShip the billing migration\n## Errors and blockers\n- port 5433 refused\n"
                    "## Files touched\n- services/billing/db.py (read, patched)\n")
    sections = parse_sections(build_handoff(prepare_turns([user("go on")]), previous_summary=hermes_agent))
    assert "port 5433 refused" in sections["Errors"]
    assert any(item.startswith("services/billing/db.py — ") for item in sections["Files"])
    assert "Ship the billing migration" in sections["Earlier summary"]
    codex = prepare_turns([{"role": "user", "content": "Another language model started to solve this problem and"
                            " produced a summary.\nThe parser in src/parse.rs was rewritten."},
                           user("continue with the tests")])
    sections = parse_sections(build_handoff(codex))
    assert sections["Latest user request"] == "continue with the tests"
    assert any("src/parse.rs" in item for item in sections["Earlier summary"])


def test_turns_older_than_the_previous_summary_go_first() -> None:
    previous = build_handoff(prepare_turns([user("second request"), assistant("", call("b", "terminal", command="ls")), tool("b", '"exit_code": 0')]))
    turns = prepare_turns([user("first request"), assistant("", call("a", "read_file", path="a.py")), tool("a", "x")])
    turns.append({"role": "system", "content": SUMMARY_ANCHOR})
    turns += prepare_turns([user("third request")])
    sections = parse_sections(build_handoff(turns, previous_summary=previous))
    assert sections["User requests"] == ["first request", "second request"]
    assert sections["Latest user request"] == "third request"
    assert sections["Completed actions"][0].startswith("[ls]") or any(
        a.startswith("[read_file] read a.py") for a in sections["Completed actions"])


def test_foreign_previous_summary_is_carried_over() -> None:
    text = build_handoff(prepare_turns([user("go on")]), previous_summary="The team chose Redis.\n## Odd Heading\nkeep me")
    assert "The team chose Redis." in text and "keep me" in text


def test_focus_topic_gets_most_of_the_room() -> None:
    turns = extractive_turns() * 30 + prepare_turns([assistant("The Redis cache key is billing:v2:{id}.")])
    text = build_handoff(turns, focus_topic="redis cache")
    sections = parse_sections(text)
    focus = text.split("## Focus: redis cache", 1)[1].split("\n## ", 1)[0]
    assert "billing:v2:{id}" in focus
    assert "Focus: redis cache" not in sections  # a focus is per compression, not carried
    assert len(build_handoff(turns, focus_topic="nothing matches zzz")) > 0


def test_no_user_turn_writes_the_sentinel() -> None:
    text = build_handoff(prepare_turns([assistant("", call("a", "terminal", command="ls")), tool("a", '"exit_code": 0')]))
    assert parse_sections(text)["Latest user request"] == NO_USER_SENTINEL


def test_extractive_summarizer_protocol() -> None:
    summarizer = ExtractiveSummarizer(None, model="ignored")
    request = SummaryRequest(prompt="p", turns=extractive_turns(), max_chars=2_000)
    assert summarizer.name == "extractive"
    assert len(summarizer.summarize(request)) <= 2_000


# --- summariser selection and failures ---------------------------------------------------------


class Scripted:
    """A summariser factory whose calls follow a script of results or exceptions."""

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.calls: list[tuple[str | None, SummaryRequest]] = []

    def __call__(self, config: Any, *, model: str | None = None) -> Any:
        outer = self

        class Instance:
            name = "scripted"

            def summarize(self, request: SummaryRequest) -> str:
                outer.calls.append((model, request))
                step = outer.script.pop(0) if outer.script else "## Notes\nok"
                if isinstance(step, BaseException):
                    raise step
                return step

        return Instance()


class StubHost:
    def __init__(self, factories: dict[str, Any]) -> None:
        self.factories = factories

    def summarizers(self) -> dict[str, Any]:
        return dict(self.factories)


def scripted_engine(*script: Any, data: dict[str, Any] | None = None) -> tuple[Any, Scripted]:
    factory = Scripted(*script)
    summary = {"provider": "scripted", **(data or {}).pop("summary", {})} if data else {"provider": "scripted"}
    compression = {**(data or {}), "summary": summary}
    engine = make_engine(64_000, data={"compression": compression}, host=StubHost({"scripted": factory}))
    engine.clock = FakeClock()
    return engine, factory


def test_the_summariser_comes_from_the_hook() -> None:
    factory = Scripted("## Notes\nfrom the plugin")

    class Plugin:
        @hookimpl
        def hermes_summarizers(self) -> dict[str, Any]:
            return {"scripted": factory}

    host = PluginHost.create(only=(), plugins=[(Plugin(), "test_summarizer")])
    engine = make_engine(64_000, data={"compression": {"summary": {"provider": "scripted", "model": "aux"}}}, host=host)
    out = engine.compress(work_history(40), force=True)
    assert "from the plugin" in summary_of(out)["content"]
    model, request = factory.calls[0]
    assert model == "aux"
    assert request.turns and "TURNS TO SUMMARIZE" in request.prompt
    assert request.budget_tokens >= 2_000 and request.max_chars == 8_000
    assert engine.last_compression_report["summary"]["provider"] == "scripted"


def test_summariser_output_is_cleaned_and_redacted() -> None:
    engine, _ = scripted_engine("<think>hidden reasoning</think>## Latest user request\nuse ghp_" + "a" * 36)
    out = engine.compress(work_history(40), force=True)
    content = summary_of(out)["content"]
    assert "hidden reasoning" not in content and "a" * 36 not in content


@pytest.mark.parametrize("error", [SummarizerAuthError("401 invalid key"), SummarizerNetworkError("connection refused")])
def test_auth_and_network_failures_abort_with_nothing_dropped(error: SummarizerError) -> None:
    engine, _ = scripted_engine(error)
    messages = work_history(40)
    before = snapshot(messages)
    out = engine.compress(messages, force=True)
    assert out is messages and snapshot(messages) == before
    report = engine.last_compression_report
    assert report["status"] == "aborted" and report["aborted"] and report["error_kind"] == error.kind
    assert report["after"] == report["before"]
    assert engine.compression_count == 0


def test_abort_on_summary_failure_aborts_on_any_failure() -> None:
    engine, _ = scripted_engine(SummarizerError("boom"), data={"abort_on_summary_failure": True})
    messages = work_history(40)
    assert engine.compress(messages, force=True) is messages
    assert engine.last_compression_report["status"] == "aborted"


def test_other_failures_insert_the_deterministic_handoff_and_cool_down() -> None:
    engine, _ = scripted_engine(SummarizerError("HTTP 500 from provider"))
    messages = work_history(40)
    out = engine.compress(messages, force=True)
    report = engine.last_compression_report
    assert report["status"] == "compressed" and report["fallback_used"] and report["summary"]["fallback"]
    content = summary_of(out)["content"]
    assert "summariser 'scripted' was unavailable (other: HTTP 500 from provider)" in content
    assert "## Completed actions" in content
    assert any("deterministic handoff" in w for w in report["warnings"])
    engine.update_from_response({"prompt_tokens": engine.threshold_tokens + 1})
    assert engine.should_compress_info() == (False, "cooldown:60")


def test_empty_output_is_a_failure() -> None:
    engine, _ = scripted_engine("   ")
    out = engine.compress(work_history(40), force=True)
    assert engine.last_compression_report["error_kind"] == "empty"
    assert "was unavailable (empty" in summary_of(out)["content"]


def test_timeouts_climb_the_cooldown_ladder() -> None:
    engine, _ = scripted_engine(*(SummarizerTimeoutError("timed out") for _ in range(4)))
    seen = []
    for _ in range(4):
        engine.compress(work_history(40), force=False)
        seen.append(engine.last_compression_report["cooldown_seconds"])
        engine.clock.advance(10_000)
    assert seen == [60.0, 300.0, 900.0, 900.0]


def test_cooldown_skips_the_summariser_until_forced() -> None:
    engine, factory = scripted_engine(SummarizerTimeoutError("timed out"), "## Notes\nfine")
    engine.compress(work_history(40))
    assert len(factory.calls) == 1
    engine.clock.advance(30)
    engine.compress(work_history(40))  # automatic, still cooling down: no call, fallback text
    assert len(factory.calls) == 1 and engine.last_compression_report["fallback_used"]
    assert engine.last_compression_report["error_kind"] == "cooldown"
    out = engine.compress(work_history(40), force=True)  # a manual compression clears the cooldown
    assert len(factory.calls) == 2 and "fine" in summary_of(out)["content"]
    assert engine.should_compress_info(engine.threshold_tokens) == (True, None)


def test_missing_summary_model_falls_back_once_to_the_main_model() -> None:
    engine, factory = scripted_engine(
        SummarizerModelNotFoundError("404 no such model"), "## Notes\nrecovered",
        data={"summary": {"model": "aux-model"}},
    )
    out = engine.compress(work_history(40), force=True)
    assert [model for model, _ in factory.calls] == ["aux-model", "main-model"]
    assert "recovered" in summary_of(out)["content"]
    report = engine.last_compression_report
    assert report["summary_model_fallback"] and not report["fallback_used"]
    engine.compress(work_history(40), force=True)
    assert factory.calls[-1][0] == "main-model"  # the failed summary model is not retried


def test_unregistered_provider_uses_the_handoff_and_waits_600s() -> None:
    engine = make_engine(64_000, data={"compression": {"summary": {"provider": "nope"}}}, host=StubHost({}))
    engine.clock = FakeClock()
    out = engine.compress(work_history(40), force=True)
    assert engine.last_compression_report["cooldown_seconds"] == 600.0
    assert "no summariser is registered as 'nope'" in summary_of(out)["content"]


def test_a_raising_summariser_never_breaks_compression() -> None:
    engine, _ = scripted_engine(ValueError("bug in plugin"))
    out = engine.compress(work_history(40), force=True)
    assert "ValueError: bug in plugin" in summary_of(out)["content"]


def test_previous_summary_is_updated_not_resummarised() -> None:
    engine, factory = scripted_engine("## Notes\nfirst body", "## Notes\nsecond body")
    first = engine.compress(work_history(40), force=True)
    grown = first + work_history(30)[1:]
    engine.compress(grown, force=True)
    _, request = factory.calls[1]
    assert request.previous_summary.startswith("## Latest user request\nstep ")  # grounded
    assert request.previous_summary.endswith("\n\n## Notes\nfirst body")
    assert request.prompt.count("first body") == 1
    assert "PREVIOUS SUMMARY:" in request.prompt and "NEW TURNS TO INCORPORATE:" in request.prompt
    assert "[HANDOFF NOTES" not in json.dumps(list(request.turns))


def test_a_fresh_engine_rehydrates_the_summary_from_the_transcript() -> None:
    engine, _ = scripted_engine("## Notes\nfirst body")
    first = engine.compress(work_history(40), force=True)
    fresh, factory = scripted_engine("## Notes\nagain")
    fresh.compress(first + work_history(30)[1:], force=True)
    assert factory.calls[0][1].previous_summary.endswith("\n\n## Notes\nfirst body")


def test_a_held_summary_missing_from_the_transcript_is_discarded() -> None:
    engine, factory = scripted_engine("## Notes\nfrom session A", "## Notes\nB")
    engine.compress(work_history(40), force=True)
    engine.compress(work_history(40), force=True)  # another conversation, no handoff in it
    assert factory.calls[1][1].previous_summary is None


def test_summary_message_metadata_and_framing() -> None:
    engine, _ = scripted_engine("## Notes\nbody")
    out = engine.compress(work_history(40), force=True)
    summary = summary_of(out)
    assert summary["_compressed_summary"] is True and summary["_compressed_summary_has_user_turn"] is True
    kind, body, _ = classify_message(summary)
    assert body.endswith("\n\n## Notes\nbody") and body.startswith("## Latest user request\n")
    assert engine.last_compression_report["summary"]["index"] == out.index(summary)


def test_the_latest_request_is_grounded_in_the_real_turn() -> None:
    paraphrase = "## Goal\nmigrate\n\n## Latest user request\nthe user wants notes, roughly\n\n## Completed actions\n1. x"
    engine, _ = scripted_engine(paraphrase, "## Completed actions\n1. y")
    messages = work_history(40)
    out = engine.compress(messages, force=True)
    body = classify_message(summary_of(out))[1]
    kept = {m["content"] for m in out if m.get("role") == "user" and isinstance(m.get("content"), str)}
    latest_in_middle = next(m["content"] for m in reversed(messages)
                            if m.get("role") == "user" and m["content"] not in kept)
    assert latest_in_middle.startswith("step ")
    assert f"## Latest user request\n{latest_in_middle}\n\n## Completed actions\n1. x" in body
    assert "roughly" not in body and body.startswith("## Goal\nmigrate")
    # A summary without the section gets one in front.
    engine2, _ = scripted_engine("## Completed actions\n1. y")
    out2 = engine2.compress(messages, force=True)
    assert classify_message(summary_of(out2))[1].startswith(f"## Latest user request\n{latest_in_middle}\n")


def test_the_serializer_drops_reasoning_blocks_but_keeps_a_mention_of_a_tag() -> None:
    from hermes_plugins.compressor.serialize import clean_text

    assert clean_text("<think>secret</think>Visible <reflection>x</reflection>end", assistant=True) == "Visible end"
    assert clean_text("Fixed the parser for <think> tags.", assistant=True) == "Fixed the parser for <think> tags."
    assert clean_text("half a thought\n</think>\nThe answer.", assistant=True) == "The answer."
    assert clean_text("<think>a user may write tags", assistant=False) == "<think>a user may write tags"


def test_llm_prompt_asks_for_the_extractive_sections() -> None:
    """A summary an LLM wrote is read back by the extractive summariser into the same sections."""
    prompt = build_summary_prompt("[USER]: hi", previous_summary=None, focus_topic=None, budget_tokens=2_000,
                                  has_user_turn=True)
    for title in ("## Latest user request", "## User requests", "## Errors", "## Files", "## Decisions and constraints"):
        assert title in prompt
    llm = "## Latest user request\nship it\n## Errors\n- `make` -> exit 2: boom — still failing\n## Files\n- a.py"
    sections = parse_sections(llm)
    assert sections["Errors"] == ["`make` -> exit 2: boom — still failing"] and sections["Files"] == ["a.py"]


def test_serialized_results_name_the_call_they_answer_when_ids_are_reused() -> None:
    from hermes_plugins.compressor.serialize import prepare_turns, serialize_turns

    messages = [
        {"role": "user", "content": "look around"},
        {"role": "assistant", "content": "", "tool_calls": [
            _reused_call("terminal", command="ls"), _reused_call("read_file", path="a.py")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "listing of the directory"},
        {"role": "tool", "tool_call_id": "call_0", "content": "text of a.py"},
        {"role": "assistant", "content": "", "tool_calls": [_reused_call("terminal", command="pwd")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "/work"},
    ]
    turns = prepare_turns(messages)
    assert [t.get("tool_name") for t in turns if t["role"] == "tool"] == ["terminal", "read_file", "terminal"]
    text = serialize_turns(turns)
    assert "[TOOL RESULT call_0 (terminal)]: listing of the directory" in text
    assert "[TOOL RESULT call_0 (read_file)]: text of a.py" in text
    assert "[TOOL RESULT call_0 (terminal)]: /work" in text


def test_extractive_facts_pair_reused_ids_by_position() -> None:
    from hermes_plugins.compressor.extractive import build_handoff
    from hermes_plugins.compressor.serialize import prepare_turns

    messages = [
        {"role": "user", "content": "fix the build"},
        {"role": "assistant", "content": "", "tool_calls": [_reused_call("terminal", command="make build")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "KeyError: 'x'", "_is_error": True},
        {"role": "assistant", "content": "", "tool_calls": [
            _reused_call("terminal", command="make test"), _reused_call("read_file", path="src/app.py")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "all tests passed"},
        {"role": "tool", "tool_call_id": "call_0", "content": "Traceback (most recent call last):\nOSError: gone",
         "_is_error": True},
    ]
    text = build_handoff(prepare_turns(messages))
    assert "`make build`: KeyError: 'x' — still failing" in text
    assert "succeeded (1): `make test`" in text  # its own result, not the failing read after it
    assert "[read_file] src/app.py: " in text and "OSError: gone" in text


def _reused_call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": "call_0", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
