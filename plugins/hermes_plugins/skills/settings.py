"""The ``skills`` config section, owned by the ``skills`` plugin."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from hermes_core.plugin import ConfigSection, field, free_mapping, integer, number, string_list


@attrs.frozen(kw_only=True)
class SkillsSection:
    disabled: tuple[str, ...] = field((), string_list)
    platform_disabled: Mapping[str, Any] = field({}, free_mapping)
    external_dirs: tuple[str, ...] = field((), string_list)
    index_max_tokens: int | None = field(
        None, integer(1, optional=True), doc="null = 2% of the window when known"
    )
    index_ttl_seconds: float | None = field(
        30.0, number(0.0, optional=True),
        doc="a cached index older than this revalidates against disk; null = until invalidated",
    )


SKILLS = ConfigSection(name="skills", model=SkillsSection, doc="The skills index and where skills are found.")
