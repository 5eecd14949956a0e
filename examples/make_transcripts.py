"""Generate the example long-session transcripts in ``examples/transcripts/`` (deterministic).

    python examples/make_transcripts.py          # rewrite the files
    python examples/make_transcripts.py --check  # exit 1 if a file differs from what it would write

* ``coding_session.json`` - ``{"system", "tools", "messages"}``: a 60-turn coding session with
  tool loops (one batch of 12 parallel calls), replayed turn by turn.
* ``support_chat.json`` - a plain message array whose first message is the system prompt: a
  120-turn conversation without tools.
* ``compressed_session.json`` - ``{"requests": [...]}``: a request log (each entry either
  ``append``s to the previous request's messages or gives all its ``messages``) of a session that is
  compressed twice (once with memory written since the start, so the rebuilt system prompt
  differs; once without), and whose MCP tools come back in another order after a reconnect.

Everything comes from a seeded ``random.Random``: the same script writes the same bytes.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "transcripts"

WORDS = (  # noqa: SIM905 - prose is easier to edit than a list of quoted words
    "agent cache prefix token window summary memory skill tool result request session prompt "
    "context history compress budget stable byte layout provider model engine plugin hook "
    "config file path line error value index query search write read update build test run "
    "check parse format output input stream chunk batch queue worker thread lock state event "
    "handler router schema field record table column row key map list set graph node edge "
    "user project module package import class function method return raise yield async await"
).split()

TOOL_NAMES = (
    "read_file", "write_file", "patch", "search_files", "terminal", "web_search", "web_extract",
    "memory", "skills_list", "skill_view", "todo", "session_search", "browser_navigate",
    "browser_snapshot", "vision_analyze",
)


def sentence(rng: random.Random, low: int = 6, high: int = 18) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def code_block(rng: random.Random, lines: int) -> str:
    out = []
    for number in range(lines):
        name = "_".join(rng.sample(WORDS, 2))
        out.append(f"    {name} = {rng.choice(WORDS)}({rng.randint(0, 999)})  # line {number}")
    return "def " + rng.choice(WORDS) + "_" + rng.choice(WORDS) + "():\n" + "\n".join(out)


def tool_result(rng: random.Random, name: str) -> str:
    size = int(200 * (30 ** rng.random()))  # 200 B .. 6 KB, log-uniform
    kind = rng.random()
    if kind < 0.4:
        text = code_block(rng, max(2, size // 60))
    elif kind < 0.7:
        rows = [{"path": f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py", "line": rng.randint(1, 900),
                 "match": sentence(rng, 3, 8)} for _ in range(max(1, size // 90))]
        text = json.dumps({"tool": name, "results": rows}, indent=1)
    else:
        text = paragraph(rng, max(1, size // 100))
    return text[:size] if len(text) > size else text


def tool_definitions(rng: random.Random) -> list[dict[str, Any]]:
    tools = []
    for name in TOOL_NAMES:
        props = {
            f"{rng.choice(WORDS)}_{i}": {"type": rng.choice(["string", "integer", "boolean"]),
                                         "description": sentence(rng, 5, 12)}
            for i in range(rng.randint(2, 5))
        }
        tools.append({
            "type": "function",
            "function": {
                "name": name,
                "description": paragraph(rng, rng.randint(2, 5)),
                "parameters": {"type": "object", "properties": props, "required": sorted(props)[:1]},
            },
        })
    return tools


def system_prompt(rng: random.Random, memory_entries: list[str]) -> str:
    parts = [
        "You are Hermes, an agent that works in the user's project. " + paragraph(rng, 6),
        "Guidance: " + paragraph(rng, 18),
        "## Skills\n" + "\n".join(
            f"- {rng.choice(WORDS)}-{rng.choice(WORDS)}: {sentence(rng, 5, 9)}" for _ in range(60)
        ),
        "Environment: Linux, home /home/dev, cwd /home/dev/project. " + paragraph(rng, 3),
        "# Project context (AGENTS.md)\n" + paragraph(rng, 30),
    ]
    if memory_entries:
        parts.append("MEMORY (your notes):\n" + "\n§\n".join(memory_entries))
    parts.append("Conversation started: Monday, March 02, 2026 (UTC)\nModel: claude-sonnet-4\nProvider: anthropic")
    return "\n\n".join(parts)


def call(rng: random.Random, counter: list[int], name: str) -> dict[str, Any]:
    counter[0] += 1
    args = {rng.choice(WORDS): rng.choice(WORDS) for _ in range(rng.randint(1, 3))}
    args["path"] = f"src/{rng.choice(WORDS)}.py"
    return {
        "id": f"call_{counter[0]:04d}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},  # key order as the model wrote it
    }


def tool_turn(rng: random.Random, counter: list[int], calls: int) -> list[dict[str, Any]]:
    batch = [call(rng, counter, rng.choice(TOOL_NAMES)) for _ in range(calls)]
    messages: list[dict[str, Any]] = [{
        "role": "assistant",
        "content": sentence(rng) if rng.random() < 0.5 else "",
        "tool_calls": batch,
    }]
    for c in batch:
        messages.append({
            "role": "tool",
            "tool_call_id": c["id"],
            "content": tool_result(rng, c["function"]["name"]),
        })
    return messages


def user_turn(rng: random.Random, counter: list[int], *, big_batch: bool = False) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": paragraph(rng, rng.randint(1, 4))}]
    loops = rng.choice([0, 1, 1, 2, 2, 3, 4])
    for loop in range(loops):
        calls = 12 if big_batch and loop == 0 else rng.choice([1, 1, 1, 2, 3])
        messages.extend(tool_turn(rng, counter, calls))
    messages.append({"role": "assistant", "content": paragraph(rng, rng.randint(1, 5))})
    return messages


def coding_session() -> dict[str, Any]:
    rng = random.Random(9001)
    counter = [0]
    messages: list[dict[str, Any]] = []
    for turn in range(60):
        messages.extend(user_turn(rng, counter, big_batch=turn == 25))
    return {"system": system_prompt(rng, ["User prefers small commits."]), "tools": tool_definitions(rng),
            "messages": messages}


def support_chat() -> list[dict[str, Any]]:
    rng = random.Random(9002)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(rng, [])}]
    for _ in range(120):
        messages.append({"role": "user", "content": paragraph(rng, rng.randint(1, 3))})
        messages.append({"role": "assistant", "content": paragraph(rng, rng.randint(2, 6))})
    return messages


def _summary(rng: random.Random, dropped: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": "[CONTEXT SUMMARY - reference only, not instructions] "
        f"{dropped} earlier messages were summarised. " + paragraph(rng, 12),
        "_compressed_summary": True,
    }


def compressed_session() -> dict[str, Any]:
    rng = random.Random(9003)
    counter = [0]
    memory = ["User prefers small commits."]
    initial_tools = tools = tool_definitions(rng)
    initial_system = system_prompt(random.Random(77), memory)
    requests: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    pending: dict[str, Any] = {}  # what the next request changes (system, tools, history)
    sent = [0]  # how much of ``history`` the last request carried

    def record(new_messages: list[dict[str, Any]]) -> None:
        for index, message in enumerate(new_messages):
            history.append(message)
            ends_batch = message["role"] == "tool" and (
                index + 1 == len(new_messages) or new_messages[index + 1]["role"] != "tool"
            )
            if message["role"] == "user" or ends_batch:
                if pending.pop("rewritten", False):
                    entry = {**pending, "messages": list(history)}
                else:
                    entry = {**pending, "append": history[sent[0]:]}
                requests.append(entry)
                sent[0] = len(history)
                pending.clear()

    for turn in range(70):
        if turn == 20:
            # An MCP server reconnects and lists its tools in another order: same set, so the
            # canonical payload keeps its bytes.
            tools = list(reversed(tools))
            pending["tools"] = tools
        if turn == 30:
            memory.append("Project uses uv; run tests with `uv run pytest`.")  # on disk only
        if turn in (40, 58):
            keep = history[-6:]
            while keep and keep[0]["role"] == "tool":
                keep = keep[1:]
            dropped = len(history) - len(keep)
            history[:] = [_summary(rng, dropped), *keep]
            pending["rewritten"] = True
            # The compression rebuilds the system prompt: the first time it shows the memory
            # written meanwhile; the second time nothing changed, so only the history differs.
            pending["system"] = system_prompt(random.Random(77), memory)
        record(user_turn(rng, counter))
    return {"system": initial_system, "tools": initial_tools, "requests": requests}


def render() -> dict[str, str]:
    def dump(value: Any) -> str:
        return json.dumps(value, indent=1, ensure_ascii=False) + "\n"

    return {
        "coding_session.json": dump(coding_session()),
        "support_chat.json": dump(support_chat()),
        "compressed_session.json": dump(compressed_session()),
    }


def main(argv: list[str]) -> int:
    files = render()
    if "--check" in argv:
        stale = [name for name, text in files.items()
                 if not (OUT / name).exists() or (OUT / name).read_text(encoding="utf-8") != text]
        for name in stale:
            print(f"stale: {OUT / name}", file=sys.stderr)
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote {OUT / name} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
