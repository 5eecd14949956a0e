"""A sliding-window engine: drop the oldest middle turns, leave a marker saying what went."""

from __future__ import annotations

from typing import Any

from hermes_core.plugin import ContextEngine, content_text, estimate_message_tokens, hookimpl

MARKER_KEY = "_window_dropped"
#: Metadata that says a user-role message is not something the user asked (an agent's
#: injection, an earlier compaction summary, an in-context demonstration, our own marker).
_NOT_A_REQUEST = ("_injected", "_summary", "_demonstration", MARKER_KEY)


def is_request(message: dict[str, Any]) -> bool:
    """Whether ``message`` is a request the user typed: user role, some text, no metadata
    saying an agent or the environment wrote it (SWE-agent 0.x observations are user turns)."""
    if message.get("role") != "user" or any(message.get(key) for key in _NOT_A_REQUEST):
        return False
    return bool(content_text(message.get("content")).strip())


class WindowEngine(ContextEngine):
    """Keeps the system prompt, the first and the newest user request (the task statement and
    what is being worked on now) and the newest turns that fit half the threshold; each run of
    messages between becomes one user-visible marker message."""

    name = "window"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.threshold_percent = self.config.compression.threshold
        self.protect_first_n = self.config.compression.protect_first_n
        self.protect_last_n = self.config.compression.protect_last_n

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        pinned, tail = self._cut(messages)
        return any(i not in pinned for i in range(tail))

    def _pinned(self, messages: list[dict[str, Any]]) -> set[int]:
        """Indexes kept whatever their age: the system prompt and the first and newest request
        (a demonstration or an observation before or after them does not take their place)."""
        pinned = {0} if messages and messages[0].get("role") == "system" else set()
        first = next((i for i, m in enumerate(messages) if is_request(m)), None)
        if first is not None:
            pinned.add(first)
            pinned.add(next(i for i in range(len(messages) - 1, first - 1, -1) if is_request(messages[i])))
        return pinned

    def _cut(self, messages: list[dict[str, Any]]) -> tuple[set[int], int]:
        """The pinned indexes and where the kept tail starts."""
        pinned = self._pinned(messages)
        head = 0
        while head in pinned:
            head += 1
        budget = max(1, self.threshold_tokens // 2) if self.threshold_tokens else 8_000
        used = sum(estimate_message_tokens(messages[i]) for i in pinned)
        tail = len(messages)
        while tail > head + 1:
            cost = 0 if tail - 1 in pinned else estimate_message_tokens(messages[tail - 1])
            if used + cost > budget and len(messages) - tail >= 2:
                break
            used += cost
            tail -= 1
        # The newest message always stays (its calls may be in flight), and the kept tail
        # never starts with tool results: it moves back onto the call they answer.
        tail = min(tail, len(messages) - 1)
        while tail > head and messages[tail].get("role") == "tool":
            tail -= 1
        return pinned, max(tail, head)

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        pinned, tail = self._cut(messages)
        out: list[dict[str, Any]] = []
        run: list[dict[str, Any]] = []
        dropped = 0
        for index, message in enumerate(messages):
            if index < tail and index not in pinned:
                run.append(message)
                continue
            if run:
                out.append(self._marker(run, message))
                dropped += len(run)
                run = []
            out.append(message)
        if not dropped:
            return messages
        self.compression_count += 1
        return out

    @staticmethod
    def _marker(dropped: list[dict[str, Any]], following: dict[str, Any]) -> dict[str, Any]:
        roles: dict[str, int] = {}
        for message in dropped:
            roles[message.get("role", "?")] = roles.get(message.get("role", "?"), 0) + 1
        summary = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
        return {
            # A user message right after would make two user turns in a row.
            "role": "assistant" if following.get("role") == "user" else "user",
            "content": (
                f"[window engine: {len(dropped)} earlier messages ({summary}) were dropped to fit "
                "the context window; they are not shown here. Continue from the messages below.]"
            ),
            MARKER_KEY: len(dropped),
        }


@hookimpl
def hermes_context_engines() -> dict[str, type[ContextEngine]]:
    return {"window": WindowEngine}
