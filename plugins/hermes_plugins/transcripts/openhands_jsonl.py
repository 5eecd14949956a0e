"""OpenHands as JSON Lines: evaluation outputs (``output.jsonl``: one instance a line,
``{instance_id, instruction, history, metadata, metrics, test_result, error}``) and event streams
(one event a line).

An evaluation output holds one conversation per instance (``--index N`` picks one; without it
every instance is read, each with its own report): the instance's ``history`` events are its
records (read as the ``openhands`` reader reads an event list, early ``[action, observation]``
pairs included) and the instance line itself is absorbed into the metadata (instance id,
metrics, test result, error). An event stream is one conversation, streamed line by line.
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
from hermes_plugins.transcripts.common import head_objects, mapping, object_records, reads, run_transcript
from hermes_plugins.transcripts.openhands import EventConverter, flatten

NAME = "openhands-jsonl"
_INSTANCE_FIELDS = ("instance_id", "instruction", "error", "test_result", "metrics", "metadata")


def _is_event(record: Mapping[str, Any]) -> bool:
    return ("action" in record or "observation" in record) and "source" in record


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    if all(isinstance(r.get("history"), list) and "instance_id" in r for r in records):
        return Detection.accept(0.95, "evaluation output: instances with instance_id and a history list")
    events = [r for r in records if _is_event(r)]
    if len(events) >= len(records) * 0.75:  # newer versions add event kinds: most lines suffice
        return Detection.accept(0.9, "one OpenHands event a line (action/observation with source)")
    return Detection.refuse("lines are neither OpenHands events nor evaluation instances with a history")


def _scalars(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _scalars(v) for k, v in value.items() if isinstance(v, (str, int, float, bool, Mapping))
                or v is None}
    return value


def read(source: TranscriptSource) -> Transcript | list[Transcript]:
    first = head_objects(source)[:1]
    if first and "history" in first[0]:
        return _read_instances(source)
    converter = EventConverter(source.report)
    for _lineno, event in object_records(source):
        converter.add(event)
    return source.transcript(converter.messages, system_prompt=converter.system_prompt)


def _read_instances(source: TranscriptSource) -> list[Transcript]:
    index = source.options.get("index")
    wanted = int(index) if index is not None else None
    out: list[Transcript] = []
    number = -1
    for lineno, record in object_records(source):
        number += 1
        history = record.get("history")
        if wanted is not None and number != wanted:
            source.report.dropped("other_instances")
            continue
        report = ReportBuilder(format=NAME, source=f"{source.name}[{number}]")
        report.saw(1)
        if not isinstance(history, list):
            raise InvalidMessagesError(
                f"{source.name}: line {lineno}: instance has no 'history' list (read as {NAME})")
        events = flatten(history)
        report.saw(len(events))
        converter = EventConverter(report)
        for event in events:
            converter.add(event)
        report.absorbed("instance_record")
        metadata = {"run_index": number, **{k: _scalars(record[k]) for k in _INSTANCE_FIELDS if k in record}}
        model = mapping(mapping(record.get("metadata")).get("llm_config")).get("model")
        model = model if isinstance(model, str) else None
        out.append(run_transcript(source, report, converter.messages,
                                  system_prompt=converter.system_prompt, model=model, metadata=metadata))
    if wanted is not None and not out:
        raise InvalidMessagesError(f"{source.name}: index {wanted} out of range (0..{number}, {number + 1} instances)")
    return out


FORMAT = TranscriptFormat(
    name=NAME,
    description="OpenHands JSON Lines: evaluation output.jsonl (--index N picks an instance) or one event a line",
    versions="OpenHands evaluation output.jsonl and event lines (current and early pair histories)",
    detect=detect,
    read=read,
)
