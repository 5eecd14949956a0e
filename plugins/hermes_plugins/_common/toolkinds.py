"""What a tool call does, by tool name and arguments: run a command, read, create or modify files.

The names cover the built-in toolset and the agents whose sessions we compress: Hermes Agent
(``terminal``, ``read_file``, ``write_file``, ``patch`` ...), Gemini CLI / Qwen Code
(``run_shell_command``, ``replace``, ``list_directory`` ...), Cline / Roo Code read through a
transcript reader (``execute_command``, ``write_to_file``, ``replace_in_file``, ``list_files`` ...), Claude Code (``Bash``, ``Read``,
``Edit``, ``MultiEdit``, ``Write``, ``Grep``, ``Glob``, ``NotebookEdit``), SWE-agent (``bash``,
``str_replace_editor``, ``open``, ``create``, ``edit``, ``insert``), OpenHands (``execute_bash``,
``str_replace_editor``, ``edit_file``) and Codex (``shell`` with a command list, ``apply_patch``).
A path counts only when a tool's arguments (or, for SWE-agent's path-less ``edit``, the file
header of its result) name it: never a word found somewhere in a text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

SHELL_TOOLS = frozenset({
    "terminal", "shell", "bash", "Bash", "execute_bash", "run_command", "execute_command", "exec",
    "run_shell", "local_shell", "exec_command", "run_terminal_cmd", "container.exec", "shell_command",
    "run_shell_command",  # Gemini CLI, Qwen Code
})
READ_TOOLS = frozenset({"read_file", "Read", "view", "open_file", "open", "view_file", "NotebookRead", "cat_file",
                        "read_many_files", "read_multiple_files"})
WRITE_TOOLS = frozenset({"write_file", "Write", "create_file", "create", "write", "write_to_file"})
EDIT_TOOLS = frozenset({
    "patch", "Edit", "MultiEdit", "edit_file", "str_replace", "edit", "insert", "NotebookEdit",
    "replace_in_file", "search_replace", "apply_diff",
    "replace",  # Gemini CLI's edit (file_path, old_string, new_string)
    "insert_content", "search_and_replace",  # Roo Code
})
PATCH_TOOLS = frozenset({"apply_patch"})
SEARCH_TOOLS = frozenset({"search_files", "Grep", "Glob", "grep", "find_file", "search_dir", "search_file", "glob",
                          "search_file_content", "list_directory", "list_files", "list_code_definition_names", "LS",
                          "ls"})
EDITOR_TOOLS = frozenset({"str_replace_editor", "text_editor", "str_replace_based_edit_tool"})
#: Tools whose result is data someone else wrote (files, pages, search hits), not a report of
#: what the call did.
DATA_TOOLS = READ_TOOLS | SEARCH_TOOLS | frozenset({
    "web_search", "web_extract", "WebFetch", "WebSearch", "web_read", "browser", "skill_view",
    "skills_list", "vision_analyze", "browser_navigate", "browser_snapshot", "browser_click",
    "browser_type", "browser_scroll", "browser_vision",
    "web_fetch", "google_web_search", "access_mcp_resource", "browser_action",  # Gemini CLI, Cline
})

_PATH_KEYS = ("path", "file_path", "filepath", "filename", "target_file", "notebook_path", "file", "absolute_path")
_PATCH_FILE = re.compile(r"(?m)^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$")
_DIFF_FILE = re.compile(r"(?m)^\+\+\+ (?:b/)?(\S+)")
_RESULT_FILE = re.compile(r"\[File: (\S+?) \(\d+ lines total\)\]")


def command_of(args: Mapping[str, Any]) -> str | None:
    """The shell command of a call: a string, or a Codex-style list (``bash -lc X`` gives X)."""
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        words = [str(w) for w in command]
        if len(words) >= 3 and words[0] in ("bash", "sh", "zsh", "/bin/bash", "/bin/sh") and words[1] in ("-lc", "-c"):
            return words[2]
        return shlex.join(words)
    if isinstance(command, str) and command.strip():
        return command
    return None


def path_of(args: Mapping[str, Any]) -> str | None:
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= 400:
            return value.strip()
    return None


def patch_files(text: str) -> list[tuple[str, str]]:
    """(path, "created"|"modified"|"deleted") named by a Codex ``*** Begin Patch`` or a unified diff."""
    out: list[tuple[str, str]] = []
    for match in _PATCH_FILE.finditer(text):
        if match.group(3):
            out.append((match.group(3), "created"))
            continue
        verb = {"Add": "created", "Update": "modified", "Delete": "deleted"}[match.group(1)]
        out.append((match.group(2), verb))
    if not out and "+++ " in text:
        out = [(p, "modified") for p in _DIFF_FILE.findall(text) if p != "/dev/null"]
    return out


def _patch_text(name: str, args: Mapping[str, Any]) -> str | None:
    for key in ("input", "patch", "diff"):
        value = args.get(key)
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            return value
    command = args.get("command")
    if isinstance(command, list) and len(command) >= 2 and str(command[0]) == "apply_patch":
        return str(command[1])
    return None


def file_actions(name: str, args: Mapping[str, Any], result: str = "") -> list[tuple[str, str]]:
    """(path, "read"|"created"|"modified"|"deleted") for each file a call names.

    ``created`` is a write tool's verdict; the summary turns it into "modified" when the file
    was known before.
    """
    if name in EDITOR_TOOLS:
        sub = args.get("command")
        path = path_of(args)
        if not path:
            return []
        if sub == "view":
            return [(path, "read")]
        if sub == "create":
            return [(path, "created")]
        if sub in ("str_replace", "insert", "undo_edit", "edit", "write"):
            return [(path, "modified")]
        return []
    if name in PATCH_TOOLS or (name in SHELL_TOOLS and isinstance(args.get("command"), list)):
        text = _patch_text(name, args)
        if text is not None:
            return patch_files(text)
        if name in PATCH_TOOLS:
            path = path_of(args)
            return [(path, "modified")] if path else []
        return []
    if name == "patch":  # Hermes Agent: a replace in one file, or a patch naming several
        text = _patch_text(name, args)
        if text is not None and args.get("mode") == "patch":
            return patch_files(text)
    path = path_of(args)
    if name in READ_TOOLS:
        return [(path, "read")] if path else []
    if name in WRITE_TOOLS:
        return [(path, "created")] if path else []
    if name in EDIT_TOOLS:
        if path:
            return [(path, "modified")]
        found = _RESULT_FILE.search(result[:400]) if result else None  # SWE-agent's open-file edit
        return [(found.group(1), "modified")] if found else []
    return []


def is_read_tool(name: str, args: Mapping[str, Any]) -> bool:
    """Whether a failure can only be reported by metadata, JSON status or exit code (a data
    tool's text is someone else's)."""
    return name in DATA_TOOLS or (name in EDITOR_TOOLS and args.get("command") == "view")


def is_shell_tool(name: str) -> bool:
    return name in SHELL_TOOLS
