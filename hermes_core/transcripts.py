"""Transcripts in and out: read the sessions agents leave on disk, write OpenAI or Anthropic.

``read_transcript(path_or_text, format="auto")`` returns a ``Transcript``: the conversation as
OpenAI chat messages (our ``_`` metadata keys mark what the target format has no place for),
the system prompt, tools, model, metadata, and a ``ConversionReport`` that accounts for every
input record (converted, merged into another message, absorbed into a transcript field, or
dropped - each by reason, with counts) and every content change (images replaced by
placeholders, reasoning kept as metadata, encrypted reasoning dropped ...).

Formats are plugins: each answers ``hermes_transcript_formats`` with ``TranscriptFormat``
records (name, ``detect``, ``read``, optional ``write``). Detection is by content: every
format looks at the same ``TranscriptSource`` head and says how sure it is, or why it refuses;
the most confident wins. A file no format accepts is an ``UnknownTranscriptFormatError``
listing each refusal.

Input is handled defensively, because these are files from other programs: invalid UTF-8 is
kept as ``\\xNN`` escapes, lone surrogates as ``\\udNNN`` text (nothing downstream can choke on
them), JSON nested too deep for the parser is refused with a clear error, and JSON Lines files
stream (memory follows the messages kept, not the raw records).

Every transcript returned satisfies ``hermes_core.pairing.pairing_problems(...) == []``: results
are put right after the assistant message whose calls they answer, an orphan result becomes a
user message marked ``_injected: "orphan-tool-result"``, and a call with no recorded result gets
a placeholder result - each counted in the report.
"""

from __future__ import annotations

import codecs
import json
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

from hermes_core import bounded
from hermes_core.diagnostics import record_warning
from hermes_core.errors import HermesPluginError, InvalidMessagesError
from hermes_core.logging import get_logger
from hermes_core.messages import content_text
from hermes_core.pairing import early_answers, match_results, pairing_problems, pending_calls

if TYPE_CHECKING:
    from hermes_core.host import PluginHost

log = get_logger("hermes_core.transcripts")

__all__ = [
    "ConversionReport",
    "Detection",
    "ReportBuilder",
    "Transcript",
    "TranscriptFormat",
    "TranscriptSource",
    "UnknownTranscriptFormatError",
    "check_depth",
    "detect_format",
    "escape_lone_surrogates",
    "escape_surrogates_of",
    "image_placeholder",
    "make_tool_call",
    "read_transcript",
    "read_transcripts",
    "sniff_format",
    "transcript_formats",
    "write_transcript",
]

#: Bytes of the input every detector sees (and the JSON Lines records parsed from them).
HEAD_BYTES = 64 * 1024
HEAD_RECORDS = 50
#: Detections below this are refusals even when a reader returned a number.
MIN_CONFIDENCE = 0.2
MISSING_RESULT_TEXT = "[no result was recorded for this tool call]"

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file are binary data rather than text: a NUL byte, or more
    than a tenth of undecodable bytes and control characters (a text file with a stray invalid
    byte is still text, read with the byte escaped)."""
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", errors="replace")
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f"))
    return bad > max(8, len(text) // 10)


def binary_detail(head: bytes) -> str:
    """Where the first byte that is not text is, for the one-line error."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{head[exc.start]:02x} at offset {exc.start} is not UTF-8"
    offset = next((i for i, b in enumerate(head) if b < 32 and b not in (9, 10, 12, 13)), 0)
    return f"control byte 0x{head[offset]:02x} at offset {offset}" if head else "empty"


def decode_problem(path: object, exc: UnicodeDecodeError) -> str:
    """The one-line message for a file that is not UTF-8 text."""
    byte = exc.object[exc.start] if exc.start < len(exc.object) else 0
    return (f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}); a transcript is "
            "JSON or JSON Lines in UTF-8")


class UnknownTranscriptFormatError(InvalidMessagesError):
    """No format accepted the input; ``refusals`` maps each format tried to its reason."""

    def __init__(self, source: str, refusals: Mapping[str, str], binary: str | None = None) -> None:
        tried = "; ".join(f"{name}: {why}" for name, why in refusals.items()) or "no formats installed"
        if binary is not None:
            super().__init__(f"{source}: not a transcript: binary data ({binary}); a transcript is "
                             "UTF-8 JSON, JSON Lines or a SQLite database")
        else:
            super().__init__(f"{source}: not a transcript in any known format (tried {tried})")
        self.source = source
        self.refusals = dict(refusals)


