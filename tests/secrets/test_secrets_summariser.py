"""The LLM summariser never receives a secret of any family (the AWS STS JSON case of issue 31
first), and what it answers is redacted before it becomes the summary."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.summarizer import SummaryRequest

from compressor_support import make_engine, summary_of, work_history
from secret_samples import _B64, SAMPLES, SECRETS, STS_TOKEN


class Recording:
    """A summariser factory that keeps every request and answers ``answer``."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[SummaryRequest] = []

    def __call__(self, config: Any, *, model: str | None = None) -> Any:
        outer = self

        class Instance:
            name = "recording"

            def summarize(self, request: SummaryRequest) -> str:
                outer.requests.append(request)
                return outer.answer

        return Instance()


class Host:
    def __init__(self, factory: Recording) -> None:
        self.factory = factory

    def summarizers(self) -> dict[str, Any]:
        return {"recording": self.factory}


def _history_with_secrets() -> list[dict[str, Any]]:
    messages = work_history(30)
    # In the middle (what is summarised): the STS JSON as a tool result, every other family in
    # user turns, tool results and a tool call's JSON arguments.
    sts = json.dumps({"Credentials": {"AccessKeyId": "ASIA" + "Y34FZKBOKMUTVV7A", "SecretAccessKey": _B64,
                                      "SessionToken": STS_TOKEN, "Expiration": "2026-12-06T05:00:00Z"}}, indent=2)
    messages[10]["content"] = "aws sts assume-role output:\n" + sts
    for i, (_, text, _) in enumerate(SAMPLES):
        at = 13 + 4 * (i % 12)
        messages[at]["content"] = f"{messages[at]['content']}\n{text}"
    messages[14]["tool_calls"][0]["function"]["arguments"] = json.dumps({"command": "\n".join(t for _, t, _ in SAMPLES)})
    return messages


def test_the_llm_summariser_gets_no_secret_and_its_answer_is_redacted() -> None:
    # A model may quote what it should not: the answer is redacted too.
    factory = Recording("## Goal\nrotate the key " + SAMPLES[0][1] + " and aws_secret_access_key=" + _B64)
    engine = make_engine(64_000, data={"compression": {"summary": {"provider": "recording"}}}, host=Host(factory))
    out = engine.compress(_history_with_secrets(), force=True)
    assert factory.requests, "the summariser was not called"
    for request in factory.requests:
        sent = request.prompt + json.dumps(request.turns, default=str) + str(request.previous_summary or "")
        assert [s for s in SECRETS if s in sent or json.dumps(s)[1:-1] in sent] == []
        assert _B64 not in sent and STS_TOKEN not in sent
    summary = summary_of(out)["content"]
    assert SAMPLES[0][2] not in summary and _B64 not in summary
