"""``eval --judge``: ask the configured summary provider about the compacted context.

Factory-style questions - what failed and why, which files changed, what comes next - are put
to the model ``compression.summary`` configures, with only the compacted context to go on. The
answer is scored against the probes, not by another model: a probe counts as answered when its
key appears in the answer (case-insensitive), or when at least 60% of its words of 4+ letters
do (models reformat paths and quote errors loosely). Scores are shares per question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import SummarizerError, SummaryRequest, content_text
from hermes_plugins.evaluation.evidence import is_person_request
from hermes_plugins.evaluation.probes import Probe, one_line

CONTEXT_MAX = 160_000
WORD_SHARE = 0.6
QUESTIONS = (
    ("failures", "What failed, and why? Quote each error message exactly."),
    ("files", "Which files were created or modified? List their paths exactly."),
    ("next", "What did the user ask for most recently, and what is the next step?"),
)
_WORD = re.compile(r"[A-Za-z0-9_]{4,}")


class JudgeUnavailable(Exception):
    """No LLM summariser is configured (``extractive`` cannot answer questions)."""


def render_context(messages: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for message in messages:
        role = str(message.get("role") or "?").upper()
        text = content_text(message.get("content"))
        calls = [
            f"{(c.get('function') or {}).get('name')}({(c.get('function') or {}).get('arguments')})"
            for c in message.get("tool_calls") or () if isinstance(c, Mapping)
        ]
        lines.append(f"[{role}]: {text}" + (f"\n[calls: {'; '.join(calls)}]" if calls else ""))
    joined = "\n\n".join(lines)
    if len(joined) > CONTEXT_MAX:
        joined = joined[: CONTEXT_MAX // 3] + "\n\n[... middle omitted ...]\n\n" + joined[-2 * CONTEXT_MAX // 3:]
    return joined


def build_prompt(context: str) -> str:
    questions = "\n".join(f"{n}. {q}" for n, (_name, q) in enumerate(QUESTIONS, 1))
    headings = ", ".join(f"'## {name}'" for name, _q in QUESTIONS)
    return (
        "You are checking what an AI agent can still know after its conversation was compacted. "
        "Answer only from the context below; say 'unknown' where it does not tell.\n\n"
        f"CONTEXT:\n{context}\n\nQUESTIONS:\n{questions}\n\n"
        f"Answer under the headings {headings}, one heading per question."
    )


def answered(key: str, answer: str) -> bool:
    lowered = one_line(answer).lower()
    if key.lower() in lowered:
        return True
    words = {w.lower() for w in _WORD.findall(key)}
    if not words:
        return False
    present = {w for w in words if w in lowered}
    return len(present) / len(words) >= WORD_SHARE


def score(answer: str, probes: Sequence[Probe], last_request: str | None) -> dict[str, float | None]:
    def share(keys: list[str]) -> float | None:
        return None if not keys else sum(answered(k, answer) for k in keys) / len(keys)

    return {
        "failures": share([p.key for p in probes if p.category == "errors"]),
        "files": share([p.key for p in probes if p.category == "files_modified"]),
        "next": share([one_line(last_request)[:80]] if last_request else []),
    }


def judge_run(messages: Sequence[Mapping[str, Any]], run: dict[str, Any], *, state: Any, engine: str,
              context_length: int, model: str = "") -> dict[str, Any]:
    """Ask the questions about ``run["_after"]`` and score the answer against ``run["_probes"]``."""
    summary = state.config.compression.summary
    provider = summary.provider
    factories = dict(state.host.summarizers())
    if not provider or provider == "extractive" or provider not in factories:
        raise JudgeUnavailable(
            f"--judge needs an LLM summary provider (compression.summary.provider is {provider!r}; "
            f"known: {', '.join(sorted(factories)) or '(none)'})"
        )
    summarizer = factories[provider](state.config, model=summary.model or None)
    prompt = build_prompt(render_context(run["_after"]))
    last = next((m for m in reversed(messages) if is_person_request(m)), None)
    try:
        answer = summarizer.summarize(SummaryRequest(prompt=prompt, budget_tokens=1_500, max_chars=20_000))
    except SummarizerError as exc:
        return {"provider": provider, "error": str(exc), "scores": {}}
    scores = score(answer, run["_probes"], content_text(last.get("content")) if last else None)
    return {"provider": provider, "scores": scores, "answer_chars": len(answer),
            "answer": answer if len(answer) <= 4_000 else answer[:4_000] + "…"}


__all__ = ["JudgeUnavailable", "build_prompt", "judge_run", "score"]
