"""Hand-written histories in each provider's own shapes for the fidelity tests (issue 28).

Small, byte-exact fixtures: a tiny PNG and PDF as base64, signed thinking blocks (the signatures
are opaque strings the API checks; here any non-empty string), redacted thinking, parallel tool
calls, a failed call (``is_error``), an image and a search result inside tool results.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

from hermes_core import Session

PNG_B64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode()
PDF_B64 = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n").decode()
WAV_B64 = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(2000)).decode()

THINK_1 = {"type": "thinking", "thinking": "The user wants the bug fixed; read a.py and the log.",
           "signature": "EqQBCkYIBxgCKkBs1gnEd-first"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}
THINK_2 = {"type": "thinking", "thinking": "a.py is missing; b.py holds the handler.",
           "signature": "EqQBCkYIBxgCKkBs1gnEd-second"}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
URL_IMAGE = {"type": "image", "source": {"type": "url", "url": "https://example.com/chart.png"}}
DOCUMENT = {"type": "document", "title": "spec.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64}}
SEARCH = {"type": "search_result", "source": "https://docs.example.com/handlers", "title": "Handlers",
          "content": [{"type": "text", "text": "Handlers live in b.py."}]}


def anthropic_history() -> list[dict[str, Any]]:
    """A tool loop in progress, as an Anthropic host holds it: the latest assistant turn (with
    thinking) asked for b.py, and its result is the last message."""
    return copy.deepcopy([
        {"role": "user", "content": [
            {"type": "text", "text": "Here is the screenshot and the spec. Fix the crash."},
            IMAGE, DOCUMENT]},
        {"role": "assistant", "content": [
            THINK_1, REDACTED,
            {"type": "text", "text": "Reading the file and the log."},
            {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_02", "name": "show_chart", "input": {"name": "errors"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": True,
             "content": "FileNotFoundError: a.py"},
            {"type": "tool_result", "tool_use_id": "toolu_02",
             "content": [{"type": "text", "text": "errors per hour:"}, IMAGE]},
            URL_IMAGE, {"type": "text", "text": "^ and this is what I see on my screen"},
        ]},
        {"role": "assistant", "content": [
            THINK_2,
            {"type": "tool_use", "id": "toolu_03", "name": "search_docs", "input": {"q": "handler"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_03", "content": [SEARCH]},
        ]},
    ])


def openai_history() -> list[dict[str, Any]]:
    """An OpenAI Chat history with every part kind: image (data URL and URL), audio, a PDF
    file, a refusal, tool content as a list of text parts."""
    return copy.deepcopy([
        {"role": "user", "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}", "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
            {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}},
            {"type": "file", "file": {"filename": "spec.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"}},
        ]},
        {"role": "assistant", "content": None, "refusal": "I can't describe the person in the photo."},
        {"role": "user", "content": "Then read the log."},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_log", "arguments": '{"n": 5}'}},
            {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": [
            {"type": "text", "text": "line 1: ok"}, {"type": "text", "text": "line 2: crash in b.py"}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "no such file", "_is_error": True},
    ])


def open_session(tmp_path: Path, provider: str = "anthropic", **kwargs: Any) -> Session:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    kwargs.setdefault("context_length", 200_000)
    return Session.open(cwd=str(tmp_path), home=str(home), env={}, model="claude-sonnet-4-5",
                        provider=provider, persist=False, **kwargs)
