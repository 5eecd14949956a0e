"""OpenHands session folders: the event stream as OpenHands' file store keeps it, one event a
numbered JSON file (``sessions/<id>/events/0.json``, ``1.json`` ...; ``users/<user>/conversations
/<id>/events/`` on a multi-user server).

The input is the session folder (``sessions/<id>/``, holding ``events/`` and ``metadata.json``)
or its ``events/`` folder. Each event file is one record, read in the order of its number (not
of its name: ``10.json`` comes after ``9.json``) as the ``openhands`` reader reads an event list.
``metadata.json`` beside ``events/`` (title, repository, model) is absorbed into the metadata, its
``llm_model`` the model. What else the folder holds is not conversation and is not read:
``event_cache/`` keeps copies of the same events in pages, ``agent_state.pkl`` is a Python
pickle (never unpickled); their names are listed under ``metadata["files_not_read"]``. A gap in
the numbering (an event file missing) is a warning naming the missing numbers.

The OpenHands SDK's layout (OpenHands 1.x, its CLI and app server: ``conversations/<id>/``
with ``base_state.json`` and ``events/event-00000-<id>.json``, ``kind``-tagged events) is read
the same way by the SDK's event model (``openhands_sdk``), ordered by the index in the file
name; ``base_state.json`` is absorbed (its ``agent.llm.model`` the model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.plugin import Detection, InvalidMessagesError, Transcript, TranscriptFormat, TranscriptSource
from hermes_plugins.transcripts.common import mapping, reads
from hermes_plugins.transcripts.openhands import EventConverter
from hermes_plugins.transcripts.openhands_sdk import SdkEventConverter

NAME = "openhands-events"
_NUMBERED = re.compile(r"^(\d+)\.json$")
_SDK_EVENT = re.compile(r"^event-(\d+)-.+\.json$")
#: Event files detection parses (the first by number).
_SAMPLE = 5


def _numbered(files: list[Path], pattern: re.Pattern[str] = _NUMBERED) -> list[tuple[int, Path]]:
    found = ((pattern.match(p.name), p) for p in files)
    return sorted((int(m.group(1)), p) for m, p in found if m)


def _events_folder(source: TranscriptSource) -> tuple[str, list[tuple[int, Path]], bool]:
    """Which folder holds the event files (``""``: the input itself, ``"events"``: its
    subfolder), those files by number, and whether they are the SDK's (``event-N-<id>.json``)."""
    for sub in ("", "events"):
        files = source.files(sub)
        own = _numbered(files)
        if own:
            return sub, own, False
        sdk = _numbered(files, _SDK_EVENT)
        if sdk:
            return sub, sdk, True
    return "events", [], False


def _is_event(value: Any, sdk: bool) -> bool:
    if sdk:
        return isinstance(value, Mapping) and isinstance(value.get("kind"), str) and "id" in value
    return isinstance(value, Mapping) and ("action" in value or "observation" in value) and "source" in value


@reads("directory")
def detect(source: TranscriptSource) -> Detection:
    sub, numbered, sdk = _events_folder(source)
    if not numbered:
        return Detection.refuse("no numbered event files (0.json, 1.json ... or event-00000-<id>.json) "
                                "in it or in its events/ folder")
    sample = []
    for _number, path in numbered[:_SAMPLE]:
        try:
            sample.append(source.load_json(path))
        except InvalidMessagesError:
            sample.append(None)
    events = [e for e in sample if _is_event(e, sdk)]
    where = f"{sub}/" if sub else ""
    what = "OpenHands SDK events (kind)" if sdk else "OpenHands events (action/observation with a source)"
    if len(events) >= max(1, len(sample) * 0.75):  # a later version may add an event kind
        return Detection.accept(0.95, f"numbered {what} in {where or 'the folder'}")
    return Detection.refuse(f"numbered files in {where or 'the folder'} are not {what}")


def _session_folder(source: TranscriptSource, sdk: bool, metadata: dict[str, Any]) -> tuple[str | None, list[str]]:
    """Read the session folder's state file into ``metadata``: ``(the model it names, the
    files of the folder not read)``."""
    assert source.path is not None
    report = source.report
    model = None
    state_file = "base_state.json" if sdk else "metadata.json"
    meta_path = source.path / state_file
    if meta_path.is_file():
        report.saw()
        meta = source.load_json(meta_path)
        report.absorbed("conversation_state" if sdk else "conversation_metadata")
        if isinstance(meta, Mapping):
            metadata["conversation"] = {str(k): v for k, v in meta.items()
                                        if isinstance(v, (str, int, float, bool)) or v is None}
            found = meta.get("llm_model")
            if sdk:
                found = mapping(mapping(meta.get("agent")).get("llm")).get("model")
            model = found if isinstance(found, str) else None
    skipped = sorted(p.name for p in source.path.iterdir()
                     if p.name not in ("events", state_file) and not p.name.startswith("."))
    return model, skipped


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    assert source.path is not None
    sub, numbered, sdk = _events_folder(source)
    if not numbered:
        raise InvalidMessagesError(f"{source.name}: no numbered event files (0.json, 1.json ...) to read")
    converter: EventConverter | SdkEventConverter = SdkEventConverter(report) if sdk else EventConverter(report)
    expected = numbered[0][0]
    missing: list[int] = []
    total = len(numbered)
    for done, (number, path) in enumerate(numbered, 1):
        if source.progress is not None and done % 512 == 0:
            source.progress(done, total)  # in files: a terminal shows a bar while a long session reads
        missing.extend(range(expected, number))
        expected = number + 1
        report.saw()
        try:
            event = source.load_json(path)
        except InvalidMessagesError as exc:
            raise InvalidMessagesError(f"{exc} (event file {number}, read as {NAME})") from None
        converter.add(event)
    if source.progress is not None and total >= 512:
        source.progress(total, total)
    if numbered[0][0] != 0:
        missing[:0] = range(0, numbered[0][0])
    if missing:
        shown = ", ".join(str(n) for n in missing[:10]) + (" ..." if len(missing) > 10 else "")
        report.warn(f"{len(missing)} event file(s) missing from the numbering ({shown}): "
                    "events OpenHands wrote are not in the folder")
    metadata: dict[str, Any] = {"events_folder": str(source.path / sub) if sub else str(source.path)}
    model = None
    if sub:  # the session folder: its metadata.json (base_state.json), and what is not read
        model, skipped = _session_folder(source, sdk, metadata)
    else:
        numbered_names = {p.name for _n, p in numbered}
        skipped = [p.name for p in source.files() if p.name not in numbered_names]
    if skipped:
        metadata["files_not_read"] = skipped
    if isinstance(converter, SdkEventConverter):
        if converter.tools:
            metadata["tools"] = converter.tools
        if converter.compactions:
            metadata["compactions"] = converter.compactions
    return source.transcript(converter.messages, system_prompt=converter.system_prompt, model=model,
                             metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="OpenHands session folder (sessions/<id>/, conversations/<id>/ or its events/: one event a file)",
    versions="OpenHands 0.x file store (sessions/<id>/events/<n>.json); OpenHands SDK 1.x persistence "
             "(events/event-<n>-<id>.json)",
    detect=detect,
    read=read,
)
