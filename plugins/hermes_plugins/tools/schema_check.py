"""Checking ``tool_call`` arguments against the tool's JSON schema, with the coercions models need.

Two passes. First a small walk coerces what models commonly send as strings - ``"42"`` becomes
``42`` for an integer field, ``"2.5"`` ``2.5`` for a number, ``"true"`` ``True`` for a
boolean, nothing else - and reports the plain mismatches it meets on the way (type, ``enum``,
``const``, ``required``, ``additionalProperties``, bounds and sizes) in words a model acts on.
When it finds none, the coerced value is validated by ``jsonschema`` (draft 2020-12, formats
checked), so every other keyword counts too: ``$ref``/``$defs``, ``pattern``, ``uniqueItems``,
``allOf``/``oneOf``/``not``, ``multipleOf``, ``prefixItems``, ``dependentRequired``,
``unevaluatedProperties``... OpenAPI's ``nullable: true`` (common in MCP schemas generated from
OpenAPI) admits ``null`` in both passes. Each problem reads ``<path>: <constraint>``, the path
naming the argument (``items[2].name``; ``(arguments)`` at the top).

jsonschema, not fastjsonschema: fastjsonschema stops at draft 7 (no ``prefixItems``,
``$defs``, ``unevaluated*``, ``dependentRequired``), and a ``tool_call`` is checked once per
call, where building a validator from a cache costs microseconds
(``tests/benchmarks/bench_schema_check.py``).
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from hermes_core.plugin import bounded, get_logger

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

log = get_logger(__name__)

_INT = re.compile(r"^\s*-?\d+\s*$")
_TYPE_NAMES = {
    str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
    dict: "object", type(None): "null",
}


def _kind(value: Any) -> str:
    for cls, name in _TYPE_NAMES.items():
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{_kind(value)} {text if len(text) <= 40 else text[:37] + '...'}"


def _join(path: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else part


def _as_type(value: Any, wanted: str) -> tuple[bool, Any]:
    """(matches, value after coercion) for one JSON type name."""
    if wanted == "boolean":
        return _as_boolean(value)
    if wanted == "integer":
        return _as_integer(value)
    if wanted == "number":
        return _as_number(value)
    plain = _PLAIN_TYPES.get(wanted)
    return (True if plain is None else plain(value)), value  # an unknown type name constrains nothing


#: The JSON types no string is coerced to.
_PLAIN_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, Mapping),
    "null": lambda value: value is None,
}


def _as_boolean(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return True, value.strip().lower() == "true"
    return False, value


def _as_integer(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return False, value
    if isinstance(value, int):
        return True, value
    if isinstance(value, float) and value.is_integer():
        return True, int(value)
    if isinstance(value, str) and _INT.match(value):
        return True, int(value)
    return False, value


def _as_number(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return False, value
    if isinstance(value, (int, float)):
        return True, value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return False, value
        return True, int(number) if _INT.match(value) else number
    return False, value


def check(
    value: Any, schema: Any, path: str = "", validators: SchemaValidators | None = None
) -> tuple[Any, list[str]]:
    """Check ``value`` against ``schema``; returns the coerced value and the problems found.

    Each problem reads ``<path>: <constraint>`` (the path is ``(arguments)`` at the top).
    ``validators`` keeps compiled schemas between calls (the plugin host's, see ``bridge``).
    """
    problems: list[str] = []
    value = _check(value, schema, path, problems)
    if not problems and not path and isinstance(schema, Mapping) and schema:
        problems = validate(value, schema, validators)
    return value, problems


def _check(value: Any, schema: Any, path: str, problems: list[str]) -> Any:
    if not isinstance(schema, Mapping) or not schema:
        return value
    if value is None and schema.get("nullable") is True:
        return value
    where = path or "(arguments)"
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            ok, value = _first_shape(value, options, path)
            if not ok:
                problems.append(f"{where}: matches none of the allowed shapes ({keyword})")
                return value
    wanted = schema.get("type")
    if wanted is not None:
        names = wanted if isinstance(wanted, list) else [wanted]
        ok, value = _first_type(value, names)
        if not ok:
            problems.append(f"{where}: expected {' or '.join(map(str, names))}, got {_describe(value)}")
            return value
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problems.append(f"{where}: must be one of {allowed}; got {value!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: must be {schema['const']!r}; got {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _bounds(value, schema, where, problems)
    elif isinstance(value, str):
        _size(len(value), schema, "minLength", "maxLength", "characters", where, problems)
    elif isinstance(value, list):
        _size(len(value), schema, "minItems", "maxItems", "items", where, problems)
        value = _check_items(value, schema, path, problems)
    elif isinstance(value, Mapping):
        value = _check_object(value, schema, path, problems)
    return value


def _first_shape(value: Any, options: list[Any], path: str) -> tuple[bool, Any]:
    """(whether one of the ``anyOf``/``oneOf`` options takes ``value``, its coercion by the first that does)."""
    for option in options:
        coerced, errors = check(value, option, path)
        if not errors:
            return True, coerced
    return False, value


def _first_type(value: Any, names: list[Any]) -> tuple[bool, Any]:
    """(whether one of the type ``names`` takes ``value``, its coercion by the first that does)."""
    for name in names:
        ok, coerced = _as_type(value, str(name))
        if ok:
            return True, coerced
    return False, value


def _bounds(value: float, schema: Mapping[str, Any], where: str, problems: list[str]) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        problems.append(f"{where}: must be at least {low}; got {value}")
    if isinstance(high, (int, float)) and value > high:
        problems.append(f"{where}: must be at most {high}; got {value}")
    low, high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(low, (int, float)) and not isinstance(low, bool) and value <= low:
        problems.append(f"{where}: must be greater than {low}; got {value}")
    if isinstance(high, (int, float)) and not isinstance(high, bool) and value >= high:
        problems.append(f"{where}: must be less than {high}; got {value}")


def _size(
    size: int, schema: Mapping[str, Any], low_key: str, high_key: str, unit: str, where: str,
    problems: list[str],
) -> None:
    low, high = schema.get(low_key), schema.get(high_key)
    if isinstance(low, int) and size < low:
        problems.append(f"{where}: needs at least {low} {unit}; got {size}")
    if isinstance(high, int) and size > high:
        problems.append(f"{where}: allows at most {high} {unit}; got {size}")


def _check_items(value: list[Any], schema: Mapping[str, Any], path: str, problems: list[str]) -> list[Any]:
    items = schema.get("items")
    if isinstance(items, Mapping):
        return [_check(item, items, _join(path, i), problems) for i, item in enumerate(value)]
    if isinstance(items, list):  # positional (tuple) form
        return [
            _check(item, items[i], _join(path, i), problems) if i < len(items) else item
            for i, item in enumerate(value)
        ]
    return value


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, problems: list[str]
) -> dict[str, Any]:
    where = path or "(arguments)"
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else ():
        if name not in value:
            problems.append(f"{where}: missing required property {name!r}")
    extra = schema.get("additionalProperties", True)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in props:
            out[key] = _check(item, props[key], _join(path, key), problems)
        elif extra is False:
            known = ", ".join(sorted(props)) or "none"
            problems.append(f"{_join(path, key)}: unexpected property (known: {known})")
            out[key] = item
        elif isinstance(extra, Mapping):
            out[key] = _check(item, extra, _join(path, key), problems)
        else:
            out[key] = item
    return out


# --- the library pass ---------------------------------------------------------------------

#: Compiled validators a host keeps (least recently used dropped first).
VALIDATORS_MAX = 256


class _Validator(Protocol):
    """What the library pass needs of a compiled schema: a jsonschema validator, or a
    ``_BrokenSchema`` standing in for a schema jsonschema rejects."""

    def iter_errors(self, instance: Any, /) -> Iterable[ValidationError]: ...


class SchemaValidators:
    """Compiled validators by schema text, one LRU per plugin host
    (``host.state(SchemaValidators)``): compiling costs far more than validating."""

    __slots__ = ("_entries", "_lock")

    def __init__(self) -> None:
        self._entries: OrderedDict[str, _Validator] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, schema: Mapping[str, Any]) -> _Validator:
        if bounded.value_depth(schema) > bounded.MAX_DEPTH:
            # A server's schema nested past the bound: json.dumps, openapi_nullable and
            # jsonschema all recurse per level, so it is not compiled (the call's own check
            # still runs: the arguments' depth is bounded before they get here).
            return _BrokenSchema(f"schema nested more than {bounded.MAX_DEPTH} levels deep")
        key = json.dumps(schema, sort_keys=True, default=str)
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                self._entries.move_to_end(key)
                return known
        validator = _compile(schema)
        with self._lock:
            self._entries[key] = validator
            while len(self._entries) > VALIDATORS_MAX:
                self._entries.popitem(last=False)
        return validator

    def __len__(self) -> int:
        return len(self._entries)


def openapi_nullable(schema: Any) -> Any:
    """``schema`` with OpenAPI's ``nullable: true`` spelled in JSON Schema (``null`` admitted)."""
    if isinstance(schema, list):
        return [openapi_nullable(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: openapi_nullable(item) for key, item in schema.items() if key != "nullable"}
    if schema.get("nullable") is not True:
        return out
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif kind is None:
        return {"anyOf": [out, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _compile(schema: Mapping[str, Any]) -> _Validator:
    import jsonschema  # on first use: most sessions never check a bridged call

    spelled = openapi_nullable(schema)
    cls = jsonschema.validators.validator_for(spelled, default=jsonschema.Draft202012Validator)
    validator: _Validator
    try:
        cls.check_schema(spelled)
        validator = cls(spelled, format_checker=cls.FORMAT_CHECKER)
    except jsonschema.SchemaError as exc:
        validator = _BrokenSchema(f"{'.'.join(map(str, exc.path)) or 'schema'}: {exc.message}")
    return validator


class _BrokenSchema:
    """A tool whose schema is not valid JSON Schema: the first pass's check is all there is."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def iter_errors(self, instance: Any, /) -> list[ValidationError]:
        log.debug("tool_schema_invalid", reason=self.reason)
        return []


def _path_of(parts: Any) -> str:
    path = ""
    for part in parts:
        path = _join(path, part)
    return path or "(arguments)"


def validate(
    value: Any, schema: Mapping[str, Any], validators: SchemaValidators | None = None
) -> list[str]:
    """The draft 2020-12 problems of ``value`` under ``schema``, as ``<path>: <message>``."""
    try:
        validator = validators.get(schema) if validators is not None else _compile(schema)
        errors = list(validator.iter_errors(value))
    except Exception as exc:  # noqa: BLE001 - an unresolvable $ref: say so, never crash the turn
        return [f"(arguments): the tool's schema could not be applied ({type(exc).__name__}: {exc})"]
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [f"{_path_of(e.absolute_path)}: {e.message}" for e in errors]
