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


# --- Anthropic's newer blocks (lane anthfid): server tools, MCP, citations, uploads ----------
# Shapes as the Messages API documents them (anthropic-sdk-python ``types/*_block_param.py``);
# ids, encrypted contents and signatures are made-up strings of the documented form.

ENCRYPTED_PAGE = base64.b64encode(b"page text the search engine kept " * 60).decode()
WEB_SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_01WS", "name": "web_search",
                  "input": {"query": "request handler docs"}}
WEB_SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01WS", "content": [
    {"type": "web_search_result", "url": "https://docs.example.com/handlers", "title": "Handlers",
     "encrypted_content": ENCRYPTED_PAGE, "page_age": "April 30, 2026"},
    {"type": "web_search_result", "url": "https://blog.example.com/b-py", "title": "Why b.py",
     "encrypted_content": ENCRYPTED_PAGE[:400]}]}
#: One sentence the API split at its citation: three text blocks that read as one text.
CITED_SPANS = [
    {"type": "text", "text": "According to the docs, "},
    {"type": "text", "text": "handlers live in b.py", "citations": [
        {"type": "web_search_result_location", "url": "https://docs.example.com/handlers",
         "title": "Handlers", "encrypted_index": "Eo8BCioIAhgBIiQ", "cited_text": "Handlers live in b.py."}]},
    {"type": "text", "text": "."},
]
WEB_FETCH_USE = {"type": "server_tool_use", "id": "srvtoolu_02WF", "name": "web_fetch",
                 "input": {"url": "https://docs.example.com/spec.pdf"}}
WEB_FETCH_RESULT = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_02WF", "content": {
    "type": "web_fetch_result", "url": "https://docs.example.com/spec.pdf",
    "retrieved_at": "2026-12-01T10:00:00Z",
    "content": {"type": "document", "title": "spec.pdf", "citations": {"enabled": True},
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64 * 40}}}}
BASH_USE = {"type": "server_tool_use", "id": "srvtoolu_03BA", "name": "bash_code_execution",
            "input": {"command": "python -c 'print(6*7)'"}}
BASH_RESULT = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_03BA", "content": {
    "type": "bash_code_execution_result", "stdout": "42\n", "stderr": "", "return_code": 0, "content": []}}
EDITOR_USE = {"type": "server_tool_use", "id": "srvtoolu_04TE", "name": "text_editor_code_execution",
              "input": {"command": "view", "path": "/tmp/out.txt"}}
EDITOR_ERROR = {"type": "text_editor_code_execution_tool_result", "tool_use_id": "srvtoolu_04TE",
                "content": {"type": "text_editor_code_execution_tool_result_error",
                            "error_code": "unavailable"}}
CODE_USE = {"type": "server_tool_use", "id": "srvtoolu_05CE", "name": "code_execution",
            "input": {"code": "print(sum(range(10)))"}}
CODE_RESULT = {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_05CE", "content": {
    "type": "code_execution_result", "stdout": "45\n", "stderr": "", "return_code": 0,
    "content": [{"type": "code_execution_output", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}]}}
TOOL_SEARCH_USE = {"type": "server_tool_use", "id": "srvtoolu_06TS", "name": "tool_search_tool_regex",
                   "input": {"query": "weather"}}
TOOL_SEARCH_RESULT = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_06TS", "content": {
    "type": "tool_search_tool_search_result",
    "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}}
MCP_USE = {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "list_issues",
           "server_name": "tracker", "input": {"state": "open"}}
MCP_RESULT = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": False,
              "content": [{"type": "text", "text": "#12 crash in b.py\n#14 slow start"}]}
CONTAINER_UPLOAD = {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}
CITED_DOCUMENT = {"type": "document", "title": "notes.txt", "context": "the team's notes",
                  "citations": {"enabled": True},
                  "source": {"type": "text", "media_type": "text/plain", "data": "b.py holds the handler."}}
#: A text block citing each kind of location the API returns.
CITED_EVERYWHERE = {"type": "text", "text": "b.py holds the handler", "citations": [
    {"type": "char_location", "cited_text": "b.py holds the handler.", "document_index": 0,
     "document_title": "notes.txt", "start_char_index": 0, "end_char_index": 23},
    {"type": "page_location", "cited_text": "handler", "document_index": 1,
     "document_title": "spec.pdf", "start_page_number": 1, "end_page_number": 2},
    {"type": "content_block_location", "cited_text": "handler", "document_index": 2,
     "document_title": None, "start_block_index": 0, "end_block_index": 1},
    {"type": "search_result_location", "cited_text": "Handlers live in b.py.", "search_result_index": 0,
     "source": "https://docs.example.com/handlers", "title": "Handlers",
     "start_block_index": 0, "end_block_index": 1}]}


