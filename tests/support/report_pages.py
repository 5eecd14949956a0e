"""Reading the HTML report's pages back (the embedded data, the figures each cell shows) and the
coding sessions the report tests render, shared by the report tests."""

from __future__ import annotations

import json
import re
from typing import Any

from compressor_support import assistant, call, system, tool, user


def page_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script id="hermes-report-data" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def shown_figures(page: str) -> dict[str, str]:
    """data-path -> the text shown in that cell (tags stripped)."""
    return {m.group(1): re.sub(r"<[^>]+>", "", m.group(2)) for m in
            re.finditer(r'data-path="([^"]+)"[^>]*>(.*?)</(?:td|b|span)>', page, re.S)}


def resolve(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def same_figure(shown: str, value: Any) -> bool:
    if isinstance(value, bool):
        return shown == ("yes" if value else "no")
    if isinstance(value, int):
        return shown.replace(",", "") == str(value)
    if isinstance(value, float):
        if shown.endswith("%"):
            return abs(float(shown[:-1]) - value * 100) < 0.051
        return abs(float(shown.replace(",", "")) - value) <= max(abs(value), 1) * 1e-3
    return shown == ("-" if value is None else str(value))


def assert_figures_match(page: str, report: dict[str, Any], key: str) -> int:
    """Every figure of ``page`` under ``key`` equals the same path of ``report``; how many."""
    checked = 0
    for path, shown in shown_figures(page).items():
        if path.split(".")[0] != key:
            continue
        value = resolve(report, path.split(".", 1)[1])
        assert same_figure(shown, value), (path, shown, value)
        checked += 1
    return checked


def session(turns: int = 30) -> list[dict[str, Any]]:
    """A coding session: reads, a failing shell command, edits, a decision of the user's."""
    messages = [system("You are a coding agent.")]
    for i in range(turns):
        messages.append(user(f"step {i}: fix src/mod_{i}.py, never touch the tests"))
        messages.append(assistant("", call(f"r{i}", "read_file", path=f"src/mod_{i}.py")))
        messages.append(tool(f"r{i}", f"def f_{i}():\n    return {i}\n" * 120))
        messages.append(assistant("", call(f"b{i}", "bash", command=f"pytest tests/test_{i}.py")))
        messages.append(tool(f"b{i}", f"FAILED tests/test_{i}.py::test_f - AssertionError\nexit code 1\n" + "x" * 400))
        messages.append(assistant(f"Fixed src/mod_{i}.py."))
    messages.append(user("now run the whole suite"))
    return messages


BIG = "line of a large build log\n" * 2_000  # 52,000 characters: over any 16k-window threshold


BIG_AT = (3, 9, 15, 21, 75, 141)


def big_session() -> list[dict[str, Any]]:
    messages = session(30)
    for i in BIG_AT:
        assert messages[i]["role"] == "tool"
        messages[i] = tool(messages[i]["tool_call_id"], BIG)
    return messages
