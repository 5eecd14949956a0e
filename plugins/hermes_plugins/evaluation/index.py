"""Is a probe's key in the compacted context? One index of the context, built once.

``key in haystack`` per probe scanned the whole context once per probe: thousands of probes
over a context of a model's window (megabytes) took minutes. The context is one line of words
(whitespace collapsed); the index maps each word to where it stands. A key of two or more
words is found where its inner words stand in a row, the first word ends a context word and
the last starts one - checked at the places of the key's rarest inner word only. A key of one
word is a context word, or found by one scan (a part of a word); so is a key of two words. The answer is exactly
``key in haystack`` (the property test in tests/plugins/evaluation/test_eval_trust.py holds it to that).
"""

from __future__ import annotations

from collections import defaultdict


class ContextIndex:
    """``key in index`` is ``key in text`` for a whitespace-collapsed key and ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = text.split(" ") if text else []
        places: defaultdict[str, list[int]] = defaultdict(list)
        for at, word in enumerate(self.words):
            places[word].append(at)
        self.places = dict(places)

    def __contains__(self, key: str) -> bool:
        if not key:
            return True
        parts = key.split(" ")
        if len(parts) == 1:
            return key in self.places or key in self.text
        if len(parts) == 2:  # no inner word to anchor on: one scan
            return key in self.text
        words = self.words
        inner = parts[1:-1]
        rarest = min(range(len(inner)), key=lambda i: len(self.places.get(inner[i], ())))
        anchor = self.places.get(inner[rarest])
        if not anchor:
            return False
        offset = rarest + 1  # where the rarest inner word stands in the key
        last = len(parts) - 1
        for at in anchor:
            start = at - offset
            if start < 0 or start + last >= len(words):
                continue
            if not words[start].endswith(parts[0]) or not words[start + last].startswith(parts[-1]):
                continue
            if all(words[start + i] == parts[i] for i in range(1, last)):
                return True
        return False
