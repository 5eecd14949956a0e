"""The ``archive.*`` keys, declared by the ``archive`` plugin and read by the stores and the spill
writer too (``config.section(ARCHIVE)`` reads them even when the plugin is blocked): here, below
all of them, so that the tools plugin needs nothing of the archive's package."""

from __future__ import annotations

import attrs

from hermes_core.plugin import ConfigSection, boolean, field, integer, number


@attrs.frozen(kw_only=True)
class ArchiveSettings:
    enabled: bool = field(True, boolean, doc="archive what compaction removes (recall tools)")
    max_age_days: float | None = field(
        90.0, number(0.0, optional=True, low_open=True), doc="hermes-ctx history prune removes older entries"
    )
    max_bytes_per_session: int | None = field(
        256 << 20, integer(1, optional=True), doc="oldest entries beyond this go first; null = no cap"
    )
    keep_secrets: bool = field(
        False, boolean,
        doc="UNSAFE: store archived messages and spill files with secrets verbatim (default: masked)",
    )


ARCHIVE = ConfigSection(name="archive", model=ArchiveSettings, doc="The lossless archive of compacted messages.")