def server_tool_history() -> list[dict[str, Any]]:
    """A conversation whose assistant turns use Anthropic's server tools and an MCP server:
    each server call and its result in the same assistant message, a cited answer, a client
    tool loop with interleaved thinking in progress at the end."""
    return copy.deepcopy([
        {"role": "user", "content": [
            {"type": "text", "text": "Where do request handlers live? Data file attached."},
            CONTAINER_UPLOAD, CITED_DOCUMENT]},
        {"role": "assistant", "content": [
            THINK_1, {"type": "text", "text": "Searching the docs."}, WEB_SEARCH_USE, WEB_SEARCH_RESULT,
            *CITED_SPANS]},
        {"role": "user", "content": "Fetch the spec, run the numbers and check the tracker."},
        {"role": "assistant", "content": [
            WEB_FETCH_USE, WEB_FETCH_RESULT, BASH_USE, BASH_RESULT, EDITOR_USE, EDITOR_ERROR,
            CODE_USE, CODE_RESULT, TOOL_SEARCH_USE, TOOL_SEARCH_RESULT, MCP_USE, MCP_RESULT,
            CITED_EVERYWHERE]},
        {"role": "user", "content": "Now read b.py and the log."},
        {"role": "assistant", "content": [
            THINK_2, {"type": "tool_use", "id": "toolu_11", "name": "read_file", "input": {"path": "b.py"}},
            {"type": "thinking", "thinking": "And the log, to see the trace.", "signature": "EqQBsig-interleaved"},
            {"type": "tool_use", "id": "toolu_12", "name": "read_log", "input": {"n": 20}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_11", "content": [SEARCH, CITED_DOCUMENT]},
            {"type": "tool_result", "tool_use_id": "toolu_12", "is_error": True, "content": "log rotated"}]},
    ])
#: The API's own summary of the turns before it (context management, beta): to be sent back.
COMPACTION = {"type": "compaction", "content": "The user asked where handlers live; b.py holds them.",
              "encrypted_content": base64.b64encode(b"opaque compaction state " * 20).decode()}


# --- beta and future Anthropic blocks (lane anth2) -------------------------------------------
# Shapes as the SDK's beta types document them (``BetaMidConversationSystemBlockParam``,
# ``BetaAdvisorToolResultBlockParam``, ``BetaFallbackBlockParam``, ``BetaToolReferenceBlockParam``);
# ``HOLO_BLOCK`` is an invented type standing for any block the API adds later.

MID_CONV_SYSTEM = {"type": "mid_conv_system", "content": [{"type": "text", "text": "From now on, answer in French."}]}
ADVISOR_USE = {"type": "server_tool_use", "id": "srvtoolu_09AD", "name": "advisor", "input": {}}
ADVISOR_RESULT = {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_09AD",
                  "content": {"type": "advisor_result", "text": "Check the handler in b.py before the log."}}
ADVISOR_ERROR = {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_10AD",
                 "content": {"type": "advisor_tool_result_error", "error_code": "unavailable"}}
FALLBACK = {"type": "fallback", "from": {"model": "claude-opus-4-8"}, "to": {"model": "claude-sonnet-4-6"}}
TOOL_REFERENCE = {"type": "tool_reference", "tool_name": "get_weather"}
HOLO_BLOCK = {"type": "holo_block", "id": "holo_01", "payload": {"frames": [1, 2, 3], "note": "made up"}}


def beta_block_history() -> list[dict[str, Any]]:
    """A conversation holding each beta block where the API documents it, and an invented type
    in an assistant reply of text alone (no other block marks it Anthropic's)."""
    return copy.deepcopy([
        {"role": "user", "content": [{"type": "text", "text": "Find the weather tool."}, MID_CONV_SYSTEM]},
        {"role": "assistant", "content": [
            THINK_1, ADVISOR_USE, ADVISOR_RESULT, FALLBACK,
            {"type": "thinking", "thinking": "Now the tool search.", "signature": "EqQBsig-after-fallback"},
            {"type": "text", "text": "Searching my tools."},
            {"type": "tool_use", "id": "toolu_21", "name": "find_tool", "input": {"q": "weather"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_21", "content": [TOOL_REFERENCE]}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Found it."}, HOLO_BLOCK]},
        {"role": "user", "content": "And in Paris?"},
    ])
