"""The extractive summary reads the condensed messages as they are and redacts what it writes.

No redacted copy of every turn and no LLM prompt is built for a summariser that says
``reads_raw_turns`` (the built-in ``extractive`` one): it redacts each fact it takes from a turn
where the fact could lose its context (a cut, joined lines, an error line) and the rendered
summary as a whole. Summarisers that do not say so keep getting redacted copies and a prompt.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.summarizer import SummaryRequest
from hermes_plugins._common.injected import (
    INJECTED_OPENINGS,
    SUMMARY_OPENINGS,
    is_observation,
    is_request,
    summary_author,
)
from hermes_plugins.compressor import engine as engine_module
from hermes_plugins.compressor import facts as facts_module
from hermes_plugins.compressor import sections, summary_step
from hermes_plugins.compressor.extractive import ExtractiveSummarizer, build_handoff
from hermes_plugins.compressor.serialize import message_text, prepare_turns

from compressor_support import assistant, call, make_engine, summary_of, tool, user, work_history
from hypothesis_budget import examples

VENDOR_KEY = "sk-proj-" + "Q7x" * 12
GITHUB_TOKEN = "ghp_" + "Zb4" * 12
PASSWORD = "hunter2-horse-battery"
YAML_TOKEN = "t0k3n-value-4411"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRETS = (VENDOR_KEY[8:], GITHUB_TOKEN[4:], PASSWORD, YAML_TOKEN, AWS_SECRET)


def leaky_turns() -> list[dict[str, Any]]:
    """Secrets in every place a fact is taken from: requests (short, long and multi-line),
    a failing command and its error line, another agent's summary, the last assistant text."""
    long_request = ("please deploy the billing service with the key " + VENDOR_KEY + " "
                    + "and keep the rollout slow " * 12)
    return [
        user("[CONTEXT SUMMARY]: the user gave the token " + GITHUB_TOKEN + "\n- keep the API stable"),
        user(long_request),
        user("config for the db:\npassword: " + PASSWORD + "\nhost: db.internal"),
        assistant("", call("c1", "terminal", command=f"export OPENAI_API_KEY={VENDOR_KEY} && make deploy")),
        tool("c1", '{"output": "Traceback (most recent call last):\\nRuntimeError: bad credentials '
             f'aws_secret_access_key={AWS_SECRET}", "exit_code": 1}}'),
        user(f"use {AWS_ID} with {AWS_SECRET} for the bucket"),
        assistant("Deployed.\ntoken: " + YAML_TOKEN + "\nShall I also rotate the keys?"),
    ]


def leaky_history() -> list[dict[str, Any]]:
    return [*work_history(3)[:-1], *leaky_turns(), *work_history(12)[1:]]  # head, secrets, more work


def test_the_extractive_summary_of_raw_turns_holds_no_secret() -> None:
    engine = make_engine(200_000)
    out = engine.compress(leaky_history(), force=True)
    text = summary_of(out)["content"]
    for secret in SECRETS:
        assert secret not in text, secret
    # ... and still carries the facts around them.
    assert "please deploy the billing service" in text
    assert "RuntimeError: bad credentials" in text
    assert "make deploy" in text
    assert "[REDACTED]" in text


def test_build_handoff_redacts_what_it_writes_from_unredacted_turns() -> None:
    text = build_handoff(leaky_turns())
    for secret in SECRETS:
        assert secret not in text, secret
    assert "Shall I also rotate the keys?" in text


class Recording:
    """A summariser factory that keeps every request it was given."""

    def __init__(self, raw: bool) -> None:
        self.requests: list[SummaryRequest] = []
        self.reads_raw_turns = raw

    def __call__(self, config: Any, *, model: str | None = None) -> Any:
        outer = self

        class Summarizer:
            name = "recording"

            def summarize(self, request: SummaryRequest) -> str:
                outer.requests.append(request)
                return ExtractiveSummarizer().summarize(request)

        return Summarizer()


class Host:
    def __init__(self, factory: Any) -> None:
        self.factory = factory

    def summarizers(self) -> dict[str, Any]:
        return {"recording": self.factory}


@pytest.mark.parametrize("raw", [True, False])
def test_only_a_summariser_that_reads_raw_turns_gets_them(raw: bool) -> None:
    factory = Recording(raw)
    engine = make_engine(200_000, data={"compression": {"summary": {"provider": "recording"}}},
                         host=Host(factory))
    messages = leaky_history()
    engine.compress(messages, force=True)
    (request,) = factory.requests
    original = next(m for m in messages if "please deploy" in str(m.get("content")))
    if raw:
        # The very messages (no copies) and no prompt: nothing an LLM would read was built.
        assert request.prompt == ""
        assert any(t is original for t in request.turns)
    else:
        assert "TURNS TO SUMMARIZE" in request.prompt
        assert not any(t is original for t in request.turns)
        assert any("please deploy" in str(t.get("content")) for t in request.turns)
        assert not any(VENDOR_KEY[8:] in str(t.get("content")) for t in request.turns)
        assert VENDOR_KEY[8:] not in request.prompt


