"""The Gemini CLI readers keep their rules through the work that made them cheaper per record
(issue 33): a stream-json file reads as the rules stated plainly (below, without any of the
reader's shortcuts), the user-text marks are the openings' own, tool arguments are
``make_tool_call``'s text, and a recording's signatures and unfinished calls are counted as
before."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.plugin import ReportBuilder, Transcript, TranscriptSource, make_tool_call
from hermes_core.transcripts import read_transcript
from hermes_plugins._common.injected import (
    INJECTED_OPENINGS,
    SUMMARY_OPENINGS,
    opening_injected_kind,
    opening_summary_author,
)
from hermes_plugins.transcripts.common import mark_user_text
from hermes_plugins.transcripts.gemini_cli import FORMAT, _tool_call

from hypothesis_budget import examples

OPENINGS = [opening for opening, _kind in (*SUMMARY_OPENINGS, *INJECTED_OPENINGS)]
TS = "2025-11-01T10:00:00Z"

# --- the rules of stream-json, stated plainly ----------------------------------------------------


def _marked(text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "user", "content": text}
    if opening_summary_author(text):
        message["_summary"] = opening_summary_author(text)
    elif opening_injected_kind(text):
        message["_injected"] = opening_injected_kind(text)
    return message


def plain_reading(lines: list[Any]) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Messages and record counts of stream-json ``lines`` by the documented rules: the delta
    chunks of an assistant reply are its text, joined once everything is read; the tool_use
    events after a reply (or after other calls) join that message; a tool_result ends a batch."""
    messages: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    texts: list[tuple[dict[str, Any], list[str]]] = []  # every reply and its chunks
    reply: dict[str, Any] | None = None  # the reply still taking chunks
    calls: dict[str, Any] | None = None  # the message still taking tool_use events
    for event in lines:
        if not isinstance(event, dict):
            counts["dropped"] += 1
            continue
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            text = str(event.get("content") or "")
            if reply is not None and event.get("delta"):
                texts[-1][1].append(text)
                counts["merged"] += 1
            else:
                reply, calls = {"role": "assistant", "content": None}, None
                texts.append((reply, [text]))
                messages.append(reply)
                counts["converted"] += 1
        elif kind == "message":
            reply = calls = None
            messages.append(_marked(str(event.get("content") or "")))
            counts["converted"] += 1
        elif kind == "tool_use":
            params = event.get("parameters")
            arguments = params if isinstance(params, str) else json.dumps(
                {} if params is None else params, ensure_ascii=False)
            call = {"id": str(event.get("tool_id") or ""), "type": "function",
                    "function": {"name": str(event.get("tool_name") or ""), "arguments": arguments}}
            holder = reply if reply is not None else calls
            if holder is None:
                holder = {"role": "assistant", "content": None, "tool_calls": [call]}
                messages.append(holder)
                counts["converted"] += 1
            else:
                holder.setdefault("tool_calls", []).append(call)
                counts["merged"] += 1
            reply, calls = None, holder
        elif kind == "tool_result":
            reply = calls = None
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            content = event.get("output")
            if content is None and error:
                content = str(error.get("message") or "")
            result: dict[str, Any] = {"role": "tool", "tool_call_id": str(event.get("tool_id") or ""),
                                      "content": str(content or "")}
            if event.get("status") == "error" or error:
                result["_is_error"] = True
            messages.append(result)
            counts["converted"] += 1
        elif kind in ("init", "result", "error"):
            counts["absorbed"] += 1
        else:
            counts["dropped"] += 1
    for message, chunks in texts:
        message["content"] = "".join(chunks)
    return messages, counts


_text = st.one_of(st.sampled_from(["", "ok ", "héllo ", "\u4e2d\u6587", "a\nb"]),
                  st.sampled_from(OPENINGS).map(lambda o: f"  {o} more"), st.text(max_size=8))
_json_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), _text),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                           max_leaves=6)
_event = st.one_of(
    st.fixed_dictionaries({"type": st.just("message"), "role": st.sampled_from(["assistant", "assistant", "user"]),
                           "content": st.one_of(st.none(), _text)},
                          optional={"delta": st.sampled_from([True, False])}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "tool_name": st.sampled_from(["shell", "read_file"])},
                          optional={"tool_id": st.one_of(st.none(), st.sampled_from(["t1", "t2", "t3"])),
                                    "parameters": _json_value}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_id": st.sampled_from(["t1", "t2", "t4"])},
                          optional={"status": st.sampled_from(["success", "error"]), "output": st.one_of(st.none(), _text),
                                    "error": st.one_of(st.none(), st.just({}),
                                                       st.fixed_dictionaries({"message": _text}))}),
    st.fixed_dictionaries({"type": st.sampled_from(["error", "result", "heartbeat"]),
                           "severity": st.just("warning"), "message": _text, "status": st.just("success")}),
    st.sampled_from([[1, 2], "a string line", 7]),  # not an object: dropped, counted
)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_event, max_size=25))
def test_stream_json_reads_as_its_rules_stated_plainly(events: list[Any]) -> None:
    lines = [{"type": "init", "timestamp": TS, "session_id": "s", "model": "gemini-2.5-pro"},
             {"type": "message", "timestamp": TS, "role": "user", "content": "start"}]  # two lines: JSON Lines
    lines += [{**e, "timestamp": TS} if isinstance(e, dict) else e for e in events]
    # ASCII escapes: text input is split by str.splitlines, which also breaks at U+0085 and U+2028.
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    source = TranscriptSource.open(text.encode())
    transcript = FORMAT.read(source)  # the reader's own output, before the pairing repair
    assert isinstance(transcript, Transcript)

    messages, counts = plain_reading(lines)
    assert list(transcript.messages) == messages
    assert transcript.model == "gemini-2.5-pro" and transcript.metadata["session_id"] == "s"
    report = source.report
    assert report.seen == len(lines)
    assert report.converted_count == counts["converted"]
    assert sum(report.merged_counts.values()) == counts["merged"]
    assert sum(report.absorbed_counts.values()) == counts["absorbed"]
    assert sum(report.dropped_counts.values()) == counts["dropped"]


