"""Engines and histories for the archive tests (hand-written; no recorded sessions)."""

from __future__ import annotations

from typing import Any

from hermes_core import ContextEngine, hookimpl


class DropHalfEngine(ContextEngine):
    """Drops the oldest half after the first message, with no marker at all."""

    name = "drophalf"

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        return len(messages) > 4

    def compress(
        self, messages: list[dict[str, Any]], current_tokens: int | None = None,
        focus_topic: str | None = None, force: bool = False,
    ) -> list[dict[str, Any]]:
        if len(messages) <= 4:
            return messages
        cut = 1 + (len(messages) - 1) // 2
        while cut < len(messages) and messages[cut].get("role") != "user":
            cut += 1
        self.compression_count += 1
        return [messages[0], *messages[cut:]]


class CopyingEngine(ContextEngine):
    """Returns copies of every message it keeps (no identity), replacing the middle by a note."""

    name = "copying"

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        return len(messages) > 6

    def compress(
        self, messages: list[dict[str, Any]], current_tokens: int | None = None,
        focus_topic: str | None = None, force: bool = False,
    ) -> list[dict[str, Any]]:
        keep_tail = messages[-4:]
        note = {"role": "user", "content": f"[{len(messages) - 6} messages condensed]"}
        return [dict(m) for m in messages[:2]] + [note] + [dict(m) for m in keep_tail]


class TestEngines:
    @hookimpl
    def hermes_context_engines(self) -> dict[str, type[ContextEngine]]:
        return {"drophalf": DropHalfEngine, "copying": CopyingEngine}


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def history(turns: int, *, facts: dict[int, str] | None = None, secret_at: int | None = None,
            secret: str = "", tool_chars: int = 600) -> list[dict[str, Any]]:
    """A coding session: per turn a user request, a tool call, its result and a reply.

    ``facts``: turn -> a text planted in that turn's tool result; ``secret`` is planted in the
    tool result of turn ``secret_at``.
    """
    facts = facts or {}
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for t in range(1, turns + 1):
        messages.append({"role": "user", "content": f"step {t}: keep going with the refactor of module_{t}"})
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(f"call_{t}", "terminal", f'{{"command": "pytest tests/test_{t}.py"}}')]})
        body = f"run {t}: " + " ".join(f"line{t}_{i} passed" for i in range(tool_chars // 14))
        if t in facts:
            body = body[: len(body) // 2] + "\n" + facts[t] + "\n" + body[len(body) // 2:]
        if t == secret_at:
            body += f"\nexport OPENAI_API_KEY={secret}\n"
        messages.append({"role": "tool", "tool_call_id": f"call_{t}", "content": body})
        messages.append({"role": "assistant", "content": f"turn {t} done; tests pass for module_{t}"})
    return messages