# --- records ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Detection:
    """How sure a format is that the input is its own (``confidence`` in (0, 1]), or why not
    (``confidence`` ``None``)."""

    confidence: float | None
    reason: str

    @classmethod
    def refuse(cls, reason: str) -> Detection:
        return cls(confidence=None, reason=reason)

    @classmethod
    def accept(cls, confidence: float, reason: str) -> Detection:
        return cls(confidence=confidence, reason=reason)


def _counts(value: Any) -> Mapping[str, int]:
    return dict(sorted((str(k), int(v)) for k, v in dict(value or {}).items() if v))


@attrs.frozen(kw_only=True)
class ConversionReport:
    """What reading (or writing) did to the input, with counts.

    Every input record is counted once: ``converted`` (became a message), ``merged`` (folded
    into another message), ``absorbed`` (became the system prompt, tools, model or metadata) or
    ``dropped``, each of the last three by reason; ``unaccounted`` is what is left (0 for the
    built-in readers). ``relabelled`` counts messages whose role or marking changed, ``changed``
    counts content-level changes (placeholders, metadata moves, renamed ids ...).
    """

    format: str
    source: str
    records: int = 0
    messages: int = 0
    tool_calls: int = 0
    converted: int = 0
    merged: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    absorbed: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    dropped: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    relabelled: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    changed: Mapping[str, int] = attrs.field(factory=dict, converter=_counts)
    warnings: tuple[str, ...] = ()

    @property
    def unaccounted(self) -> int:
        return (
            self.records - self.converted - sum(self.merged.values())
            - sum(self.absorbed.values()) - sum(self.dropped.values())
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "source": self.source,
            "records": self.records,
            "messages": self.messages,
            "tool_calls": self.tool_calls,
            "converted": self.converted,
            "merged": dict(self.merged),
            "absorbed": dict(self.absorbed),
            "dropped": dict(self.dropped),
            "relabelled": dict(self.relabelled),
            "changed": dict(self.changed),
            "unaccounted": self.unaccounted,
            "warnings": list(self.warnings),
        }