def test_a_reply_of_thousands_of_chunks_is_their_text_in_order() -> None:
    # Past the batch the reader joins chunks in (1,024): the order and every chunk survive.
    lines: list[dict[str, Any]] = [{"type": "init", "timestamp": TS, "model": "m"},
             {"type": "message", "timestamp": TS, "role": "user", "content": "go"}]
    lines += [{"type": "message", "timestamp": TS, "role": "assistant", "content": f"{i},", "delta": True}
              for i in range(3000)]
    lines += [{"type": "tool_use", "timestamp": TS, "tool_id": "t1", "tool_name": "ls", "parameters": {}},
              {"type": "tool_result", "timestamp": TS, "tool_id": "t1", "status": "success", "output": "x"}]
    transcript = read_transcript(("\n".join(map(json.dumps, lines)) + "\n").encode())
    reply = transcript.messages[1]
    assert reply["content"] == "".join(f"{i}," for i in range(3000))
    assert [c["id"] for c in reply["tool_calls"]] == ["t1"]
    assert transcript.conversion is not None and transcript.conversion.merged == {
        "assistant_delta_chunks": 2999, "calls_of_one_response": 1}


# --- the shared helpers -------------------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.text(max_size=30),
                 st.tuples(st.sampled_from(["", " ", "\n\t "]), st.sampled_from(OPENINGS), st.text(max_size=10))
                 .map("".join),
                 st.sampled_from(OPENINGS).map(lambda o: o[:-1])))  # one character short: no mark
def test_user_text_is_marked_exactly_when_an_opening_says_so(text: str) -> None:
    report = ReportBuilder()
    marked = mark_user_text({"role": "user", "content": text}, report)
    assert marked == _marked(text)
    assert sum(report.relabelled_counts.values()) == (len(marked) - 2)


@settings(max_examples=examples(150), deadline=None)
@given(st.one_of(st.none(), st.just(""), _json_value), st.one_of(st.none(), st.sampled_from(["c1", ""])))
def test_tool_arguments_are_make_tool_calls_text(arguments: Any, ident: str | None) -> None:
    assert _tool_call(str(ident or ""), "tool", arguments) == make_tool_call(str(ident or ""), "tool", arguments)


# --- recordings and saved chats -----------------------------------------------------------------


def test_thought_signatures_are_counted_once_a_message_and_once_a_bare_part() -> None:
    chat = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "a", "thoughtSignature": "s1"}, {"text": "b", "thoughtSignature": "s2"},
                                    {"thoughtSignature": "s3"}]},
        {"role": "user", "parts": [{"text": "again"}]},
        {"role": "model", "parts": [{"text": "plain"}]},
    ]
    transcript = read_transcript(json.dumps(chat))
    assert [m.get("content") for m in transcript.messages] == ["hi", [{"type": "text", "text": "a"},
                                                                      {"type": "text", "text": "b"}], "again", "plain"]
    assert transcript.conversion is not None
    assert transcript.conversion.changed == {"thought_signatures_dropped": 2}


def test_a_recorded_call_still_running_gets_no_result_and_a_cancelled_one_fails() -> None:
    call = {"name": "shell", "args": {"command": "make"}, "timestamp": TS}
    lines = [
        {"sessionId": "s", "projectHash": "p", "startTime": TS},
        {"id": "u1", "timestamp": TS, "type": "user", "content": [{"text": "build"}]},
        {"id": "g1", "timestamp": TS, "type": "gemini", "content": "",
         "toolCalls": [{**call, "id": "c1", "status": "executing"}, {**call, "id": "c2", "status": "cancelled"},
                       {**call, "id": "c3", "status": "error",
                        "result": [{"functionResponse": {"id": "c3", "name": "shell", "response": {"output": "boom"}}}]}]},
        {"id": "u2", "timestamp": TS, "type": "user", "content": [{"text": "next"}]},
    ]
    transcript = read_transcript(("\n".join(map(json.dumps, lines)) + "\n").encode())
    reply = transcript.messages[1]
    assert reply["content"] is None and [c["id"] for c in reply["tool_calls"]] == ["c1", "c2", "c3"]
    results = {m["tool_call_id"]: m for m in transcript.messages[2:5]}
    assert results["c2"] == {"role": "tool", "tool_call_id": "c2", "content": "", "_is_error": True}
    assert results["c3"] == {"role": "tool", "tool_call_id": "c3", "content": "boom", "_is_error": True}
    # c1 recorded nothing: the pairing repair's placeholder (counted), not an invented output.
    assert results["c1"]["_is_error"] is True and results["c1"]["content"].startswith("[no result")
    assert transcript.messages[5]["content"] == "next"
    assert transcript.conversion is not None and transcript.conversion.changed["missing_tool_results_filled"] == 1
