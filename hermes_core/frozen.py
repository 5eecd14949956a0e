"""Tool definitions that cannot change: identity then proves content.

``freeze_tools`` gives dicts and lists that read, compare and serialise like the originals but
refuse every mutation, so per-turn work keyed on a large catalog is recognised by identity (a
new catalog is new objects: nothing to invalidate). ``copy``/``thaw`` give editable ones back;
pickling keeps them frozen. See docs/tools.md, "Large catalogs: freeze them".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, Self

_MESSAGE = "frozen tool definitions cannot be changed; build a new catalog with freeze_tools()"


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(_MESSAGE)


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` whose contents are fixed at construction. Hashable by content."""

    __slots__ = ("_hash", "_sealed")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if getattr(self, "_sealed", False):  # __init__ again would update in place
            _refuse(self)
        dict.__init__(self, *args, **kwargs)
        self._sealed = True

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    _hash: int

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            self._hash = hash(frozenset(self.items()))  # order-free, like dict equality
            return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` whose items are fixed at construction. Hashable by content."""

    __slots__ = ("_sealed",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        if getattr(self, "_sealed", False):
            _refuse(self)
        list.__init__(self, items)
        self._sealed = True

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"FrozenList({list.__repr__(self)})"


def freeze(value: Any) -> Any:
    """``value`` with every mapping made a ``FrozenDict`` and every list or tuple a
    ``FrozenList``, recursively; strings, numbers, booleans and ``None`` as they are."""
    if value.__class__ is FrozenDict or value.__class__ is FrozenList:
        return value  # already frozen all the way down (that is all freeze ever builds)
    if isinstance(value, Mapping):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return FrozenList(freeze(item) for item in value)
    return value


class FrozenTools(tuple):  # type: ignore[type-arg]
    """A tuple of frozen tool definitions: the container and every definition in it are
    immutable, so the same ``FrozenTools`` object always holds the same tools. Anything handed
    to the constructor is frozen first."""

    # No __slots__: the instance dict holds the cached hash (a tuple subclass cannot declare
    # a slot of its own).

    def __new__(cls, definitions: Iterable[Any] = ()) -> Self:
        return tuple.__new__(cls, map(freeze, definitions))

    def __hash__(self) -> int:
        # Computed once: hashing calls every definition's __hash__ (Python-level), about 50 us
        # per 1,000 tools, and memos keyed by the catalog hash it whenever they are consulted.
        state = self.__dict__
        cached = state.get("_hash")
        if cached is None:
            cached = state["_hash"] = tuple.__hash__(self)
        return cached

    def __reduce__(self) -> tuple[Any, ...]:
        # The definitions only: a cached hash is per process (string hashing is randomised).
        return (FrozenTools, (tuple(self),))

    @classmethod
    def of_frozen(cls, definitions: Iterable[Any]) -> FrozenTools:
        """Wrap definitions the caller has checked are frozen (``all_frozen``), without
        re-checking each one."""
        return tuple.__new__(cls, definitions)

    def __repr__(self) -> str:
        return f"FrozenTools({tuple.__repr__(self)})"


def freeze_tools(definitions: Iterable[Any]) -> FrozenTools:
    """The tool definitions, deep-frozen (see the module docstring). Build it when the tools
    change (an MCP server connects, a plugin registers a tool), and pass it every turn."""
    return FrozenTools(definitions)


def as_frozen_tools(definitions: Any) -> FrozenTools | None:
    """``definitions`` as a ``FrozenTools`` when it is one, or a non-empty list or tuple of
    frozen definitions; else ``None``."""
    if definitions.__class__ is FrozenTools:
        return definitions
    if isinstance(definitions, (list, tuple)) and all_frozen(definitions):
        return FrozenTools.of_frozen(definitions)
    return None


def thaw(value: Any) -> Any:
    """A plain, editable deep copy of a frozen (or partly frozen) value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value


def all_frozen(definitions: Sequence[Any]) -> bool:
    """True when every definition is a ``FrozenDict`` (and there is at least one)."""
    if definitions.__class__ is FrozenTools:
        return bool(definitions)
    # The first item settles the usual plain-dict catalog without a pass over all of them.
    if not definitions or definitions[0].__class__ is not FrozenDict:
        return False
    return set(map(type, definitions)) == _FROZEN_ONLY


_FROZEN_ONLY = {FrozenDict}
