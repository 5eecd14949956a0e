"""Hooks for transcript formats: the readers (and writers) of the sessions agents record."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.transcript_format import TranscriptFormat


class TranscriptSpecs:
    @hookspec
    def hermes_transcript_formats(self) -> Iterable[TranscriptFormat] | None:
        """Declare transcript formats this plugin reads (and optionally writes).

        Called: once per host, the first time a transcript is read, written or the formats
            are listed (``hermes-ctx formats``).

        Args:
            (none)

        Returns:
            ``TranscriptFormat`` records: ``name`` (what ``--format`` accepts),
            ``description``, ``detect(source) -> Detection`` (a confidence in (0, 1] or a
            refusal with its reason, from the head of the input: by content, never by file
            name alone), ``read(source) -> Transcript`` and an optional ``write``;
            ``versions`` names the tool versions the reader was written against.

        Semantics: collect; every plugin's formats are pooled and a name declared twice is an
            error naming both plugins. Auto-detection picks the most confident format.

        Example::

            @hookimpl
            def hermes_transcript_formats(self):
                yield TranscriptFormat(name="mylog", description="MyAgent logs",
                                       detect=detect, read=read)

        .. versionadded:: 0.1
        """
