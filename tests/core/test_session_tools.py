"""The Session's tool-side entry points run the tool hooks with the session's window and home."""

from __future__ import annotations

from pathlib import Path

from hermes_core import Session


def mcp_tool(i: int) -> dict:
    return {
        "type": "function",
        "source": "mcp-github",
        "function": {"name": f"github_tool_{i}", "description": f"Do GitHub thing number {i}.", "parameters": {"type": "object", "properties": {}}},
    }


def core_tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"The {name} tool.", "parameters": {"type": "object", "properties": {}}}}


def test_assemble_tools_defers_mcp_tools_behind_the_bridge(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=200_000, persist=False)
    tools = [core_tool("terminal"), core_tool("read_file")] + [mcp_tool(i) for i in range(30)]
    seen = [t["function"]["name"] for t in session.assemble_tools(tools)]
    assert "terminal" in seen and "read_file" in seen
    assert {"tool_search", "tool_describe", "tool_call"} <= set(seen)
    assert not any(name.startswith("github_tool_") for name in seen)
    again = [t["function"]["name"] for t in session.assemble_tools(session.assemble_tools(tools))]
    assert again == seen


def test_process_tool_result_spills_big_results_under_home(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=16_384, persist=False)
    big = "line of output\n" * 20_000
    out = session.process_tool_result(big, tool_name="terminal", tool_call_id="call_1")
    assert isinstance(out, str) and len(out) < len(big)
    spilled = list((tmp_path / "cache" / "spillover").iterdir())
    assert spilled and spilled[0].read_text() == big
    assert str(spilled[0]) in out and "read_file" in out
    small = session.process_tool_result("ok", tool_name="terminal", tool_call_id="call_2")
    assert small == "ok"
    assert session.process_tool_result(big, tool_name="read_file", tool_call_id="call_3") != ""


def test_the_tools_context_is_kept_while_what_it_holds_is_the_same(tmp_path: Path) -> None:
    import attrs

    session = Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                           context_length=200_000, persist=False)
    first = session.tools_context()
    assert session.tools_context() is first  # built once, not on every assembly
    assert first.context_length == 200_000 and first.session is session
    session.config = attrs.evolve(session.config)
    second = session.tools_context()
    assert second is not first and second.config is session.config
    session.environment = object()
    assert session.tools_context().environment is session.environment