def _dicts(value: Iterable[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    return tuple(value)


def _format_name(value: Any) -> str:
    return str(value).strip().lower()


@attrs.frozen(kw_only=True)
class Transcript:
    """One conversation read from a file.

    ``messages`` are OpenAI chat messages without the leading system prompt (that is
    ``system_prompt``); ``chat_messages()`` gives the list a provider would be sent.
    """

    messages: tuple[dict[str, Any], ...] = attrs.field(converter=_dicts)
    system_prompt: str | None = None
    tools: tuple[dict[str, Any], ...] = attrs.field(default=(), converter=_dicts)
    model: str | None = None
    metadata: Mapping[str, Any] = attrs.field(factory=dict)
    format: str = ""
    conversion: ConversionReport | None = None

    def chat_messages(self) -> list[dict[str, Any]]:
        """The messages with the system prompt first (as ``load_transcript`` returns them)."""
        head = [] if self.system_prompt is None else [{"role": "system", "content": self.system_prompt}]
        return head + list(self.messages)


@attrs.frozen(kw_only=True)
class TranscriptFormat:
    """One transcript format, as a plugin declares it.

    ``detect(source) -> Detection`` looks only at the head (``source.kind``,
    ``source.head_text``, ``source.head_records``, ``source.document()`` for a JSON document);
    ``read(source) -> Transcript | list[Transcript]`` converts (several for files that hold many
    runs; honour ``source.options["index"]``); ``write(transcript, notes) -> str`` is optional
    and notes its own changes on the ``ReportBuilder`` ``notes``. ``versions`` names the versions
    of the tool that writes the format the reader was written against (``hermes-ctx formats``
    lists them), e.g. ``"Codex CLI 0.1-0.46"``.
    """

    name: str = attrs.field(converter=_format_name)
    description: str
    detect: Callable[[TranscriptSource], Detection]
    read: Callable[[TranscriptSource], Transcript | list[Transcript]]
    write: Callable[[Transcript, ReportBuilder], str] | None = None
    plugin: str = ""
    versions: str = ""


# --- the report while it is being built -------------------------------------------------------


@attrs.define(kw_only=True, eq=False)
class ReportBuilder:
    """Mutable counters a reader or writer fills in; ``build`` freezes them."""

    format: str = ""
    source: str = ""
    seen: int = 0
    converted_count: int = 0
    merged_counts: Counter[str] = attrs.field(factory=Counter)
    absorbed_counts: Counter[str] = attrs.field(factory=Counter)
    dropped_counts: Counter[str] = attrs.field(factory=Counter)
    relabelled_counts: Counter[str] = attrs.field(factory=Counter)
    changed_counts: Counter[str] = attrs.field(factory=Counter)
    warnings: list[str] = attrs.field(factory=list)

    def saw(self, n: int = 1) -> None:
        """``n`` input records were read (JSON Lines sources count their lines themselves)."""
        self.seen += n

    def converted(self, n: int = 1) -> None:
        self.converted_count += n

    def merged(self, reason: str, n: int = 1) -> None:
        self.merged_counts[reason] += n

    def absorbed(self, reason: str, n: int = 1) -> None:
        self.absorbed_counts[reason] += n

    def dropped(self, reason: str, n: int = 1) -> None:
        self.dropped_counts[reason] += n

    def relabelled(self, reason: str, n: int = 1) -> None:
        self.relabelled_counts[reason] += n

    def changed(self, reason: str, n: int = 1) -> None:
        self.changed_counts[reason] += n

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def build(self, messages: Sequence[Mapping[str, Any]] = ()) -> ConversionReport:
        return ConversionReport(
            format=self.format,
            source=self.source,
            records=self.seen,
            messages=len(messages),
            tool_calls=sum(len(m.get("tool_calls") or ()) for m in messages),
            converted=self.converted_count,
            merged=self.merged_counts,
            absorbed=self.absorbed_counts,
            dropped=self.dropped_counts,
            relabelled=self.relabelled_counts,
            changed=self.changed_counts,
            warnings=tuple(self.warnings),
        )


# --- the input --------------------------------------------------------------------------------


_bad_bytes = threading.local()


def _escape_bad_bytes(error: UnicodeError, *, doubled: bool) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    bad = error.object[error.start:error.end]
    _bad_bytes.count = getattr(_bad_bytes, "count", 0) + len(bad)
    # Inside a JSON string a doubled backslash parses to one: the byte survives as text.
    slash = "\\\\" if doubled else "\\"
    return "".join(f"{slash}x{b:02x}" for b in bad), error.end


codecs.register_error("hermes_json_backslash", lambda e: _escape_bad_bytes(e, doubled=True))
codecs.register_error("hermes_backslash", lambda e: _escape_bad_bytes(e, doubled=False))


def _decode(data: bytes, report: ReportBuilder | None, *, json_text: bool = True) -> str:
    """UTF-8 text; invalid bytes become ``\\xNN`` text (inside JSON strings when ``json_text``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        _bad_bytes.count = 0
        text = data.decode("utf-8", errors="hermes_json_backslash" if json_text else "hermes_backslash")
        if report is not None:
            report.changed("invalid_utf8_escaped", _bad_bytes.count)
        return text


def escape_lone_surrogates(value: Any, report: ReportBuilder | None = None) -> Any:
    """``value`` with every lone surrogate in its strings written as ``\\udNNN`` text.

    JSON may escape a lone surrogate (``"\\ud800"``); Python then holds a string that cannot be
    encoded as UTF-8, and every writer or tokenizer downstream would fail on it. Iterative, so a
    deep value cannot exhaust the stack.
    """

    def fix(text: str) -> str:
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        if report is not None:
            report.changed("lone_surrogates_escaped", len(_LONE_SURROGATE.findall(text)))
        return out

    if isinstance(value, str):
        return fix(value) if _LONE_SURROGATE.search(value) else value
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                container[key] = fix(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            for k in list(item):
                if isinstance(k, str) and _LONE_SURROGATE.search(k):
                    item[fix(k)] = item.pop(k)
                    k = fix(k)
                stack.append((item, k))
    return root[0]


def escape_surrogates_of(text: str, value: Any) -> Any:
    """``value`` parsed from JSON ``text``, with lone surrogates escaped when the text has any
    (the check is one regex over the text; the walk only runs when it matches)."""
    return escape_lone_surrogates(value) if _SURROGATE_ESCAPE.search(text) else value


def _loads(text: str, where: str, report: ReportBuilder | None) -> Any:
    try:
        value = bounded.loads(text, MAX_MESSAGE_DEPTH)  # measured before the parser recurses
    except bounded.TooDeepError:
        raise InvalidMessagesError(
            f"{where}: JSON nested too deeply to read (refused rather than risk the stack)"
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        value = escape_lone_surrogates(value, report)
    return value


@attrs.define(kw_only=True, eq=False)
class TranscriptSource:
    """The input as every format sees it: the head for detection, then the whole for reading.

    ``kind`` is ``"json"`` (one document), ``"jsonl"``, ``"sqlite"``, ``"text"``,
    ``"directory"`` (a folder: ``files()`` lists it, ``load_json(path)`` parses one of its files)
    or ``"empty"``. ``options`` carries reader options (``index``: which run of a multi-run file).
    """

    name: str
    path: Path | None = None
    text: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
    report: ReportBuilder = attrs.field(factory=ReportBuilder)
    progress: Callable[[int, int], None] | None = None
    head_bytes: bytes = b""
    head_text: str = ""
    kind: str = "empty"
    size: int = 0
    _document: Any = None
    _document_error: str | None = None
    _parsed: bool = False
    _head_records: list[Any] | None = None
    #: Per-run reports of a multi-run input, by ``id(transcript)`` (set by the reader).
    run_reports: dict[int, ReportBuilder] = attrs.field(factory=dict)

    @classmethod
    def open(
        cls,
        path_or_text: str | Path | bytes,
        *,
        options: Mapping[str, Any] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> TranscriptSource:
        options = dict(options or {})
        if isinstance(path_or_text, bytes):
            src = cls(name="<input>", text=_decode(path_or_text, None), options=options, progress=progress)
        elif isinstance(path_or_text, Path) or (
            isinstance(path_or_text, str) and "\n" not in path_or_text
            and not path_or_text.lstrip().startswith(("[", "{")) and len(path_or_text) < 4096
        ):
            path = Path(path_or_text)
            if path.is_dir():
                # A folder is one transcript when a format says so by its files (an OpenHands
                # ``sessions/<id>/events/`` folder holds one event a file).
                src = cls(name=str(path), path=path, options=options, progress=progress, kind="directory")
                return src
            try:
                size = path.stat().st_size
                with path.open("rb") as fh:
                    head = fh.read(HEAD_BYTES)
            except OSError as exc:
                raise InvalidMessagesError(f"{path}: cannot read transcript: {exc}") from None
            src = cls(name=str(path), path=path, options=options, progress=progress, size=size)
            src.head_bytes = head
        else:
            src = cls(name="<text>", text=str(path_or_text), options=options, progress=progress)
        if src.text is not None:
            src.size = len(src.text)
            src.head_bytes = src.text[:HEAD_BYTES].encode("utf-8", errors="surrogatepass")
        src._classify()
        return src

    def _classify(self) -> None:
        head = self.head_bytes
        if head.startswith(b"SQLite format 3\x00"):
            self.kind = "sqlite"
            return
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        # A multi-byte character may be cut at the end of the head: decode leniently there.
        self.head_text = head.decode("utf-8", errors="replace") if self.text is None else self.text[:HEAD_BYTES]
        stripped = self.head_text.lstrip()
        if not stripped:
            self.kind = "empty"
        elif stripped[0] == "[":
            self.kind = "json"
        elif stripped[0] == "{":
            first, _, rest = stripped.partition("\n")
            self.kind = "jsonl" if rest.strip() and _is_json_object(first) else "json"
        elif looks_binary(head):
            self.kind = "binary"
        else:
            self.kind = "text"

    # -- whole input --------------------------------------------------------------------------

    def read_text(self) -> str:
        """The whole input as text (invalid UTF-8 kept as ``\\xNN`` escapes, counted)."""
        if self.text is not None:
            return self.text
        assert self.path is not None
        if self.kind == "directory":
            raise InvalidMessagesError(f"{self.name}: a folder, read only by a format of folders")
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise InvalidMessagesError(f"{self.name}: cannot read transcript: {exc}") from None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        return _decode(data, self.report)

    def document(self) -> Any:
        """The parsed JSON document (parsed once; detectors and the reader share it)."""
        if not self._parsed:
            self._parsed = True
            try:
                self._document = _loads(self.read_text(), self.name, self.report)
            except json.JSONDecodeError as exc:
                self._document_error = f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            except InvalidMessagesError as exc:
                self._document_error = str(exc).removeprefix(f"{self.name}: ")
        if self._document_error is not None:
            raise InvalidMessagesError(f"{self.name}: {self._document_error}")
        return self._document

    def document_or_none(self) -> Any:
        """The parsed document, or ``None`` when the input is not one JSON document."""
        if self.kind != "json":
            return None
        try:
            return self.document()
        except InvalidMessagesError:
            return None

    @property
    def head_records(self) -> list[Any]:
        """The first JSON Lines records (up to ``HEAD_RECORDS``); ``[]`` when not JSON Lines."""
        if self._head_records is None:
            self._head_records = []
            if self.kind == "jsonl":
                lines = self.head_text.splitlines()
                if self.text is None and len(self.head_bytes) == HEAD_BYTES:
                    lines = lines[:-1]  # the last line may be cut
                for line in lines:
                    if len(self._head_records) >= HEAD_RECORDS:
                        break
                    if line.strip():
                        try:
                            self._head_records.append(json.loads(line))
                        except (json.JSONDecodeError, RecursionError):
                            self._head_records.append(None)
        return self._head_records

    def records(self) -> Iterator[tuple[int, Any]]:
        """Stream ``(line number, record)`` of a JSON Lines input, counting each as seen.

        A line that is not JSON is an ``InvalidMessagesError`` naming the line.
        """
        total = self.size or 1
        done = 0
        lines: Iterable[Any]
        handle: IO[bytes] | None = None
        if self.text is not None:
            lines = self.text.splitlines()
        else:
            assert self.path is not None
            if self.kind == "directory":
                raise InvalidMessagesError(f"{self.name}: a folder, read only by a format of folders")
            try:
                handle = self.path.open("rb")
            except OSError as exc:
                raise InvalidMessagesError(f"{self.name}: cannot read transcript: {exc}") from None
            lines = handle
        try:
            for lineno, raw in enumerate(lines, 1):
                line = raw if isinstance(raw, str) else _decode(raw, self.report)  # type: ignore[arg-type]
                done += len(raw)
                if self.progress is not None and lineno % 512 == 0:
                    self.progress(done, total)
                if lineno == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                if not line.strip():
                    continue
                self.report.saw()
                try:
                    record = _loads(line, f"{self.name}: line {lineno}", self.report)
                except json.JSONDecodeError as exc:
                    raise InvalidMessagesError(f"{self.name}: line {lineno} is not JSON: {exc.msg}") from None
                yield lineno, record
        finally:
            if handle is not None:
                handle.close()
            if self.progress is not None:
                self.progress(total, total)

    # -- a folder ------------------------------------------------------------------------------

    def files(self, subfolder: str = "") -> list[Path]:
        """The regular files of a directory source (or of its ``subfolder``), hidden ones left
        out, sorted by name; ``[]`` when the source is not a folder or the subfolder is absent."""
        if self.kind != "directory" or self.path is None:
            return []
        folder = self.path / subfolder if subfolder else self.path
        try:
            entries = list(folder.iterdir()) if folder.is_dir() else []
        except OSError as exc:
            raise InvalidMessagesError(f"{folder}: cannot list the folder: {exc}") from None
        return sorted((p for p in entries if not p.name.startswith(".") and p.is_file()), key=lambda p: p.name)

    def load_json(self, path: Path) -> Any:
        """One JSON file of a directory source, parsed with the same care as a whole input
        (invalid UTF-8 and lone surrogates escaped and counted, depth bounded); an
        ``InvalidMessagesError`` naming the file when it cannot be read or is not JSON."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InvalidMessagesError(f"{path}: cannot read: {exc}") from None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        try:
            return _loads(_decode(data, self.report), str(path), self.report)
        except json.JSONDecodeError as exc:
            raise InvalidMessagesError(
                f"{path}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None

    def transcript(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        system_prompt: str | None = None,
        tools: Iterable[dict[str, Any]] = (),
        model: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Transcript:
        """A ``Transcript`` of this source (the report is attached by ``read_transcript``)."""
        return Transcript(
            messages=messages, system_prompt=system_prompt, tools=tuple(tools or ()),
            model=model or None, metadata=dict(metadata or {}),
        )


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


# --- helpers for readers ----------------------------------------------------------------------


#: How deep a message may nest (dict/list levels): far beyond any real message, far below what
#: recursive code downstream (repr, deepcopy, encoders) survives.
MAX_MESSAGE_DEPTH = 100


def check_depth(value: Any, where: str, limit: int = MAX_MESSAGE_DEPTH) -> None:
    """Raise ``InvalidMessagesError`` when ``value`` nests deeper than ``limit`` (iterative)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise InvalidMessagesError(f"{where}: nested too deeply (more than {limit} levels)")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))


def make_tool_call(ident: str, name: str, arguments: Any) -> dict[str, Any]:
    """An OpenAI tool call; ``arguments`` that are not a string are JSON-encoded."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return {"id": str(ident or ""), "type": "function", "function": {"name": str(name or ""), "arguments": arguments}}


def image_placeholder(block: Mapping[str, Any], report: ReportBuilder | None = None) -> dict[str, Any]:
    """A text part standing for an image (Anthropic ``image`` or OpenAI ``image_url``), with its
    media type and size, so nothing is lost silently and no payload travels."""
    media = "image"
    size = ""
    source = block.get("source")
    url = ""
    if isinstance(source, Mapping):
        media = str(source.get("media_type") or media)
        data = source.get("data")
        if isinstance(data, str):
            size = f", {_b64_size(data):,} bytes"
        elif source.get("url"):
            url = str(source["url"])
    image_url = block.get("image_url")
    if isinstance(image_url, Mapping):
        image_url = image_url.get("url")
    if isinstance(image_url, str):
        if image_url.startswith("data:"):
            header, _, data = image_url.partition(",")
            media = header[5:].split(";")[0] or media
            size = f", {_b64_size(data):,} bytes"
        else:
            url = image_url
    if report is not None:
        report.changed("images_replaced_by_placeholders")
    where = f", {url}" if url and not url.startswith("data:") else ""
    return {"type": "text", "text": f"[image omitted: {media}{size}{where}]"}


def _b64_size(data: str) -> int:
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


# --- registry and detection -------------------------------------------------------------------

def _host(host: PluginHost | None) -> PluginHost:
    # The process's shared host, not one of this module's: ``refresh_plugins()`` renews it.
    if host is not None:
        return host
    from hermes_core.host import PluginHost

    return PluginHost.shared()


def transcript_formats(host: PluginHost | None = None) -> dict[str, TranscriptFormat]:
    """Every installed format by name (from ``hermes_transcript_formats``)."""
    return _host(host).transcript_formats()


def detect_format(
    source: TranscriptSource, formats: Mapping[str, TranscriptFormat]
) -> tuple[TranscriptFormat, dict[str, Detection]]:
    """The most confident format for ``source`` and every format's answer."""
    answers: dict[str, Detection] = {}
    for name, fmt in formats.items():
        try:
            answer = fmt.detect(source)
        except InvalidMessagesError:
            raise
        except Exception as exc:  # noqa: BLE001 - a broken detector costs its own format only
            record_warning(
                "transcript_detector_failed",
                f"format {name!r} (plugin {fmt.plugin or '?'}) failed to inspect {source.name}: "
                f"{type(exc).__name__}: {exc}",
                plugin=fmt.plugin or None, path=source.name,
            )
            answer = Detection.refuse(f"detector failed: {type(exc).__name__}")
        if not isinstance(answer, Detection):
            answer = Detection.refuse("detector returned no Detection")
        answers[name] = answer
    ranked = sorted(
        ((d.confidence, name) for name, d in answers.items()
         if d.confidence is not None and d.confidence >= MIN_CONFIDENCE),
        key=lambda item: (-item[0], item[1]),
    )
    if not ranked:
        if source.kind == "binary":
            # One line a person can act on, not every format's refusal of the same bytes.
            raise UnknownTranscriptFormatError(source.name, {}, binary_detail(source.head_bytes))
        if source.kind == "json":
            source.document()  # a document that does not parse: say so rather than "no format"
        raise UnknownTranscriptFormatError(source.name, {n: d.reason for n, d in answers.items()})
    return formats[ranked[0][1]], answers


def sniff_format(path_or_text: str | Path | bytes, *, host: PluginHost | None = None) -> str | None:
    """The format auto-detection would pick for the input, or ``None`` (unreadable, unknown)."""
    try:
        source = TranscriptSource.open(path_or_text)
        if source.kind == "empty":
            return None
        return detect_format(source, transcript_formats(host))[0].name
    except InvalidMessagesError:
        return None


# --- reading ----------------------------------------------------------------------------------


def read_transcripts(
    path_or_text: str | Path | bytes,
    format: str = "auto",
    *,
    host: PluginHost | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Transcript]:
    """Every conversation in the input (several for a tau-bench list or a ``state.db``)."""
    formats = transcript_formats(host)
    source = TranscriptSource.open(path_or_text, options=options, progress=progress)
    if source.kind == "empty":
        raise InvalidMessagesError(f"{source.name}: empty transcript")
    wanted = (format or "auto").strip().lower()
    if wanted == "auto":
        fmt, _ = detect_format(source, formats)
    elif wanted in formats:
        fmt = formats[wanted]
    else:
        raise InvalidMessagesError(
            f"unknown transcript format {format!r}; installed: {', '.join(sorted(formats)) or '(none)'}"
        )
    source.report.format = fmt.name
    source.report.source = source.name
    try:
        result = fmt.read(source)
    except RecursionError:
        raise InvalidMessagesError(f"{source.name}: nested too deeply to read as {fmt.name}") from None
    except HermesPluginError:
        raise
    except InvalidMessagesError as exc:
        # A reader that fails midway names the record; the reader's name says which reading failed.
        text = str(exc)
        if f"as {fmt.name}" not in text and f"{fmt.name} transcript" not in text:
            text = f"{text} (read as {fmt.name})"
        raise InvalidMessagesError(text + _forced_hint(source, fmt, formats, wanted), index=exc.index) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InvalidMessagesError(
            f"{source.name}: not a valid {fmt.name} transcript ({type(exc).__name__}: {exc})"
            + _forced_hint(source, fmt, formats, wanted)
        ) from None
    runs = result if isinstance(result, list) else [result]
    run_index = source.options.get("index")
    if not isinstance(result, list) and isinstance(run_index, int) and run_index != 0:
        # A one-conversation format ignores the index: a run that does not exist is an error,
        # never silently the only one there is.
        raise InvalidMessagesError(
            f"{source.name}: holds one conversation ({fmt.name}); there is no index {run_index} (0 is the only one)"
        )
    out = [_finish(run, fmt, source, single=len(runs) == 1) for run in runs]
    for transcript in out:
        report = transcript.conversion
        assert report is not None
        log.info("transcript_read", path=source.name, format=fmt.name, records=report.records,
                 messages=report.messages, unaccounted=report.unaccounted)
        for warning in report.warnings:
            record_warning("transcript_conversion", f"{source.name}: {warning}", path=source.name,
                           format=fmt.name)
    return out


def _forced_hint(
    source: TranscriptSource, fmt: TranscriptFormat, formats: Mapping[str, TranscriptFormat], wanted: str
) -> str:
    """When ``--format`` forced a reader that fails: what its detector says, and which format
    detection would pick (a mini-swe-agent file forced as swe-agent says so)."""
    if wanted == "auto":
        return ""
    try:
        own = fmt.detect(source)
        picked, _ = detect_format(source, formats)
    except Exception:  # noqa: BLE001 - a hint only; the reader's own error is what matters
        return ""
    hint = f"; its detector says: {own.reason}" if own.confidence is None else ""
    if picked.name != fmt.name:
        hint += f"; detected as {picked.name} (try --format {picked.name} or auto)"
    return hint


def read_transcript(
    path_or_text: str | Path | bytes,
    format: str = "auto",
    *,
    host: PluginHost | None = None,
    index: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Transcript:
    """Read one conversation from a file path, text or bytes, in any installed format.

    ``format`` is ``"auto"`` (detect by content) or a format name; ``index`` picks one run of a
    file that holds several (a tau-bench result list): without it such a file is an error that
    says how many runs it holds.
    """
    opts = dict(options or {})
    if index is not None:
        opts["index"] = index
    runs = read_transcripts(path_or_text, format, host=host, options=opts, progress=progress)
    if len(runs) != 1:
        name = runs[0].conversion.source if runs and runs[0].conversion else str(path_or_text)[:80]
        raise InvalidMessagesError(
            f"{name}: holds {len(runs)} conversations; choose one with index=N (--index N, 0-based)"
            " or read them all with read_transcripts"
        )
    return runs[0]


def _finish(transcript: Transcript, fmt: TranscriptFormat, source: TranscriptSource, *, single: bool) -> Transcript:
    # A reader of a multi-run file may keep a report per run; otherwise runs share the file's.
    report = source.run_reports.get(id(transcript), source.report)
    messages = normalize_pairing(_name_unnamed_calls(list(transcript.messages), report), report)
    problems = pairing_problems(messages)
    if problems:  # pragma: no cover - normalize_pairing leaves none; a guard for third parties
        report.warn(f"tool pairing still invalid after repair: {problems[0]}")
    return attrs.evolve(
        transcript, messages=messages, format=fmt.name, conversion=report.build(messages)
    )


def _name_unnamed_calls(messages: list[dict[str, Any]], report: ReportBuilder) -> list[dict[str, Any]]:
    """Give a tool call without an id one (``call_missing_<message>_<position>``), and the
    id-less results right after its message the ids of those calls in order: a call without an
    id can be neither answered nor sent. Counted as ``tool_call_ids_generated``."""
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not isinstance(calls, list):
            continue
        made: list[str] = []
        for position, call in enumerate(calls):
            if isinstance(call, dict) and not (call.get("id") or call.get("call_id")):
                call["id"] = f"call_missing_{index}_{position}"
                made.append(call["id"])
        if not made:
            continue
        report.changed("tool_call_ids_generated", len(made))
        following = index + 1
        while made and following < len(messages) and messages[following].get("role") == "tool":
            if not messages[following].get("tool_call_id"):
                messages[following]["tool_call_id"] = made.pop(0)
            following += 1
    return messages


def normalize_pairing(messages: list[dict[str, Any]], report: ReportBuilder) -> list[dict[str, Any]]:
    """Make ``messages`` valid by the pairing rule, counting every change in ``report``.

    Results move right after the assistant message whose call they answer (Claude Code writes
    the results of parallel calls between later blocks of the same response; a result recorded
    just before its call is moved after it, ``early_answers``); an orphan result
    becomes a user message marked ``_injected: "orphan-tool-result"``; a call with no result
    (other than the newest message's, which may be in flight) gets a placeholder result.
    """
    if not any(m.get("role") == "tool" or m.get("tool_calls") for m in messages):
        return messages
    if not pairing_problems(messages):
        return messages
    answers, unanswered = match_results(messages)
    early = early_answers(messages, answers, unanswered)
    if early:  # results recorded just before their call go after it (see ``early_answers``)
        answers = {**answers, **early}
        reattached = set(early.values())
        unanswered = [match for match in unanswered if match not in reattached]
    pending = set(pending_calls(messages))
    if pending and any(
        i not in answers for i in range(next(iter(pending))[0] + 1, len(messages))
    ):  # an orphan result after the newest calls becomes a user message: they are not in flight
        pending = set()
    results_for: dict[int, list[int]] = defaultdict(list)
    for result_index, (assistant_index, _pos) in answers.items():
        results_for[assistant_index].append(result_index)
    missing: dict[int, list[int]] = defaultdict(list)
    for assistant_index, position in unanswered:
        if (assistant_index, position) not in pending:
            missing[assistant_index].append(position)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if index in answers:
                continue
            header = f"[tool result {message.get('tool_call_id')!r} answers no call]"
            content = message.get("content")
            # Parts (an image a tool returned) stay parts: flattening to text would drop them.
            body: Any = (
                [{"type": "text", "text": header}, *content] if isinstance(content, list)
                else f"{header}\n{content_text(content)}"
            )
            out.append({"role": "user", "content": body, "_injected": "orphan-tool-result"})
            report.relabelled("orphan_tool_result_to_user")
            continue
        out.append(message)
        if role == "assistant" and (index in results_for or index in missing):
            placed = sorted(results_for.get(index, ()))
            expected = index + 1
            for result_index in placed:
                if result_index != expected:
                    report.changed("tool_results_moved_after_their_call")
                expected = result_index + 1
                out.append(messages[result_index])
            calls = message.get("tool_calls") or []
            for position in missing.get(index, ()):
                call = calls[position] if position < len(calls) else {}
                out.append({
                    "role": "tool",
                    "tool_call_id": str(call.get("id") or call.get("call_id") or ""),
                    "content": MISSING_RESULT_TEXT,
                    "_is_error": True,
                })
                report.changed("missing_tool_results_filled")
    return out


# --- writing ----------------------------------------------------------------------------------


def write_transcript(
    transcript: Transcript,
    format: str,
    *,
    host: PluginHost | None = None,
    notes: ReportBuilder | None = None,
) -> str:
    """``transcript`` as text in ``format`` (a format with a writer: ``openai``, ``anthropic``).

    Changes the target forces (renamed duplicate ids ...) are counted on ``notes``.
    """
    formats = transcript_formats(host)
    fmt = formats.get((format or "").strip().lower())
    writable = sorted(name for name, f in formats.items() if f.write is not None)
    if fmt is None or fmt.write is None:
        raise InvalidMessagesError(
            f"cannot write transcript format {format!r}; formats with a writer: {', '.join(writable)}"
        )
    return fmt.write(transcript, notes if notes is not None else ReportBuilder(format=fmt.name))
