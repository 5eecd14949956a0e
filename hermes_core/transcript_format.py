"""What a transcript format is, and what it reads from: the API a format plugin is written to.

A format answers ``hermes_transcript_formats`` with ``TranscriptFormat`` records (``detect``,
``read``, optional ``write``) over a ``TranscriptSource``, and counts every record and content
change on a ``ReportBuilder`` (the ``ConversionReport``). Reading: ``hermes_core.transcripts``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from hermes_core import bounded
from hermes_core.errors import InvalidMessagesError
from hermes_core.text_repair import decode_text, escape_surrogates_of, looks_binary

__all__ = [
    "HEAD_BYTES",
    "HEAD_RECORDS",
    "MAX_MESSAGE_DEPTH",
    "ConversionReport",
    "Detection",
    "ReportBuilder",
    "Transcript",
    "TranscriptFormat",
    "TranscriptSource",
    "UnknownTranscriptFormatError",
    "check_depth",
    "image_placeholder",
    "make_tool_call",
]

#: Bytes of the input every detector sees (and the JSON Lines records parsed from them).
HEAD_BYTES = 64 * 1024
HEAD_RECORDS = 50


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


# --- the input ---------------------------------------------------------------------------------


def _loads(text: str, where: str, report: ReportBuilder | None) -> Any:
    try:
        value = bounded.loads(text, MAX_MESSAGE_DEPTH)  # measured before the parser recurses
    except bounded.TooDeepError:
        raise InvalidMessagesError(
            f"{where}: JSON nested too deeply to read (refused rather than risk the stack)"
        ) from None
    return escape_surrogates_of(text, value, report)


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
            src = cls(name="<input>", text=decode_text(path_or_text, None), options=options, progress=progress)
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
        return decode_text(data, self.report)

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
                lines = self.head_text.split("\n")  # JSON Lines end at \n only: str.splitlines also
                # breaks at U+2028/U+0085, which JSON.stringify leaves unescaped inside strings
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
            lines = self.text.split("\n")  # as the file's own lines: \n only (see head_records)
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
                line = raw if isinstance(raw, str) else decode_text(raw, self.report)  # type: ignore[arg-type]
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
            return _loads(decode_text(data, self.report), str(path), self.report)
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
