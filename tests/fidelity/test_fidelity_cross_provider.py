"""Across providers, nothing silent (issue 28): a history in one provider's shape sent to the
other converts what converts, replaces the rest by visible placeholders, and counts both in
``Session.last_request_report`` with a warning. OpenAI Chat parts to OpenAI go out unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hermes_core.conversion import placeholder

import validators_anthropic
import validators_openai_chat
from fidelity_fixtures import (
    PDF_B64,
    PNG_B64,
    THINK_1,
    anthropic_history,
    open_session,
    openai_history,
)


def _warnings(session: Any) -> list[Any]:
    return [w for w in session.warnings if w.kind == "request_content_converted"]


def test_anthropic_history_to_openai_converts_and_counts(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    request = session.request(anthropic_history())
    validators_openai_chat.check(request)
    messages = request["messages"]
    user = messages[1]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
    assert user["content"][2] == {"type": "file", "file": {
        "filename": "spec.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"}}
    assistant = messages[2]
    assert assistant["content"].startswith("[thinking omitted: ")
    assert "[redacted thinking omitted: encrypted by the provider]" in assistant["content"]
    assert assistant["content"].endswith("Reading the file and the log.")
    tools = {m["tool_call_id"]: m for m in messages if m["role"] == "tool"}
    assert tools["toolu_01"]["content"] == "[tool error] FileNotFoundError: a.py"
    # Chat takes images in user messages only: the result's image goes to one right after
    # the tool results, labelled with the call it answers
    assert tools["toolu_02"]["content"][1]["text"] == "[image: in the user message after the tool results]"
    after = messages.index(tools["toolu_02"]) + 1
    assert messages[after]["role"] == "user" and messages[after]["content"][1:] == [
        {"type": "text", "text": "[image from the result of toolu_02]"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]
    assert tools["toolu_03"]["content"][0]["text"].startswith("[search result: Handlers (https://docs.example.com/")
    report = session.last_request_report
    assert report is not None and report.target == "openai"
    assert report.placeholders == {"redacted thinking": 1, "thinking": 2}
    assert report.converted == {
        "PDF document -> file part": 1, "image base64 source -> data URL": 1,
        "image in a tool result -> user message after the results": 1,
        "image url source -> URL": 1, "is_error -> [tool error] marker": 1,
        "search_result -> text part": 1,
    }
    found = _warnings(session)
    assert len(found) == 1 and "thinking x2" in found[0].message
    # the same losses on the next turn are not said again; the report still has them
    session.request(anthropic_history())
    assert _warnings(session) == [] and session.last_request_report == report


def test_openai_history_to_anthropic_converts_and_counts(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="anthropic")
    request = session.request(openai_history())
    validators_anthropic.check(request)
    user = request["messages"][0]["content"]
    assert user[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
    assert user[2] == {"type": "image", "source": {"type": "url", "url": "https://example.com/chart.png"}}
    assert user[3]["text"] == placeholder("audio", "wav", "2 kB")
    assert user[4] == {"type": "document", "title": "spec.pdf", "source": {
        "type": "base64", "media_type": "application/pdf", "data": PDF_B64}}
    refusal = request["messages"][1]["content"]
    assert refusal == [{"type": "text", "text": "I can't describe the person in the photo."}]
    results = {b["tool_use_id"]: b for b in request["messages"][4]["content"]}
    assert [b["text"] for b in results["call_1"]["content"]] == ["line 1: ok", "line 2: crash in b.py"]
    assert results["call_2"]["is_error"] is True
    report = session.last_request_report
    assert report is not None
    assert report.placeholders == {"audio": 1}
    assert report.converted == {"PDF file part -> document block": 1, "image URL -> url source": 1,
                                "image data URL -> base64 source": 1, "refusal -> text block": 1,
                                "image detail setting (Anthropic sizes images itself)": 1}
    assert len(_warnings(session)) == 1


def test_openai_parts_to_openai_go_out_unchanged(tmp_path: Path) -> None:
    history = openai_history()
    session = open_session(tmp_path, provider="openai")
    request = session.request(history)
    validators_openai_chat.check(request)
    sent = request["messages"][1:]
    assert sent[0] == history[0] and sent[1] == history[1] and sent[4] == history[4]
    assert sent[5]["content"] == "[tool error] no such file"  # the flag has no field in Chat
    report = session.last_request_report
    assert report is not None and report.lossless
    assert report.converted == {"is_error -> [tool error] marker": 1}
    assert _warnings(session) == []


_PLACEHOLDER = re.compile(r"^\[[a-z ]+ omitted(: [^\]]*)?\]$")
# The labels of a tool result's image moved to the user message after the results.
_MOVED = re.compile(r"^\[(images from the tool results above|image: in the user message after the tool results)\]$")
_MOVED_FROM = re.compile(r"^\[image from the result of \S+\]$")


def _essence(request: dict[str, Any], dropped_kinds: set[str]) -> list[Any]:
    """What a request says, block by block, without what a conversion is allowed to change:
    placeholders and the kinds the report lists as replaced, error markers (the flag itself
    is compared), text split into paragraphs (one text block or several say the same)."""
    out: list[Any] = []
    for message in request["messages"]:
        content = message["content"]
        items: list[Any] = []
        moved = False  # the next image is one a conversion moved out of a tool result
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            kind = block.get("type")
            if kind in dropped_kinds or (kind == "image" and moved):
                moved = False
                continue
            if kind == "text":
                for paragraph in block["text"].split("\n\n"):
                    moved = moved or bool(_MOVED_FROM.match(paragraph))
                    if paragraph and not (_PLACEHOLDER.match(paragraph) or _MOVED.match(paragraph)
                                          or _MOVED_FROM.match(paragraph)):
                        items.append(("text", paragraph))
            elif kind == "tool_result":
                inner = block.get("content")
                texts = [b for b in inner if b.get("type") not in dropped_kinds] if isinstance(inner, list) else inner
                if isinstance(texts, list):
                    texts = [t for t in texts if not (t.get("type") == "text" and (
                        _PLACEHOLDER.match(t["text"]) or _MOVED.match(t["text"])))]
                items.append(("result", block["tool_use_id"], json.dumps(texts, sort_keys=True)))
            else:
                items.append((kind, json.dumps({k: v for k, v in block.items() if k != "cache_control"},
                                               sort_keys=True)))
        if items:
            out.append((message["role"], items))
    return out


def test_round_trip_anthropic_openai_anthropic_loses_only_what_the_report_lists(tmp_path: Path) -> None:
    original_history = [m for m in anthropic_history() if m["role"] != "user" or m is not None]
    # A history without search results / documents (they convert one way only: listed below).
    original_history[0]["content"] = original_history[0]["content"][:2]
    original_history[-1]["content"][0]["content"] = "handlers live in b.py"
    first = open_session(tmp_path, provider="anthropic").request(original_history)
    to_openai = open_session(tmp_path, provider="openai")
    openai_request = to_openai.request(original_history)
    report = to_openai.last_request_report
    assert report is not None
    # The OpenAI request's messages become the history of an Anthropic request again.
    back = open_session(tmp_path, provider="anthropic").request(openai_request["messages"][1:])
    validators_anthropic.check(back)
    # What the report lists as replaced is gone (thinking, the image inside a tool result);
    # everything else says exactly what it said, byte for byte (images included).
    listed = {"thinking", "redacted_thinking"}
    want = _essence(first, listed)
    want = [(role, [i for i in items if not (i[0] == "result" and i[1] == "toolu_02")]) for role, items in want]
    got = _essence(back, listed)
    got = [(role, [i for i in items if not (i[0] == "result" and i[1] == "toolu_02")]) for role, items in got]
    # the error flag became a visible marker: the text keeps it, the flag is listed
    assert report.converted["is_error -> [tool error] marker"] == 1
    got_text = json.dumps(got)
    assert "[tool error] FileNotFoundError: a.py" in got_text
    got = json.loads(got_text.replace("[tool error] ", ""))
    assert json.loads(json.dumps(want)) == got
    assert set(report.placeholders) == {"thinking", "redacted thinking"}
    assert THINK_1["signature"] not in json.dumps(openai_request)


def test_an_empty_message_left_out_for_anthropic_is_counted(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""},
               {"role": "user", "content": "still there?"}]
    session = open_session(tmp_path, provider="anthropic")
    request = session.request(history)
    validators_anthropic.check(request)
    assert [m["role"] for m in request["messages"]] == ["user"]  # the two users, as one
    report = session.last_request_report
    assert report is not None and report.dropped == {"empty assistant message": 1}


def test_openrouter_to_claude_keeps_markers_in_the_envelope_and_converts_the_rest(tmp_path: Path) -> None:
    history = anthropic_history()
    history[0]["content"][0]["cache_control"] = {"type": "ephemeral"}  # the host's own
    session = open_session(tmp_path, provider="openrouter")
    request = session.request(history)
    validators_openai_chat.check(request, openrouter=True)
    assert request["messages"][1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    markers = json.dumps(request).count("cache_control")
    assert 1 < markers <= 4  # the layout's breakpoints gave way to the host's one
    report = session.last_request_report
    assert report is not None and report.user_breakpoints == 1
    assert "cache_control of a text part" not in report.dropped


def test_the_async_session_reports_the_same(tmp_path: Path) -> None:
    import asyncio

    from hermes_core import AsyncSession

    async def run() -> Any:
        home = tmp_path / "home"
        home.mkdir()
        session = await AsyncSession.open(cwd=str(tmp_path), home=str(home), env={}, model="gpt-5",
                                          provider="openai", persist=False, context_length=200_000)
        request = await session.request(anthropic_history())
        report = session.last_request_report
        await session.close()
        return request, report

    request, report = asyncio.run(run())
    validators_openai_chat.check(request)
    assert report.placeholders == {"redacted thinking": 1, "thinking": 2}


def test_malformed_parts_become_placeholders_in_valid_requests(tmp_path: Path) -> None:
    junk: list[Any] = [1, None, {"type": "image_url"}, {"no": "type"}, {"type": "image", "source": 5},
                       {"type": "input_audio", "input_audio": "x"}, "plain text"]
    history = [
        {"role": "user", "content": list(junk)},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, 7,
                                          {"type": "tool_use", "id": "toolu_1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": list(junk)}]},
    ]
    for provider, validator in (("anthropic", validators_anthropic), ("openai", validators_openai_chat)):
        session = open_session(tmp_path, provider=provider)
        validator.check(session.request(history))
        report = session.last_request_report
        assert report is not None and report.placeholders["image"] == 4
        # a reply with a block the API never returns goes by its readable fields, counted
        assert report.dropped == {"Anthropic blocks of a message rewritten since the reply": 1}


def test_a_participant_name_left_out_for_anthropic_is_counted(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="anthropic")
    request = session.request([{"role": "user", "name": "alice", "content": "hi"}])
    assert request["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}]
    assert session.last_request_report.dropped == {"name of a message": 1}  # type: ignore[union-attr]
