"""The building blocks of a config model: ``field`` (default, checker, doc), ``section`` and the
checkers. A checker returns the normalised value or raises ``ValueError`` with a short reason,
which the loader turns into a ``ConfigError`` naming key, value and file (lenient: a warning and
the default). Import them from ``hermes_core.config``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

Check = Callable[[Any], Any]

_TRUE_WORDS = {"true", "yes", "on", "1"}
_FALSE_WORDS = {"false", "no", "off", "0"}


# --- checkers: each returns the normalised value or raises ValueError with a short reason ---


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
        return value.strip().lower() in _TRUE_WORDS
    raise ValueError("expected true or false")


def integer(minimum: int | None = None, maximum: int | None = None, *, optional: bool = False) -> Check:
    def check(value: Any) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, bool):
            raise ValueError("expected an integer")
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise ValueError("expected an integer" + (" or null" if optional else ""))
        if minimum is not None and value < minimum:
            raise ValueError(f"must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise ValueError(f"must be at most {maximum}")
        return value

    return check


def number(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    optional: bool = False,
) -> Check:
    def check(value: Any) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError("expected a number")
        try:
            parsed = float(value)
        except ValueError:
            raise ValueError("expected a number") from None
        if low is not None and (parsed <= low if low_open else parsed < low):
            raise ValueError(f"must be {'greater than' if low_open else 'at least'} {low:g}")
        if high is not None and parsed > high:
            raise ValueError(f"must be at most {high:g}")
        return parsed

    return check


def string(*, optional: bool = False, choices: tuple[str, ...] | None = None) -> Check:
    def check(value: Any) -> str | None:
        if value is None and optional:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and choices is None:
            value = str(value)
        if not isinstance(value, str):
            raise ValueError("expected a string" + (" or null" if optional else ""))
        if choices is not None and value.strip().lower() not in choices:
            raise ValueError("expected one of " + ", ".join(choices))
        return value.strip().lower() if choices is not None else value

    return check


def string_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise ValueError("expected a list of strings")


def free_mapping(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("expected a mapping")
    return dict(value)


def _model_thresholds(value: Any) -> Mapping[str, float]:
    pairs = free_mapping(value)
    out: dict[str, float] = {}
    for key, raw in pairs.items():
        out[str(key)] = number(0.0, 1.0, low_open=True)(raw)
    return out


def gate(value: Any) -> Any:
    # true/false words, a list of model-name fragments, or "auto" (spec §4): anything is
    # accepted, because the reference treats unknown values as "auto" rather than an error.
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


def _any(value: Any) -> Any:
    return value


def name_list(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise ValueError("expected a YAML list")
    return tuple(str(v) for v in value)


def tri_state(value: Any) -> str:
    # Spec §16 parse rule: true/1/yes -> on, false/0/no -> off, anything unknown -> auto.
    if value is None or value is True:
        return "auto"
    if value is False:
        return "off"
    word = str(value).strip().lower()
    if word in {"true", "1", "yes", "on"}:
        return "on"
    if word in {"false", "0", "no", "off"}:
        return "off"
    if word == "auto":
        return "auto"
    raise ValueError("expected auto, on or off")


def clamped(low: float, high: float, cast: type) -> Check:
    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("expected a number")
        try:
            parsed = cast(float(value))
        except (TypeError, ValueError):
            raise ValueError("expected a number") from None
        return min(max(parsed, cast(low)), cast(high))

    return check


def field(default: Any, check: Check, *, lenient: bool = False, doc: str = "") -> Any:
    """A config field: its default, its checker, and whether bad values only warn."""
    if isinstance(default, (dict, list)):
        return attrs.field(
            factory=lambda: type(default)(default),
            metadata={"check": check, "lenient": lenient, "doc": doc},
        )
    return attrs.field(default=default, metadata={"check": check, "lenient": lenient, "doc": doc})


def section(cls: type) -> Any:
    """A nested section field (its keys are ``<field>.<key>``)."""
    return attrs.field(factory=cls, metadata={"section": cls})
