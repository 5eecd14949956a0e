"""A sliding-window engine: drop the oldest middle turns, leave a marker saying what went."""

from __future__ import annotations

from typing import Any

from hermes_core import ContextEngine, hookimpl
from hermes_core.tokens import estimate_message_tokens

MARKER_KEY = "_window_dropped"


class WindowEngine(ContextEngine):
    """Keeps the system prompt, the first user message and the newest turns that fit half the
    threshold; everything between becomes one user-visible marker message."""

    name = "window"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.threshold_percent = self.config.compression.threshold
        self.protect_first_n = self.config.compression.protect_first_n
        self.protect_last_n = self.config.compression.protect_last_n

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        head, tail = self._cut(messages)
        return head < tail

    def _cut(self, messages: list[dict[str, Any]]) -> tuple[int, int]:
        head = 1 if messages and messages[0].get("role") == "system" else 0
        if len(messages) > head and messages[head].get("role") == "user":
            head += 1
        budget = max(1, self.threshold_tokens // 2) if self.threshold_tokens else 8_000
        tail = len(messages)
        used = 0
        while tail > head + 1:
            cost = estimate_message_tokens(messages[tail - 1])
            if used + cost > budget and len(messages) - tail >= 2:
                break
            used += cost
            tail -= 1
        # The newest message always stays (its calls may be in flight), and the kept tail
        # never starts with tool results: it moves back onto the call they answer.
        tail = min(tail, len(messages) - 1)
        while tail > head and messages[tail].get("role") == "tool":
            tail -= 1
        return head, max(tail, head)

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        head, tail = self._cut(messages)
        if tail - head < 1:
            return messages
        dropped = messages[head:tail]
        roles: dict[str, int] = {}
        for message in dropped:
            roles[message.get("role", "?")] = roles.get(message.get("role", "?"), 0) + 1
        summary = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
        marker = {
            "role": "user",
            "content": (
                f"[window engine: {len(dropped)} earlier messages ({summary}) were dropped to fit "
                "the context window; they are not shown here. Continue from the messages below.]"
            ),
            MARKER_KEY: len(dropped),
        }
        kept_tail = messages[tail:]
        if kept_tail and kept_tail[0].get("role") == "user":
            marker["role"] = "assistant"
        self.compression_count += 1
        return [*messages[:head], marker, *kept_tail]


@hookimpl
def hermes_context_engines() -> dict[str, type[ContextEngine]]:
    return {"window": WindowEngine}
