"""What an LLM summariser reads is labelled as what it is (issue 29): a flagged result is an
ERROR, a placeholder is "no result recorded" (not a failure), and user turns that hold no
request the person typed are INJECTED - so the model invents no failure and no request."""

from __future__ import annotations

from hermes_core.transcripts import MISSING_RESULT_TEXT
from hermes_plugins.compressor.prompt import build_summary_prompt
from hermes_plugins.compressor.serialize import prepare_turns, serialize_turns

from compressor_support import assistant, call, tool, user


def test_turns_are_labelled_for_the_llm() -> None:
    messages = [
        user("deploy the api"),
        assistant("", call("c1", "deploy", target="prod"), call("c2", "bash", command="make check")),
        {**tool("c1", "quota exceeded"), "_is_error": True},
        {**tool("c2", MISSING_RESULT_TEXT), "_is_error": True},
        user("[execute_command for 'npm test'] Result:\nCommand executed."),
        {"role": "user", "content": "Applied edit to api.py", "_injected": "aider-output"},
        user("<task>\nship it\n</task>\n<environment_details>\nx\n</environment_details>"),
    ]
    text = serialize_turns(prepare_turns(messages))
    assert "[USER]: deploy the api" in text
    assert "[TOOL RESULT c1 (deploy) ERROR]: quota exceeded" in text
    assert "[TOOL RESULT c2 (bash)]: (no result recorded: not a failure, not a success)" in text
    assert MISSING_RESULT_TEXT not in text
    assert "[INJECTED TOOL OUTPUT (not typed by the user)]: [execute_command for 'npm test'] Result:" in text
    assert "[INJECTED AIDER-OUTPUT (not typed by the user)]: Applied edit to api.py" in text
    assert "[USER]: <task>" in text  # a request wrapped in harness text stays the user's


def test_prompt_says_no_result_is_no_failure() -> None:
    prompt = build_summary_prompt("[USER]: hi", previous_summary=None, focus_topic=None, budget_tokens=1_000,
                                  has_user_turn=True)
    assert "A call with no result recorded did not fail" in prompt
    assert "INJECTED" in prompt