def test_the_builtin_summariser_builds_no_redacted_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("prepare_turns called for the extractive summariser")

    monkeypatch.setattr(summary_step, "prepare_turns", refuse)
    engine = make_engine(200_000)
    out = engine.compress(work_history(30), force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert "now run the whole suite" in summary_of(out)["content"] or out[-1]["content"] == "now run the whole suite"



# --- the fast paths of the facts walk give what the general path gives -----------------------

_OPENINGS = [opening for opening, _ in (*SUMMARY_OPENINGS, *INJECTED_OPENINGS)]
_TEXTS = st.one_of(
    st.text(min_size=0, max_size=40),
    st.sampled_from(_OPENINGS).flatmap(lambda o: st.text(max_size=20).map(lambda t: o + t)),
    st.sampled_from(_OPENINGS).flatmap(lambda o: st.text(" \n\t", max_size=3).map(lambda t: t + o)),
    st.sampled_from(["MEDIA:/tmp/a.png look", "  fix it", "(no user message in the condensed turns)"]),
)


@given(text=_TEXTS, key=st.sampled_from([None, "_summary", "_compressed_summary", "_injected", "_demonstration"]),
       listed=st.booleans())
@settings(max_examples=examples(300), deadline=None)
def test_a_plain_request_is_what_is_request_says(text: str, key: str | None, listed: bool) -> None:
    turn: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}] if listed else text}
    if key:
        turn[key] = "observation" if key == "_injected" else True
    if facts_module._plain_request(turn, message_text(turn)):
        assert is_request(turn) and summary_author(turn) is None and not is_observation(turn)


_TOOLS = ["terminal", "read_file", "write_file", "patch", "web_search", "delegate_task", "acme_lookup",
          "str_replace_editor", "TodoWrite", "clarify", "Bash", "apply_patch"]


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 12))):
        messages.append(user(draw(_TEXTS) or f"request {i}"))
        name = draw(st.sampled_from(_TOOLS))
        args = {"path": f"src/m{i}.py", "command": draw(st.sampled_from(["pytest -q", "make", "view", "create"])),
                "todos": [{"content": "ship", "status": "pending"}], "question": "which db?", "query": "x"}
        messages.append(assistant(draw(st.sampled_from(["", "Working on it.", "Shall I go on?"])), call(f"c{i}", name, **args)))
        body = draw(st.sampled_from([
            "ok", '{"output": "done", "exit_code": 0}', '{"output": "Traceback\\nKeyError: \'x\'", "exit_code": 1}',
            "Error: no such file src/m.py", "[terminal] ran `make` -> exit 2, 3 lines; Error: boom",
            "[duplicate tool output: identical to the later result of call c9; see there]",
        ]))
        messages.append(tool(f"c{i}", body))
    return messages


@given(turns=histories(), focus=st.sampled_from([None, "src", "pytest"]))
@settings(max_examples=examples(120), deadline=None)
def test_raw_turns_give_the_summary_redacted_copies_give(turns: list[dict[str, Any]], focus: str | None) -> None:
    # Without secrets, redacting first or last writes the same summary: the raw walk's skipped
    # argument parsing, lazy one-liners and request fast path change nothing.
    assert build_handoff(turns, focus_topic=focus) == build_handoff(prepare_turns(turns), focus_topic=focus)


def test_grounding_takes_the_newest_request_after_the_previous_summary_only() -> None:
    from hermes_plugins.compressor.framing import SUMMARY_ANCHOR
    from hermes_plugins.compressor.summary_step import ground_latest_request

    anchor = {"role": "system", "content": SUMMARY_ANCHOR}
    text = "## Latest user request\nparaphrase\n\n## Files\n- a.py"
    older_only = [user("the old request"), anchor, assistant("working")]
    assert ground_latest_request(text, older_only) == text
    grounded = ground_latest_request(text, [user("the old request"), anchor, user(f"use {VENDOR_KEY} now"),
                                            assistant("ok"), {"role": "user", "content": "<system-reminder>x"}])
    assert grounded.startswith("## Latest user request\nuse sk-proj-[REDACTED] now\n")
    assert grounded.endswith("## Files\n- a.py") and "paraphrase" not in grounded


@given(st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": st.just("x")},
    optional={"_summary": st.sampled_from(["", "claude-code", None]), "_compressed_summary": st.booleans()},
), max_size=30), st.integers(0, 30), st.integers(0, 30))
@settings(max_examples=examples(200), deadline=None)
def test_the_middle_and_the_summary_positions_match_the_general_reads(
    messages: list[dict[str, Any]], start: int, cut: int
) -> None:
    from hermes_plugins.compressor.framing import is_summary_message

    positions = engine_module._summary_positions(messages)
    assert positions == [i for i, m in enumerate(messages) if m.get("role") != "tool" and is_summary_message(m)]
    if not any(start <= h < cut for h in positions):
        assert engine_module._middle_turns(messages, start, cut) == messages[start:cut]


# --- the summary is redacted once ----------------------------------------------------------------


