"""One-line summaries of old tool results (§7.2)."""

from __future__ import annotations

import json

import pytest

from hermes_plugins.compressor.oneliners import (
    exit_code_of,
    looks_demoted,
    summarize_tool_result,
)


def args(**kw: object) -> str:
    return json.dumps(kw)


@pytest.mark.parametrize(
    "name, arguments, content, expected",
    [
        ("terminal", args(command="npm test"), '{"output": "ok\\n", "exit_code": 0}' + "\n" * 46,
         "[terminal] ran `npm test` -> exit 0, 47 lines output"),
        ("read_file", args(path="config.py"), "x" * 1_200, "[read_file] read config.py from line 1 (1,200 chars)"),
        ("read_file", args(path="a.py", offset=40), "y" * 10, "[read_file] read a.py from line 40 (10 chars)"),
        ("write_file", args(path="out.txt", content="a\nb\nc"), "ok", "[write_file] wrote to out.txt (3 lines)"),
        ("write_file", args(path="out.txt"), "ok", "[write_file] wrote to out.txt (? lines)"),
        ("search_files", args(pattern="TODO", path="src"), '{"total_count": 12, "matches": []}',
         "[search_files] content search for 'TODO' in src -> 12 matches"),
        ("search_files", args(pattern="x", target="files"), "[]", "[search_files] files search for 'x' in . -> ? matches"),
        ("patch", args(path="app.py", mode="replace"), "z" * 300, "[patch] replace in app.py (300 chars result)"),
        ("browser_navigate", args(url="https://example.com"), "p" * 5, "[browser_navigate] https://example.com (5 chars)"),
        ("browser_click", args(ref="e12"), "p" * 5, "[browser_click] ref=e12 (5 chars)"),
        ("web_search", args(query="pluggy hooks"), "r" * 2_000, "[web_search] query='pluggy hooks' (2,000 chars result)"),
        ("web_extract", args(urls=["https://a.example", "https://b.example", "https://c.example"]), "t" * 9,
         "[web_extract] https://a.example (+2 more) (9 chars)"),
        ("web_extract", args(urls=[{"url": "https://d.example"}]), "t", "[web_extract] https://d.example (1 chars)"),
        ("delegate_task", args(goal="g" * 70), "done", "[delegate_task] '" + "g" * 57 + "...' (4 chars result)"),
        ("execute_code", args(code="import os\nprint(os.getcwd())"), "/tmp\n",
         "[execute_code] `import os print(os.getcwd())` (2 lines output)"),
        ("skill_view", args(name="deploy"), "s" * 50, "[skill_view] name=deploy (50 chars)"),
        ("vision_analyze", args(question="What is in this picture?"), "a cat", "[vision_analyze] 'What is in this picture?' (5 chars)"),
        ("memory", args(action="add", target="user"), "ok", "[memory] add on user"),
        ("todo", args(todos=[]), "ok", "[todo] updated task list"),
        ("clarify", args(question="which?"), "A", "[clarify] asked user a question"),
        ("text_to_speech", args(text="hi"), "audio", "[text_to_speech] generated audio (5 chars)"),
        ("cronjob", args(action="create"), "ok", "[cronjob] create"),
        ("process", args(action="kill", session_id="p-1"), "ok", "[process] kill session=p-1"),
        ("acme_lookup", args(sku="X-1", region="eu", extra="no"), "q" * 3_000,
         "[acme_lookup] sku=X-1 region=eu (3,000 chars result)"),
    ],
)
def test_one_liner_per_tool(name: str, arguments: str, content: str, expected: str) -> None:
    assert summarize_tool_result(name, arguments, content) == expected


def test_long_terminal_command_is_cut_to_80() -> None:
    line = summarize_tool_result("terminal", args(command="echo " + "a" * 200), '"exit_code": 1')
    assert "`echo " + "a" * 72 + "...`" in line
    assert "-> exit 1" in line


def test_never_raises_and_falls_back() -> None:
    assert summarize_tool_result("read_file", "{not json", "abc") == "[read_file] read ? from line 1 (3 chars)"
    assert summarize_tool_result(None, None, None) == "[unknown] (0 chars result)"
    # Non-string argument values are coerced; odd shapes never raise.
    assert summarize_tool_result("web_extract", args(urls=[1, 2]), "x").startswith("[web_extract] 1 (+1 more)")

    class Explodes:
        def __str__(self) -> str:
            raise RuntimeError("boom")

    assert summarize_tool_result("read_file", {"path": Explodes()}, "abc") == "[read_file] (3 chars result)"


def test_exit_code_found_anywhere() -> None:
    assert exit_code_of('{"exit_code": 2, "output": "' + "x" * 2_000 + '"}') == "2"
    assert exit_code_of("Exit code: 127") == "127"
    assert exit_code_of("nothing here") == "?"


def test_looks_demoted() -> None:
    assert looks_demoted("[read_file] read a.py from line 1 (10 chars)")
    assert looks_demoted("[terminal] ran `ls` -> exit 0, 3 lines output")
    assert looks_demoted("[screenshot removed to save context]")
    assert not looks_demoted("plain output")
    assert not looks_demoted("[1, 2, 3]\n" * 50)


def test_huge_outputs_get_an_estimated_line_count() -> None:
    small = "row\n" * 100
    assert summarize_tool_result("execute_code", args(code="x"), small) == "[execute_code] `x` (101 lines output)"
    big = "a line of output\n" * 10_000  # 170,000 chars: sampled, marked as an estimate
    line = summarize_tool_result("terminal", args(command="seq 10000"), big + '{"exit_code": 0}')
    assert line.startswith("[terminal] ran `seq 10000` -> exit 0, ~") and line.endswith(" lines output")
    estimate = int(line.split("~")[1].split(" ")[0].replace(",", ""))
    assert abs(estimate - 10_001) < 200


def test_a_failed_results_error_line_is_quoted_with_secrets_masked() -> None:
    secret = "sk-proj-Q7wE9rT1yU3iO5pA7sD9fG1h"
    line = summarize_tool_result("terminal", {"command": "deploy"}, f"error: bad key {secret}\nexit code 1")
    assert "error: bad key" in line
    assert secret not in line
