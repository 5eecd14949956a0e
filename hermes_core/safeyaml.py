"""YAML for files other people write: a safe loader, with aliases and nesting bounded.

``yaml.safe_load`` still trusts a document's shape ("billion laughs", self-referring anchors,
deep nesting). ``load_yaml`` composes the node graph, measures it without recursion (nodes,
expanded nodes, depth, cycles) and only then constructs; over a bound is a ``YAMLLimitError``
(a ``yaml.YAMLError``) saying what was exceeded (docs/hostile-input.md).
"""

from __future__ import annotations

from typing import Any

import yaml

try:
    _LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _LOADER = yaml.SafeLoader

#: Nodes a document may hold once every alias is expanded (when aliases add any).
MAX_EXPANDED_NODES = 100_000
#: Levels of nested mappings and sequences.
MAX_DEPTH = 200


class YAMLLimitError(yaml.YAMLError):
    """A YAML document over the bounds of ``load_yaml`` (``problem`` says which)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def load_yaml(
    text: str,
    *,
    max_expanded_nodes: int = MAX_EXPANDED_NODES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """The value of the YAML document ``text``, by a safe loader, within bounds.

    Raises ``yaml.YAMLError`` for invalid YAML and ``YAMLLimitError`` for a document that is
    valid but too deep, self-referencing, or expands through aliases past
    ``max_expanded_nodes``.
    """
    if _too_deep(text, max_depth):
        raise YAMLLimitError(f"nested more than {max_depth} levels deep")
    loader = _LOADER(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YAMLLimitError(
                f"nested too deeply (more than the parser can follow; the limit is {max_depth} levels)"
            ) from None
        if node is None:
            return None
        check_node(node, max_expanded_nodes=max_expanded_nodes, max_depth=max_depth)
        try:
            return loader.construct_document(node)
        except RecursionError:  # pragma: no cover - check_node bounds the depth first
            raise YAMLLimitError("nested too deeply to build") from None
    finally:
        loader.dispose()


_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _too_deep(text: str, max_depth: int) -> bool:
    """Whether the document nests deeper than ``max_depth``, from the parser's events alone.

    Composing a very deep document recurses in C (libyaml's composer calls back into Python for
    every level) and can overflow the C stack - a segmentation fault, not a RecursionError -
    before any Python limit is reached; the event stream is produced without recursion.
    """
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > max_depth:
                return True
        elif isinstance(event, _CLOSE):
            depth -= 1
    return False


def check_node(node: yaml.Node, *, max_expanded_nodes: int, max_depth: int) -> None:
    """Raise ``YAMLLimitError`` when the graph under ``node`` is over the bounds.

    Iterative post-order walk: each distinct node is visited once and its expanded size
    (itself plus its children's expanded sizes) memoised, so a bomb is measured in time linear
    in its text, not in its expansion.
    """
    expanded: dict[int, int] = {}
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    while stack:
        current, depth, finished = stack.pop()
        key = id(current)
        children = _children(current)
        if finished:
            on_path.discard(key)
            total = 1
            for child in children:
                total += expanded[id(child)]
            if total > max_expanded_nodes and total > distinct:
                raise YAMLLimitError(
                    f"aliases expand it to more than {max_expanded_nodes:,} nodes "
                    "(a \"billion laughs\" document); it was not loaded"
                )
            expanded[key] = total
            continue
        if key in expanded:
            continue
        if key in on_path:
            raise YAMLLimitError("an alias refers to a node that contains it (a recursive document)")
        if depth > max_depth:
            raise YAMLLimitError(f"nested more than {max_depth} levels deep")
        distinct += 1
        if not children:
            expanded[key] = 1
            continue
        on_path.add(key)
        stack.append((current, depth, True))
        for child in children:
            if id(child) not in expanded:
                stack.append((child, depth + 1, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


__all__ = ["MAX_DEPTH", "MAX_EXPANDED_NODES", "YAMLLimitError", "load_yaml", "check_node"]
