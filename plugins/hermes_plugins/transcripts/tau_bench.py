"""tau-bench results: a list of runs ``{task_id, trial, reward, info, traj}`` whose ``traj``
is an OpenAI chat list (gpt-4o reuses call ids within a run: pairing stays positional).

A file holds many runs: ``index`` picks one; without it every run is read (``read_transcripts``).
Task id, trial and reward go to each run's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    InvalidMessagesError,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
)
from hermes_plugins.transcripts.common import reads, run_transcript
from hermes_plugins.transcripts.openai_chat import convert_message

NAME = "tau-bench"


def _runs(doc: Any) -> list[Any] | None:
    if isinstance(doc, list) and doc and all(isinstance(r, Mapping) and isinstance(r.get("traj"), list) for r in doc[:50]):
        return doc
    if isinstance(doc, Mapping) and isinstance(doc.get("traj"), list):
        return [doc]
    return None


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    runs = _runs(source.document_or_none())
    if runs is None:
        return Detection.refuse("not a list of runs with 'traj'")
    if any("task_id" in r or "reward" in r for r in runs[:50]):
        return Detection.accept(0.95, f"{len(runs)} run(s) with task_id/reward and traj")
    return Detection.accept(0.6, "runs with a 'traj' message list")


def read(source: TranscriptSource) -> list[Transcript]:
    runs = _runs(source.document())
    if runs is None:
        raise ValueError("expected a list of runs with 'traj'")
    index = source.options.get("index")
    if index is not None:
        if not 0 <= int(index) < len(runs):
            raise InvalidMessagesError(f"{source.name}: index {index} out of range (0..{len(runs) - 1}, {len(runs)} runs)")
        selected = [(int(index), runs[int(index)])]
    else:
        selected = list(enumerate(runs))
    out = []
    for number, run in selected:
        report = source.report if len(selected) == 1 else ReportBuilder(format=NAME, source=f"{source.name}[{number}]")
        traj = run["traj"]
        report.saw(len(traj))
        system_prompt = None
        messages: list[dict[str, Any]] = []
        for position, message in enumerate(traj):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise InvalidMessagesError(f"{source.name}: run {number}: message {position} has no role")
            if not messages and system_prompt is None and message["role"] == "system" and isinstance(message.get("content"), str):
                system_prompt = message["content"]
                report.absorbed("system_prompt")
                continue
            messages.append(convert_message(message, report))
            report.converted()
        metadata = {"run_index": number, **{k: run[k] for k in ("task_id", "trial", "reward") if k in run}}
        info = run.get("info")
        if isinstance(info, Mapping) and isinstance(info.get("task"), Mapping):
            metadata["user_id"] = info["task"].get("user_id")
        out.append(run_transcript(source, report, messages, system_prompt=system_prompt, metadata=metadata))
    return out


FORMAT = TranscriptFormat(
    name=NAME,
    description="tau-bench result list (runs of {task_id, reward, traj}); --index N picks one",
    versions="tau-bench historical trajectories",
    detect=detect,
    read=read,
)
