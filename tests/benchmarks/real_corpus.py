"""A realistic corpus for benchmarks: the shared real sessions, scaled to any length with
distinct content (issue 29, "Realistic cost").

``build_corpus(n)`` reads every conversation of ``../shared/real-sessions`` through the
project's own transcript readers (``read_conversations``, as ``hermes-ctx eval`` does) and
appends them one after another, again and again, until ``n`` messages are reached. Copy ``k``
of a conversation is varied so that nothing dedupes or caches trivially: every number is
shifted by ``k``, every file name gets a ``_k`` suffix, a handful of common words are rotated
through a small vocabulary, and every tool-call id gets a ``_k`` suffix (in the call and in its
result, so pairing holds). The mix of the sessions gives ~1.8 kB a message (JSON), close to the
~1.7 kB of the issue's measurement. Nothing of the sessions is stored: the corpus is built in
memory at run time, and ``None`` comes back when the folder is absent (benchmarks skip).

Run on its own for the corpus's figures: ``python tests/benchmarks/real_corpus.py 10000``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _find_real_sessions() -> Path:
    """``$HERMES_REAL_SESSIONS``, else the nearest ``shared/real-sessions`` beside the checkout
    or one of its ancestors (the rule of tests/conftest.py)."""
    override = os.environ.get("HERMES_REAL_SESSIONS")
    if override:
        return Path(override)
    repo = Path(__file__).resolve().parents[2]
    for folder in repo.parents:
        candidate = folder / "shared" / "real-sessions"
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "real-sessions"


REAL_SESSIONS = _find_real_sessions()
#: Common words of agent transcripts, rotated by the copy number (copy k writes each as the
#: word k places further on): the text stays prose, and no two copies read the same.
VOCABULARY = ("file", "function", "test", "error", "value", "result", "check", "update",
              "change", "module", "line", "output", "method", "class", "field", "request")
_WORD = re.compile(r"\b(" + "|".join(VOCABULARY) + r")\b")
_NUMBER = re.compile(r"\d+")
_FILE = re.compile(r"\b([A-Za-z_][\w-]*)(\.(?:py|js|ts|tsx|md|json|txt|go|rs|yaml|yml|toml|cfg|ini|html|css|sh))\b")
_INDEX = {word: i for i, word in enumerate(VOCABULARY)}


def vary_text(text: str, k: int) -> str:
    """``text`` as copy ``k`` writes it (``k`` = 0: unchanged)."""
    if k == 0 or not text:
        return text
    text = _NUMBER.sub(lambda m: str(int(m.group()) + k) if len(m.group()) < 12 else m.group() + str(k), text)
    text = _FILE.sub(lambda m: f"{m.group(1)}_{k}{m.group(2)}", text)
    size = len(VOCABULARY)
    return _WORD.sub(lambda m: VOCABULARY[(_INDEX[m.group(1)] + k) % size], text)


def _vary(value: Any, k: int, ids: Callable[[str], str]) -> Any:
    """A JSON-like value with every string varied (bounded: transcripts are shallow)."""
    if isinstance(value, str):
        return vary_text(value, k)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("id", "call_id", "tool_call_id", "tool_use_id") and isinstance(item, str):
                out[key] = ids(item)
            else:
                out[key] = _vary(item, k, ids)
        return out
    if isinstance(value, list):
        return [_vary(item, k, ids) for item in value]
    return value


def vary_message(message: dict[str, Any], k: int) -> dict[str, Any]:
    """Copy ``k`` of ``message``: strings varied, call ids suffixed (a fresh dict)."""
    return _vary(message, k, lambda ident: f"{ident}_{k}")  # type: ignore[no-any-return]


def load_conversations(root: Path = REAL_SESSIONS) -> list[list[dict[str, Any]]] | None:
    """Every conversation of the shared sessions as chat messages, system messages left out
    (the corpus has one of its own); ``None`` when the folder is absent."""
    if not root.is_dir():
        return None
    from hermes_plugins.evaluation.command import read_conversations

    found: list[list[dict[str, Any]]] = []
    for path in sorted(root.iterdir()):
        if not path.is_file() or path.name.startswith(("README", ".")):
            continue
        for _label, messages, _model in read_conversations(path):
            kept = [m for m in messages if m.get("role") != "system"]
            if kept:
                found.append(kept)
    return found or None


def build_corpus(n: int, root: Path = REAL_SESSIONS) -> list[dict[str, Any]] | None:
    """``n`` messages (or a few more, to end on a whole conversation) of varied real
    conversations after one system message; ``None`` without the shared sessions."""
    conversations = load_conversations(root)
    if conversations is None:
        return None
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a software engineering agent."}]
    k = 0
    while len(out) < n:
        for conversation in conversations:
            out.extend(vary_message(m, k) for m in conversation)
            k += 1
            if len(out) >= n:
                break
    return out


def describe(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures of a corpus: messages, JSON bytes, bytes a message, distinct tool results."""
    size = len(json.dumps(messages, ensure_ascii=False))
    results = [json.dumps(m.get("content"), ensure_ascii=False) for m in messages if m.get("role") == "tool"]
    return {
        "messages": len(messages),
        "json_bytes": size,
        "bytes_per_message": round(size / max(len(messages), 1)),
        "tool_results": len(results),
        "distinct_tool_results": len(set(results)),
    }


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    corpus = build_corpus(count)
    print("no shared sessions found" if corpus is None else describe(corpus))
