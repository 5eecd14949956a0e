"""What the index keeps of one skill: a compact row built from its frontmatter.

Rows are plain lists, not records: a snapshot of 10,000 skills is loaded straight into them
(``orjson`` builds the lists) and filtered without building an object per skill, which is what
keeps a snapshot-validated build close to the cost of reading the snapshot. The ``ROW_*``
constants name the positions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Index descriptions are cut to this many characters (``SKILL_PROMPT_DESC_LIMIT`` upstream).
DESCRIPTION_LIMIT = 60

ROW_CATEGORY, ROW_NAME, ROW_DESCRIPTION, ROW_DIR, ROW_PATH, ROW_CONDITIONS, ROW_LINE = range(7)
ROW_SIZE = 7

COND_PLATFORMS, COND_ENVIRONMENTS = 0, 1
COND_REQUIRES_TOOLS, COND_REQUIRES_TOOLSETS = 2, 3
COND_FALLBACK_TOOLS, COND_FALLBACK_TOOLSETS = 4, 5
COND_NO_MODEL = 6

CONDITION_KEYS = (
    "platforms",
    "environments",
    "requires_tools",
    "requires_toolsets",
    "fallback_for_tools",
    "fallback_for_toolsets",
)
_CONDITIONS = frozenset(CONDITION_KEYS)
_CONDITION_KEY_SET = _CONDITIONS | {"metadata", "disable-model-invocation"}


def clean_description(value: Any) -> str:
    """The description as the index uses it: a string, stripped of whitespace and quotes."""
    if not value:
        return ""
    return str(value).strip().strip("'\"").strip()


def index_description(description: str) -> str:
    """What the model sees: at most 60 characters, a longer text cut to 57 plus ``...``."""
    if len(description) > DESCRIPTION_LIMIT:
        return description[: DESCRIPTION_LIMIT - 3] + "..."
    return description


def name_list(value: Any) -> list[str]:
    """A list of names from a YAML list, a comma-separated string or a scalar."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(item).strip() for item in value if item is not None and str(item).strip()]
    return [str(value).strip()]


def conditions(frontmatter: Mapping[str, Any]) -> list[Any] | None:
    """The filters a skill declares, or ``None`` when it declares none (the common case).

    Each condition may be a top-level key or sit under ``metadata.hermes`` (upstream's place
    for the four tool conditions); both are honoured and merged.
    """
    if _CONDITION_KEY_SET.isdisjoint(frontmatter):
        return None
    meta = frontmatter.get("metadata")
    hermes = meta.get("hermes") if isinstance(meta, Mapping) else None
    if not isinstance(hermes, Mapping):
        hermes = {}
    hidden = frontmatter.get("disable-model-invocation", hermes.get("disable-model-invocation"))
    no_model = hidden is True or (isinstance(hidden, str) and hidden.strip().lower() == "true")
    if not no_model and _CONDITIONS.isdisjoint(frontmatter) and _CONDITIONS.isdisjoint(hermes):
        return None
    out: list[Any] = []
    for key in CONDITION_KEYS:
        names = name_list(frontmatter.get(key))
        if key in hermes:
            names.extend(n for n in name_list(hermes[key]) if n not in names)
        out.append(names)
    out.append(no_model)
    if not no_model and not any(out[:COND_NO_MODEL]):
        return None
    return out


def make_row(
    frontmatter: Mapping[str, Any], *, category: str, dir_name: str, path: str
) -> list[Any]:
    """The row of one skill. ``name`` defaults to the directory name.

    The last item is the skill's line in the index, rendered once here so that a build from
    the snapshot only joins strings. (Once per skill on a cold scan: kept lean.)
    """
    name = frontmatter.get("name")
    name = (name if name.__class__ is str else "" if name is None else str(name)).strip() or dir_name
    description = frontmatter.get("description")
    if description.__class__ is str:
        description = description.strip().strip("'\"").strip()
    else:
        description = clean_description(description)
    shown = description if len(description) <= DESCRIPTION_LIMIT else description[: DESCRIPTION_LIMIT - 3] + "..."
    return [
        category,
        name,
        description,
        dir_name,
        path,
        None if _CONDITION_KEY_SET.isdisjoint(frontmatter) else conditions(frontmatter),
        f"    - {name}: {shown}" if shown else f"    - {name}",
    ]


def index_line(name: str, description: str) -> str:
    shown = index_description(description)
    return f"    - {name}: {shown}" if shown else f"    - {name}"