@given(turns=histories(), secrets=st.booleans(), focus=st.sampled_from([None, "src", "deploy"]))
@settings(max_examples=examples(120), deadline=None)
def test_the_extractive_handoff_is_redacted_for_good(turns: list[dict[str, Any]], secrets: bool,
                                                     focus: str | None) -> None:
    # What lets the engine skip its own pass over the built-in summariser's output: redacting
    # the handoff again changes nothing.
    from hermes_core.redaction import redact

    text = build_handoff([*(leaky_turns() if secrets else []), *turns], focus_topic=focus)
    assert redact(text) == text


def _redacted_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = summary_step.redact

    def recording(text: Any) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(summary_step, "redact", recording)
    return seen


def test_the_engine_does_not_redact_the_extractive_summary_again(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    summarize = ExtractiveSummarizer.summarize

    def keep(self: Any, request: SummaryRequest) -> str:
        written.append(summarize(self, request))
        return written[-1]

    monkeypatch.setattr(ExtractiveSummarizer, "summarize", keep)
    seen = _redacted_texts(monkeypatch)
    engine = make_engine(200_000)
    out = engine.compress(leaky_history(), force=True)
    (text,) = written
    assert not any(s == text for s in seen)
    content = summary_of(out)["content"]
    for secret in SECRETS:
        assert secret not in content, secret


def test_other_summarisers_output_is_redacted_even_when_they_read_raw_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    class Leaky(Recording):
        def __call__(self, config: Any, *, model: str | None = None) -> Any:
            class Summarizer:
                name = "recording"

                def summarize(self, request: SummaryRequest) -> str:
                    return f"## Latest user request\nx\n\n## Files\n- key {VENDOR_KEY}"

            return Summarizer()

    seen = _redacted_texts(monkeypatch)
    engine = make_engine(200_000, data={"compression": {"summary": {"provider": "recording"}}},
                         host=Host(Leaky(True)))
    out = engine.compress(leaky_history(), force=True)
    assert any(VENDOR_KEY in s for s in seen if isinstance(s, str))
    assert VENDOR_KEY[8:] not in summary_of(out)["content"]


def test_the_anchor_is_found_by_the_walk_and_splits_the_turns_as_before() -> None:
    from hermes_plugins.compressor.framing import SUMMARY_ANCHOR

    anchor = {"role": "system", "content": SUMMARY_ANCHOR}
    older = [user("first: keep the API stable"), assistant("", call("c1", "write_file", path="src/old.py")),
             tool("c1", "ok")]
    newer = [user("then: add the ledger"), assistant("", call("c2", "write_file", path="src/new.py")),
             tool("c2", "ok"), user("last: run the tests"), assistant("Done.")]
    facts = facts_module.Facts([*older, anchor, *newer, anchor])
    assert facts.anchor == len(older)
    assert facts_module.Facts([*older, *newer]).anchor == -1
    text = build_handoff([*older, anchor, *newer], previous_summary="## User requests\n- in between")
    # Older turns' facts before the previous summary's, the newer turns' after.
    requests = text.split("## User requests\n", 1)[1].split("\n\n", 1)[0]
    assert requests.index("first: keep") < requests.index("in between") < requests.index("then: add")
    assert "## Latest user request\nlast: run the tests" in text
    assert "src/old.py" in text and "src/new.py" in text


def _clip_plain(text: str, limit: int) -> str:
    """``_clip`` as it was written first: redact, collapse the whole text, cut."""
    from hermes_core.redaction import redact

    if len(text) <= limit and text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    text = " ".join(redact(text).split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "…"


_WORDS = st.lists(st.one_of(st.text(alphabet="ab-_=:./", min_size=1, max_size=12),
                            st.sampled_from(["password=hunter2", VENDOR_KEY, "token: abc", "\u00a0", "\x1c"])),
                  max_size=60)
_GAPS = st.sampled_from([" ", "  ", "\n", "\t", " \n ", "\u2003", ""])


@pytest.mark.slow
@given(st.one_of(st.text(max_size=900), st.tuples(_WORDS, _GAPS).map(lambda p: p[1].join(p[0])),
                 st.tuples(_WORDS, _GAPS, st.integers(0, 400)).map(lambda p: " " * p[2] + p[1].join(p[0]) + "\n" * 3)),
       st.sampled_from([10, 80, 160, 200]))
@settings(max_examples=examples(400), deadline=None)
def test_clip_collapses_only_what_the_cut_reads(text: str, limit: int) -> None:
    assert sections.clip_text(text, limit) == _clip_plain(text, limit)
    assert sections.clip_text(text * 5, limit) == _clip_plain(text * 5, limit)


def test_clip_does_not_split_a_long_text_into_words_whole() -> None:
    # A pasted log as a request: only the head the cut can read is collapsed.
    class Watched(str):
        splits = 0

        def split(self, *args: Any, **kwargs: Any) -> list[str]:  # type: ignore[override]
            Watched.splits += 1
            return super().split(*args, **kwargs)

    text = Watched("step  done\n" * 20_000)
    assert sections.clip_text(text, 200) == _clip_plain(str(text), 200)
    assert Watched.splits == 0
