"""Which skills a session may see: platform, environment, tool conditions and disabled names.

Every filter runs on every build, from a fresh scan and from the snapshot alike (the reference
re-checked only ``platforms`` on its snapshot path, so a skill hidden by ``environments`` could
reappear). Filters read only their arguments: the inputs come from the session context and are
part of the index cache key.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from hermes_plugins.skills.metadata import (
    COND_ENVIRONMENTS,
    COND_FALLBACK_TOOLS,
    COND_FALLBACK_TOOLSETS,
    COND_NO_MODEL,
    COND_PLATFORMS,
    COND_REQUIRES_TOOLS,
    COND_REQUIRES_TOOLSETS,
)

#: Platform tags as skill authors write them -> the ``sys.platform`` prefix they mean.
PLATFORM_PREFIXES = {"macos": "darwin", "osx": "darwin", "linux": "linux", "windows": "win32"}
#: Environment tags the index knows; an unknown tag fails open (the skill is shown).
KNOWN_ENVIRONMENTS = frozenset({"kanban", "docker", "s6"})


def platform_matches(platforms: Iterable[str], os_platform: str, *, termux: bool = False) -> bool:
    """Whether a skill limited to ``platforms`` runs here. No tags: everywhere.

    ``linux`` also covers FreeBSD, and Termux (where ``sys.platform`` may be ``android``);
    ``termux`` and ``android`` tags match on Termux only.
    """
    matched_any = False
    for raw in platforms:
        matched_any = True
        tag = raw.strip().lower()
        if termux and tag in ("linux", "termux", "android"):
            return True
        prefix = PLATFORM_PREFIXES.get(tag, tag)
        if prefix and os_platform.startswith(prefix):
            return True
        if prefix == "linux" and os_platform.startswith("freebsd"):
            return True
    return not matched_any


def environment_matches(environments: Iterable[str], current: Collection[str]) -> bool:
    """OR over the skill's tags; a tag the index does not know counts as a match."""
    tags = [t.strip().lower() for t in environments if t.strip()]
    if not tags:
        return True
    return any(tag not in KNOWN_ENVIRONMENTS or tag in current for tag in tags)


def tools_allow(
    conditions: list[Any],
    tools: Collection[str] | None,
    toolsets: Collection[str] | None,
) -> bool:
    """The reference's ``_skill_should_show``: hidden when a required tool or toolset is
    missing, or when a tool/toolset it is the fallback for is available. With neither set
    known (``None``, e.g. the CLI without ``--tool``), everything shows."""
    if tools is None and toolsets is None:
        return True
    tools = tools or ()
    toolsets = toolsets or ()
    if any(t in toolsets for t in conditions[COND_FALLBACK_TOOLSETS]):
        return False
    if any(t in tools for t in conditions[COND_FALLBACK_TOOLS]):
        return False
    if any(t not in toolsets for t in conditions[COND_REQUIRES_TOOLSETS]):
        return False
    return all(t in tools for t in conditions[COND_REQUIRES_TOOLS])


def hidden_reason(
    conditions: list[Any] | None,
    *,
    tools: Collection[str] | None,
    toolsets: Collection[str] | None,
    os_platform: str,
    termux: bool,
    environments: Collection[str],
) -> str | None:
    """Why a skill with ``conditions`` is hidden, or ``None`` when it is shown."""
    if conditions is None:
        return None
    if conditions[COND_NO_MODEL]:
        return "disable-model-invocation"
    if not platform_matches(conditions[COND_PLATFORMS], os_platform, termux=termux):
        return "platform"
    if not environment_matches(conditions[COND_ENVIRONMENTS], environments):
        return "environment"
    if not tools_allow(conditions, tools, toolsets):
        return "tools"
    return None


def names_from(value: Any) -> list[str]:
    """Skill names from a config value: a list, a JSON-array string, or one name."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            try:
                value = json.loads(text)
            except ValueError:
                return [text]
        else:
            return [text] if text else []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value).strip()]


def disabled_names(
    disabled: Iterable[str], platform_disabled: Mapping[str, Any], platform: str
) -> frozenset[str]:
    """``skills.disabled`` plus ``skills.platform_disabled.<platform>``."""
    items = list(disabled)
    # The config model splits strings on commas; a JSON array written as a string arrives
    # split, so join it back before reading it.
    joined = ",".join(items)
    if joined.startswith("[") and joined.endswith("]"):
        items = names_from(joined)
    names = set(n.strip() for n in items if n.strip())
    if platform and platform_disabled:
        names.update(names_from(platform_disabled.get(platform)))
    return frozenset(names)


def session_platform(platform: str, env: Mapping[str, str]) -> str:
    """The gateway platform for ``platform_disabled``: the session's, else the environment's."""
    return (platform or env.get("HERMES_PLATFORM") or env.get("HERMES_SESSION_PLATFORM") or "").strip()


def is_termux(env: Mapping[str, str]) -> bool:
    return bool(env.get("TERMUX_VERSION")) or "com.termux" in env.get("PREFIX", "")


# A fact of the machine, not of a plugin host: probed once per process (tests substitute it).
_host_lock = threading.Lock()
_host_environments: frozenset[str] | None = None


def host_environments() -> frozenset[str]:
    """Environment tags that describe the machine itself, probed once per process."""
    global _host_environments
    if _host_environments is None:
        with _host_lock:
            found = set()
            if os.path.exists("/.dockerenv"):
                found.add("docker")
            if os.path.isdir("/run/s6") or os.path.exists("/command/s6-svscan"):
                found.add("s6")
            _host_environments = frozenset(found)
    return _host_environments


def current_environments(backend: str, env: Mapping[str, str], tools: Collection[str] = ()) -> frozenset[str]:
    """The machine's tags, plus ``docker`` for a docker terminal backend and ``kanban`` for a
    kanban worker (the session has ``kanban_show``, or ``HERMES_KANBAN_TASK`` is set)."""
    tags = host_environments()
    extra = []
    if backend == "docker":
        extra.append("docker")
    if "kanban_show" in tools or env.get("HERMES_KANBAN_TASK"):
        extra.append("kanban")
    return tags.union(extra) if extra else tags
