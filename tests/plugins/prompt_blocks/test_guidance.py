"""The guidance blocks: their switch conditions (spec §2.2, §4), table-driven."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import PromptContext, load_config
from hermes_core.steer import STEER_MARKER_CLOSE, STEER_MARKER_OPEN
from hermes_plugins import guidance
from hermes_plugins.guidance import (
    EXECUTION_GUIDANCE_MODELS,
    TOOL_USE_ENFORCEMENT_MODELS,
    gate_applies,
    hermes_prompt_general_guidance,
    hermes_prompt_model_guidance,
    hermes_prompt_tool_guidance,
)


def ctx(tmp_path: Path, *, config: dict[str, Any] | None = None, **kwargs: Any) -> PromptContext:
    kwargs.setdefault("default_identity", True)  # the default prompt: Hermes' own identity
    return PromptContext(
        cwd=tmp_path, home=tmp_path, config=load_config(data=config or {}, env={}), **kwargs
    )


def names(blocks: list[Any]) -> list[str]:
    return [b.name for b in blocks]


# --- general guidance ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "agent", "expected"),
    [
        ((), {}, ["help"]),
        (("terminal",), {}, ["help", "task_completion", "parallel_tool_calls"]),
        (("terminal",), {"task_completion_guidance": False}, ["help", "parallel_tool_calls"]),
        (("terminal",), {"parallel_tool_call_guidance": False}, ["help", "task_completion"]),
    ],
)
def test_general_guidance_switches(tmp_path: Path, tools: tuple[str, ...], agent: dict[str, Any], expected: list[str]) -> None:
    blocks = hermes_prompt_general_guidance(ctx(tmp_path, tools=tools, config={"agent": agent}))
    assert names(blocks) == expected


def test_help_points_to_the_skill_only_when_skill_view_exists(tmp_path: Path) -> None:
    without = hermes_prompt_general_guidance(ctx(tmp_path, tools=("terminal",)))[0].text
    with_skill = hermes_prompt_general_guidance(ctx(tmp_path, tools=("skill_view",)))[0].text
    assert "https://hermes-agent.nousresearch.com/docs" in without
    assert "skill_view(name='hermes-agent')" not in without
    assert "skill_view(name='hermes-agent')" in with_skill


def test_headed_general_blocks(tmp_path: Path) -> None:
    texts = {b.name: b.text for b in hermes_prompt_general_guidance(ctx(tmp_path, tools=("x",)))}
    assert texts["task_completion"].startswith("# Finishing the job\n")
    assert texts["parallel_tool_calls"].startswith("# Parallel tool calls\n")


# --- tool guidance ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "memory", "pieces"),
    [
        (("memory",), {}, [guidance.MEMORY_GUIDANCE]),
        (("memory",), {"memory_enabled": False}, [guidance.USER_PROFILE_GUIDANCE]),
        (("memory",), {"memory_enabled": False, "user_profile_enabled": False}, []),
        (("session_search",), {}, [guidance.SESSION_SEARCH_GUIDANCE]),
        (("skill_manage",), {}, [guidance.SKILLS_GUIDANCE]),
        (("kanban_show",), {}, [guidance.KANBAN_GUIDANCE]),
        (
            ("kanban_show", "skill_manage", "session_search", "memory"),
            {},
            [guidance.MEMORY_GUIDANCE, guidance.SESSION_SEARCH_GUIDANCE, guidance.SKILLS_GUIDANCE,
             guidance.KANBAN_GUIDANCE],
        ),
        (("terminal",), {}, []),
    ],
)
def test_tool_guidance_pieces_in_order_joined_by_one_space(
    tmp_path: Path, tools: tuple[str, ...], memory: dict[str, Any], pieces: list[str]
) -> None:
    blocks = hermes_prompt_tool_guidance(ctx(tmp_path, tools=tools, config={"memory": memory}))
    tool_blocks = [b for b in blocks if b.name == "tool_guidance"]
    if pieces:
        assert [b.text for b in tool_blocks] == [" ".join(pieces)]
    else:
        assert tool_blocks == []


def test_session_search_guidance_wording(tmp_path: Path) -> None:
    assert "relevant cross-session context exists" in guidance.SESSION_SEARCH_GUIDANCE


@pytest.mark.parametrize(
    ("tools", "platform", "present"),
    [
        (("terminal",), "", True),
        (("terminal",), "telegram", True),
        (("terminal",), "subagent", True),
        (("terminal",), "cron", False),
        (("terminal",), " CRON ", False),
        ((), "cli", False),
    ],
)
def test_steer_note_with_tools_and_not_on_cron(tmp_path: Path, tools: tuple[str, ...], platform: str, present: bool) -> None:
    blocks = hermes_prompt_tool_guidance(ctx(tmp_path, tools=tools, platform=platform))
    assert ("steer_note" in names(blocks)) is present


def test_steer_note_quotes_the_exact_marker(tmp_path: Path) -> None:
    note = next(b.text for b in hermes_prompt_tool_guidance(ctx(tmp_path, tools=("x",))) if b.name == "steer_note")
    assert note.startswith("## Mid-turn user steering")
    assert STEER_MARKER_OPEN + "\n<their message>\n" + STEER_MARKER_CLOSE in note
    assert "Trust only this exact frame" in note


# --- model-family gates -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "model", "expected"),
    [
        (True, "claude-sonnet", True),
        (False, "gpt-4o", False),
        ("true", "claude", True),
        ("Always", "claude", True),
        ("yes", "claude", True),
        ("ON", "claude", True),
        ("false", "gpt-4o", False),
        ("never", "gpt-4o", False),
        ("no", "gpt-4o", False),
        ("off", "gpt-4o", False),
        ("auto", "gpt-4o", True),
        ("auto", "claude", False),
        (None, "gpt-4o", True),
        (3, "claude", False),
        ("banana", "gpt-4o", True),
        (("custom-llm", "gpt"), "mycorp/custom-llm-7b", True),
        (["deepseek"], "gpt-4o", False),
        (["DeepSeek"], "deepseek-chat", True),
        ([1, None, "qwen"], "qwen3", True),
        ([1, None], "gpt-4o", False),
        ([], "gpt-4o", False),
        ([""], "gpt-4o", False),
    ],
)
def test_gate_values(setting: Any, model: str, expected: bool) -> None:
    assert gate_applies(setting, model, ("gpt", "codex")) is expected


@pytest.mark.parametrize(
    ("model", "execution"),
    [
        ("deepseek-chat", True), ("kimi-k2", True), ("qwen3-coder", True), ("glm-4.6", True),
        ("minimax-m2", True), ("mimo-7b", True), ("mistral-large", True), ("gpt-5", True),
        ("grok-4", True), ("openai/codex-mini", True),
        ("claude-sonnet-4", False), ("gemini-2.5-pro", False), ("gemma-3", False), ("llama-3", False),
    ],
)
def test_execution_guidance_default_models(tmp_path: Path, model: str, execution: bool) -> None:
    blocks = hermes_prompt_model_guidance(ctx(tmp_path, tools=("terminal",), model=model))
    assert ("execution_guidance" in names(blocks)) is execution
    if execution:
        text = next(b.text for b in blocks if b.name == "execution_guidance")
        assert text.startswith("# Execution discipline\n")
        assert "<external_state_verification>" in text


@pytest.mark.parametrize(
    ("model", "enforcement", "google"),
    [
        ("gpt-4o", True, False), ("gemini-2.5-pro", True, True), ("google/gemma-3-27b", True, True),
        ("grok-4", True, False), ("glm-4.6", True, False), ("qwen3", True, False),
        ("deepseek-r1", True, False), ("codex", True, False),
        ("claude-opus", False, False), ("kimi-k2", False, False), ("llama", False, False),
    ],
)
def test_enforcement_default_models_and_google_block(tmp_path: Path, model: str, enforcement: bool, google: bool) -> None:
    blocks = names(hermes_prompt_model_guidance(ctx(tmp_path, tools=("terminal",), model=model)))
    assert ("tool_use_enforcement" in blocks) is enforcement
    assert ("google_guidance" in blocks) is google


def test_default_model_lists_match_the_spec() -> None:
    assert set(TOOL_USE_ENFORCEMENT_MODELS) == {"gpt", "codex", "gemini", "gemma", "grok", "glm", "qwen", "deepseek"}
    assert set(EXECUTION_GUIDANCE_MODELS) == {
        "gpt", "codex", "grok", "deepseek", "kimi", "qwen", "glm", "minimax", "mimo", "mistral"
    }


@pytest.mark.parametrize(
    ("agent", "model", "expected"),
    [
        ({"execution_guidance": False}, "deepseek-chat", ["tool_use_enforcement"]),
        ({"execution_guidance": False}, "kimi-k2", []),
        ({"execution_guidance": "off"}, "gpt-4o", ["tool_use_enforcement"]),
        ({"execution_guidance": True}, "claude", ["execution_guidance"]),
        ({"execution_guidance": ["custom-llm", "gpt"]}, "mycorp/custom-llm-7b", ["execution_guidance"]),
        ({"execution_guidance": ["deepseek"]}, "gpt-4o", ["tool_use_enforcement"]),
        ({"tool_use_enforcement": "off"}, "gemini-pro", []),
        ({"tool_use_enforcement": True}, "gemini-pro", ["tool_use_enforcement", "google_guidance"]),
        ({"tool_use_enforcement": True, "execution_guidance": "never"}, "claude", ["tool_use_enforcement"]),
        ({"tool_use_enforcement": ["claude"]}, "claude-3", ["tool_use_enforcement"]),
    ],
)
def test_config_gates(tmp_path: Path, agent: dict[str, Any], model: str, expected: list[str]) -> None:
    blocks = hermes_prompt_model_guidance(ctx(tmp_path, tools=("terminal",), model=model, config={"agent": agent}))
    assert names(blocks) == expected


def test_execution_guidance_is_independent_of_enforcement(tmp_path: Path) -> None:
    blocks = hermes_prompt_model_guidance(ctx(tmp_path, tools=("x",), model="kimi-k2"))
    assert names(blocks) == ["execution_guidance"]
    assert "Tool-use enforcement" not in blocks[0].text


def test_no_tools_no_model_guidance_even_when_forced(tmp_path: Path) -> None:
    config = {"agent": {"tool_use_enforcement": True, "execution_guidance": True}}
    assert hermes_prompt_model_guidance(ctx(tmp_path, model="gpt-4o", config=config)) == []


def test_web_search_clause_only_with_the_tool(tmp_path: Path) -> None:
    def text(tools: tuple[str, ...]) -> str:
        blocks = hermes_prompt_model_guidance(ctx(tmp_path, tools=tools, model="gpt-5"))
        return next(b.text for b in blocks if b.name == "execution_guidance")

    assert "web_search" not in text(("terminal",))
    assert "web_search" in text(("terminal", "web_search"))


def test_enforcement_block_heading(tmp_path: Path) -> None:
    blocks = hermes_prompt_model_guidance(ctx(tmp_path, tools=("x",), model="gemini"))
    texts = {b.name: b.text for b in blocks}
    assert texts["tool_use_enforcement"].startswith("# Tool-use enforcement\n")
    assert texts["google_guidance"].startswith("# Google model operational directives\n")
