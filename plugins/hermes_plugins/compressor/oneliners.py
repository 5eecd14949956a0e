"""One informative line per old tool result (§7.2): what was done, not what came back.

``summarize_tool_result`` keeps the facts a later turn may need (the command and its exit code,
the file and where it was read, the query) and drops the bulky output. It runs once per demoted
result over long histories, so it parses only the (small) arguments and never scans the whole
output except to count lines for the tools whose line says so. It never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any, cast

from hermes_core.plugin import redact
from hermes_plugins._common import failures as _failures
from hermes_plugins._common.failures import (
    CACHE_MIN_CHARS,
    NO_RESULT,
    Failure,
    _failure_of,
    failure_of,
    no_result,
    remember,
    suffix,
)
from hermes_plugins._common.toolkinds import DATA_TOOLS, EDITOR_TOOLS, command_of, patch_files, path_of

_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _scan_loads(text: str) -> Any:
    return _SCAN(text, 0)[0]


_fast_loads: Callable[[str], Any]
try:  # optional: not a dependency, only faster when present
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover - depends on the environment
    _fast_loads = _scan_loads
else:
    _fast_loads = _orjson_loads
#: Outputs up to this size get an exact line count; longer ones an estimate from samples.
EXACT_LINES_MAX = 16_384
LINE_SAMPLE = 4_096
_NL = "\n"
#: An exit code is ``["']?exit[_ ]?code["']?\s*[:=]\s*(-?\d+)`` (case-insensitive) at a found
#: "exit"/"Exit"/"EXIT" or one character before it; the quote is optional and the word is
#: already known, so this is what has to follow the word (one regex call instead of two).
_AFTER_EXIT = re.compile(r"""[_ ]?code["']?\s*[:=]\s*(-?\d+)""", re.IGNORECASE)
_TOTAL_COUNT = re.compile(r""""total_count"\s*:\s*(\d+)""")
#: Result texts that already are one of our short lines (or an older engine's placeholder).
_ALREADY_SHORT_PREFIXES = (
    "[duplicate tool output",
    "[screenshot removed",
    "[screenshot dropped",
    "[Old tool output cleared",
)


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; anything unparsable or not an object gives ``{}``."""
    if type(arguments) is str:  # the usual case first: ABC isinstance checks are slow
        if not arguments:
            return {}
        try:
            # This runs once per demoted result: orjson when installed (~4x json.loads), else
            # the stdlib's C scanner without json.loads' whitespace handling (~1.7x).
            value = _fast_loads(arguments)
        except (StopIteration, ValueError, RecursionError):
            try:
                value = json.loads(arguments)
            except (ValueError, RecursionError):
                return {}
        return value if type(value) is dict else {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str):
        return parse_arguments(str(arguments))
    return {}


def looks_demoted(content: str) -> bool:
    """Whether a result text already is a one-line summary or a placeholder (skip it)."""
    if not content.startswith("["):
        return False
    if content.startswith(_ALREADY_SHORT_PREFIXES):
        return True
    # Failure lines carry up to 300 characters of error text after the usual line.
    return len(content) < 800 and "\n" not in content and (
        " chars" in content or " lines output" in content or " matches" in content or " lines;" in content
    )


def _clip(text: str, limit: int, keep: int | None = None) -> str:
    if len(text) <= limit and "\n" not in text and "  " not in text:
        return text  # the usual case, decided without building anything
    # redacted before its lines are joined and it is clipped (the summary is redacted again as a
    # whole, too late for these): ``name: value`` is a pair on its own line only, and a clipped
    # key no longer has a key's shape
    text = redact(text)
    text = " ".join(text.split()) if ("\n" in text or "  " in text) else text
    if len(text) <= limit:
        return text
    return text[: keep if keep is not None else limit - 3] + "..."


def _lines(content: str) -> str:
    """Line count of an output: exact up to 16 KB, an estimate ("~N") beyond.

    Counting newlines scans every byte (~1 GB/s); over long histories of big outputs that
    scan dominated the whole free pass, while "~1,200 lines" says as much as "1,187 lines".
    """
    # isspace() stops at the first visible character; strip() would copy the whole output.
    if not content or content.isspace():
        return "0"
    size = len(content)
    # ``in``/``find`` of one character run at memchr speed, several times faster than
    # ``count``; many outputs (JSON-encoded ones) have no raw newline at all.
    if size <= EXACT_LINES_MAX:
        if _NL not in content:
            return "1"
        return f"{content.count(_NL) + 1:,}"
    if content.find(_NL, 0, LINE_SAMPLE) == -1 and content.find(_NL, size - LINE_SAMPLE) == -1:
        return "~1"
    sampled = content.count(_NL, 0, LINE_SAMPLE) + content.count(_NL, size - LINE_SAMPLE)
    estimate = round(sampled * size / (2 * LINE_SAMPLE)) + 1
    return f"~{estimate:,}"


def _exit_code(content: str) -> str:
    # Terminal results end with their exit code: look near the end first, then anywhere.
    # find/rfind run at C speed; the regex only ever runs where "exit" occurs.
    tail_start = max(0, len(content) - 400)
    for word in ("exit", "Exit", "EXIT"):
        at = content.rfind(word, tail_start)
        while at != -1:
            match = _AFTER_EXIT.match(content, at + 4)
            if match:
                return match.group(1)
            at = content.rfind(word, tail_start, at)
    if tail_start:
        # "exit" and "Exit" both contain "xit": one scan rules both out on outputs that
        # never mention an exit code (a full scan per word is most of this function's cost).
        words = ("exit", "Exit", "EXIT") if content.find("xit", 0, tail_start + 4) != -1 else ("EXIT",)
        for word in words:
            at = content.find(word, 0, tail_start + 4)
            while at != -1:
                match = _AFTER_EXIT.match(content, at + 4)
                if match:
                    return match.group(1)
                at = content.find(word, at + 4, tail_start + 4)
    return "?"


def _s(value: Any) -> str:
    return value if type(value) is str else str(value)


def _arg(args: dict[str, Any], *keys: str, default: str = "?") -> str:
    """The first argument among ``keys`` that is set: ``False`` and ``0`` print as themselves;
    only a missing, ``None`` or empty-string value gives ``default``."""
    for key in keys:
        value = args.get(key)
        if value is None or value == "" and type(value) is str:
            continue
        return value if type(value) is str else str(value)
    return default


# The formatters below inline ``_s`` (``x if type(x) is str else str(x)``): they run once per
# demoted result and a call per argument was a good part of a line's cost.


def _terminal(name: str, args: dict[str, Any], content: str) -> str:
    command = args.get("command", "")
    if type(command) is not str:
        command = command_of(args) or str(command)
    command = _clip(command, 80, 77)
    return f"[{name}] ran `{command}` -> exit {_exit_code(content)}, {_lines(content)} lines output"


def _read_file(name: str, args: dict[str, Any], content: str) -> str:
    path = _arg(args, "path", "file_path", "filename")
    offset = _arg(args, "offset", "line_number", default="1")
    return f"[{name}] read {path} from line {offset} ({len(content):,} chars)"


def _write_file(name: str, args: dict[str, Any], content: str) -> str:
    path = _arg(args, "path", "file_path", "filename")
    written = args.get("content", args.get("file_text"))
    lines = _lines(written) if isinstance(written, str) else "?"
    return f"[{name}] wrote to {path} ({lines} lines)"


def _edit(name: str, args: dict[str, Any], content: str) -> str:
    path = _arg(args, "file_path", "path", "notebook_path")
    edits = args.get("edits")
    if isinstance(edits, list):
        return f"[{name}] {len(edits)} edits in {path}"
    every = " (all occurrences)" if args.get("replace_all") is True else ""
    old = args.get("old_string")
    size = f", {_lines(old)} lines replaced" if isinstance(old, str) and old else ""
    return f"[{name}] edited {path}{every}{size}"


def _editor(name: str, args: dict[str, Any], content: str) -> str:
    """SWE-agent / OpenHands / Anthropic ``str_replace_editor``: the sub-command says it all."""
    command = _arg(args, "command")
    path = _arg(args, "path")
    if command == "view":
        shown = args.get("view_range")
        where = f" lines {shown[0]}-{shown[-1]}" if isinstance(shown, list) and shown else ""
        return f"[{name}] view {path}{where} ({len(content):,} chars)"
    if command == "create":
        text = args.get("file_text")
        return f"[{name}] created {path} ({_lines(text) if isinstance(text, str) else '?'} lines)"
    if command == "insert":
        return f"[{name}] insert in {path} after line {_arg(args, 'insert_line')}"
    return f"[{name}] {command} in {path} ({len(content):,} chars result)"


def _grep(name: str, args: dict[str, Any], content: str) -> str:
    pattern = _clip(_arg(args, "pattern", "query", default=""), 60)
    path = _arg(args, "path", "glob", default=".")
    found = content[:40]
    if found.startswith("Found ") and found[6:7].isdigit():
        count = found[6:].split(" ", 1)[0]
    elif content.startswith(("No files found", "No matches found")):
        count = "0"
    else:
        count = _lines(content)
    return f"[{name}] search for '{pattern}' in {path} -> {count} matches"


def _todos(name: str, args: dict[str, Any], content: str) -> str:
    todos = args.get("todos")
    if not isinstance(todos, list):
        return f"[{name}] updated task list"
    states = [t.get("status") for t in todos if isinstance(t, dict)]
    current = next((t for t in todos if isinstance(t, dict) and t.get("status") == "in_progress"), None)
    now = ""
    if current is not None:
        now = f"; now: {_clip(_arg(current, 'activeForm', 'content', default=''), 80)}"
    return (f"[{name}] {len(todos)} todos ({states.count('completed')} done, "
            f"{states.count('in_progress')} in progress){now}")


def _task(name: str, args: dict[str, Any], content: str) -> str:
    kind = _arg(args, "subagent_type", default="")
    what = _clip(_arg(args, "description", "prompt", default=""), 60, 57)
    kind = f" {kind}" if kind else ""
    return f"[{name}]{kind} '{what}' ({len(content):,} chars result)"


def _apply_patch(name: str, args: dict[str, Any], content: str) -> str:
    text = args.get("input", args.get("patch"))
    if not isinstance(text, str):
        command = args.get("command")
        text = str(command[1]) if isinstance(command, list) and len(command) > 1 else ""
    files = [f"{path} ({verb})" for path, verb in patch_files(text)]
    shown = ", ".join(files[:3]) + (f" (+{len(files) - 3} more)" if len(files) > 3 else "")
    return f"[{name}] patched {shown or '?'} ({len(content):,} chars result)"


def _shell(name: str, args: dict[str, Any], content: str) -> str:
    """Codex ``shell`` (a command list) - an ``apply_patch`` through it is a patch, not a command."""
    command = args.get("command")
    if isinstance(command, list) and command and str(command[0]) == "apply_patch":
        return _apply_patch(name, args, content)
    return _terminal(name, args, content)


def _submit(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] submitted the work ({len(content):,} chars result)"


def _finish(name: str, args: dict[str, Any], content: str) -> str:
    message = _clip(_arg(args, "message", "summary", "final_thought", default=""), 80, 77)
    return f"[{name}] finished: '{message}'"


def _think(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] '{_clip(_arg(args, 'thought', default=''), 60, 57)}'"


def _code_cell(name: str, args: dict[str, Any], content: str) -> str:
    code = _arg(args, "code", default="").replace("\n", " ")
    shown = code[:60] + ("..." if len(code) > 60 else "")
    return f"[{name}] `{shown}` ({_lines(content)} lines output)"


def _glob(name: str, args: dict[str, Any], content: str) -> str:
    pattern = _clip(_arg(args, "pattern", "file_name", default=""), 60)
    where = _arg(args, "path", "dir", default=".")
    count = "0" if content.startswith("No files found") else _lines(content)
    return f"[{name}] files matching '{pattern}' in {where} -> {count} matches"


def _search_files(name: str, args: dict[str, Any], content: str) -> str:
    target = _arg(args, "target", default="content")
    pattern = _clip(_arg(args, "pattern", "query", default=""), 60)
    path = _arg(args, "path", default=".")
    # Search results carry their count at the start or the end of the JSON, never only inside.
    at = content.find('"total_count"', 0, 400)
    if at == -1:
        at = content.rfind('"total_count"', max(0, len(content) - 400))
    match = _TOTAL_COUNT.match(content, at) if at != -1 else None
    count = match.group(1) if match else "?"
    return f"[{name}] {target} search for '{pattern}' in {path} -> {count} matches"


def _patch(name: str, args: dict[str, Any], content: str) -> str:
    mode = _arg(args, "mode", default="replace")
    path = _arg(args, "path", "file_path")
    return f"[{name}] {mode} in {path} ({len(content):,} chars result)"


def _browser(name: str, args: dict[str, Any], content: str) -> str:
    if args.get("url"):
        where = f" {_clip(_s(args['url']), 120)}"
    elif args.get("ref") is not None:
        where = f" ref={_s(args['ref'])}"
    elif isinstance(args.get("code"), str):  # OpenHands' browser takes browsergym code
        where = f" `{_clip(args['code'], 80, 77)}`"
    else:
        where = ""
    return f"[{name}]{where} ({len(content):,} chars)"


def _web_search(name: str, args: dict[str, Any], content: str) -> str:
    query = _clip(_arg(args, "query", default=""), 80)
    return f"[{name}] query='{query}' ({len(content):,} chars result)"


def _web_extract(name: str, args: dict[str, Any], content: str) -> str:
    urls = args.get("urls") or args.get("url") or []
    if not isinstance(urls, list):
        urls = [urls]
    first: Any = urls[0] if urls else "?"
    if isinstance(first, Mapping):
        first = first.get("url") or first.get("href") or "?"
    more = f" (+{len(urls) - 1} more)" if len(urls) > 1 else ""
    return f"[{name}] {_clip(_s(first), 120)}{more} ({len(content):,} chars)"


def _delegate(name: str, args: dict[str, Any], content: str) -> str:
    goal = _clip(_arg(args, "goal", "task", default=""), 60, 57)
    return f"[{name}] '{goal}' ({len(content):,} chars result)"


def _execute_code(name: str, args: dict[str, Any], content: str) -> str:
    return _code_cell(name, args, content)


def _skill(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] name={_arg(args, 'name')} ({len(content):,} chars)"


def _vision(name: str, args: dict[str, Any], content: str) -> str:
    question = _arg(args, "question", default="")[:50]
    return f"[{name}] '{question}' ({len(content):,} chars)"


def _memory(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] {_arg(args, 'action')} on {_arg(args, 'target')}"


def _fixed(phrase: str) -> Callable[[str, dict[str, Any], str], str]:
    return lambda name, args, content: f"[{name}] {phrase}"


def _tts(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] generated audio ({len(content):,} chars)"


def _cronjob(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] {_arg(args, 'action')}"


def _process(name: str, args: dict[str, Any], content: str) -> str:
    return f"[{name}] {_arg(args, 'action')} session={_arg(args, 'session_id', 'session')}"


def _generic(name: str, args: dict[str, Any], content: str) -> str:
    shown = ""
    for key, value in islice(args.items(), 2):
        shown += f" {key}={_clip(value if type(value) is str else str(value), 40)}"
    return f"[{name}]{shown} ({len(content):,} chars result)"


_BY_TOOL: dict[str, Callable[[str, dict[str, Any], str], str]] = {
    "terminal": _terminal,
    "read_file": _read_file,
    "write_file": _write_file,
    "search_files": _search_files,
    "patch": _patch,
    "web_search": _web_search,
    "web_extract": _web_extract,
    "delegate_task": _delegate,
    "execute_code": _execute_code,
    "skill_view": _skill,
    "skills_list": _skill,
    "skill_manage": _skill,
    "vision_analyze": _vision,
    "memory": _memory,
    "todo": _fixed("updated task list"),
    "clarify": _fixed("asked user a question"),
    "text_to_speech": _tts,
    "cronjob": _cronjob,
    "process": _process,
}
for _browser_tool in ("navigate", "click", "snapshot", "type", "scroll", "vision"):
    _BY_TOOL[f"browser_{_browser_tool}"] = _browser
# Other agents' tools (Claude Code, SWE-agent, OpenHands, Codex): their own lines, not the generic.
_BY_TOOL.update({
    "Bash": _terminal, "bash": _terminal, "execute_bash": _terminal, "run_command": _terminal,
    "exec_command": _terminal, "local_shell": _terminal, "shell": _shell, "container.exec": _shell,
    "Read": _read_file, "open": _read_file, "view_file": _read_file, "NotebookRead": _read_file,
    "Write": _write_file, "create": _write_file, "create_file": _write_file,
    "Edit": _edit, "MultiEdit": _edit, "NotebookEdit": _edit, "edit_file": _edit,
    "str_replace_editor": _editor, "text_editor": _editor, "str_replace_based_edit_tool": _editor,
    "Grep": _grep, "search_dir": _grep, "search_file": _grep, "grep": _grep,
    "Glob": _glob, "find_file": _glob,
    "TodoWrite": _todos, "Task": _task, "apply_patch": _apply_patch,
    "submit": _submit, "finish": _finish, "think": _think,
    "execute_ipython_cell": _code_cell, "browser": _browser,
    "WebFetch": _browser, "WebSearch": _web_search, "web_read": _browser,
})


#: Formatters whose every line names the tool first, carries a ``looks_demoted`` marker
#: (" chars", " lines output", " matches") and no "; ", and whose other parts come from the
#: arguments or are numbers read from the output (see ``plain_line_certain``).
_PLAIN_FORMATTERS = frozenset({
    _read_file, _task, _apply_patch, _submit, _patch, _browser, _web_search, _web_extract,
    _delegate, _skill, _vision, _tts, _generic, _code_cell, _execute_code, _glob,
})
#: The tool names whose formatter is one of those.
_PLAIN_TOOLS = frozenset(name for name, formatter in _BY_TOOL.items() if formatter in _PLAIN_FORMATTERS)
#: A call whose arguments and name are at most this long gives a line under 800 characters
#: (the formatters add under 200: their words and two numbers).
_PLAIN_CALL_MAX = 600


def plain_line_certain(name: str, arguments: Any, args: Mapping[str, Any] | None = None) -> bool:
    """Whether ``tool_line`` for a *successful* result of this call is certain to read as one
    of our one-liners (``[name] ...``, ``looks_demoted``, one line under 800 characters, no
    "; "), whatever the output - decided from the call alone, without building the line.

    ``args``: the parsed ``arguments`` (parsed here when not given, and only if needed).
    Arguments without a backslash hold no escaped newline and parse to strings no longer than
    their text; with top-level values that are strings, integers, booleans or null, no part of
    the line is longer than the arguments; and without ";" no part of it holds "; ". A call that
    does not qualify is not a plain line, only not a certain one.
    """
    return plain_line_name(name) and plain_line_arguments(name, arguments, args)


def plain_line_name(name: str) -> bool:
    """The name's part of ``plain_line_certain`` (a summary decides it once per tool name):
    a formatter of the plain kind takes it - the plain ones listed, and any unlisted (the
    generic line) - and the name holds nothing a line must not."""
    return (name in _PLAIN_TOOLS or name not in _BY_TOOL) and not (
        ";" in name or "\n" in name or "MEDIA:" in name or name.startswith("duplicate"))


def plain_line_arguments(name: str, arguments: Any, args: Mapping[str, Any] | None = None) -> bool:
    """The arguments' part of ``plain_line_certain`` (for a name ``plain_line_name`` takes)."""
    if type(arguments) is not str or len(arguments) + len(name) > _PLAIN_CALL_MAX:
        return False
    if ";" in arguments or "\\" in arguments or "MEDIA:" in arguments:
        return False
    for value in (parse_arguments(arguments) if args is None else args).values():
        if type(value) not in _SIMPLE_TYPES:
            return False
    return True


#: The value types of arguments a plain line quotes as they are (exact types: no subclasses).
_SIMPLE_TYPES = frozenset({str, int, bool, type(None)})


def no_result_line(name: str, args: Mapping[str, Any]) -> str:
    """The line of a call whose result was never recorded: what it asked, and that nothing came
    back - not a failure (no evidence) and not a success (issue 29)."""
    command = command_of(args)
    if command:
        what = f" ran `{_clip(command, 80, 77)}`"
    else:
        path = path_of(args)
        what = f" {_clip(path, 120)}" if path else ""
        if not what:
            for key, value in islice(args.items(), 2):
                what += f" {key}={_clip(value if type(value) is str else str(value), 40)}"
    return f"[{name}]{what} — {NO_RESULT}"


def _failed_line(name: str, args: dict[str, Any], content: str, is_error: Any, line: str) -> str:
    """``line`` with what went wrong appended when the result failed (issue 13), else ``line``."""
    # Data tools return other people's text (a file, a web page, search hits): an "Error:" line
    # in it says nothing about the call; only metadata, JSON status and exit codes do.
    reads = name in DATA_TOOLS or (name in EDITOR_TOOLS and args.get("command") == "view")
    failure = failure_of(content, is_error=is_error, reads=reads)
    return line if failure is None else _with_failure(line, failure)


def _with_failure(line: str, failure: Failure) -> str:
    """A one-liner with the exit code and the error text of ``failure`` (a failed result's)."""
    if failure.code is not None and " -> exit ?," in line:
        line = line.replace(" -> exit ?,", f" -> exit {failure.code},", 1)
    if line.endswith(" lines output"):
        line = line[: -len(" output")]
    elif failure.code is not None and " -> exit " not in line:
        line += f" -> exit {failure.code}"
    # The error text is quoted from the result: mask secrets as every other copy is masked.
    return line + redact(suffix(failure))


def summarize_tool_result(tool_name: str | None, arguments: Any, content: Any, is_error: Any = False) -> str:
    """One line describing a tool call and its result; ``[<tool>] (<N> chars result)`` on error.

    A failed result (see ``failures``) keeps its exit code, error lines and ``file:line``.
    """
    name = tool_name or "unknown"
    text = content if type(content) is str else ("" if content is None else str(content))
    try:
        args = parse_arguments(arguments)
        if no_result(text):
            return no_result_line(name, args)
        return _failed_line(name, args, text, is_error, _BY_TOOL.get(name, _generic)(name, args, text))
    except Exception:  # noqa: BLE001 - a summary line must never break compression
        return f"[{name}] ({len(text):,} chars result)"


def tool_line(name: Any, arguments: Any, content: str, is_error: Any = False) -> str:
    """``summarize_tool_result`` for the free passes, which call it once per old result.

    The caller guarantees a truthy ``name`` and a ``str`` content; this saves the wrapper
    layers of the general form (same line, same fallback). Lines of results long enough for
    their verdict to be remembered are remembered with it (see ``failures.remember``),
    keyed by the call's name, arguments and error flag: immutable arguments only (a dict may
    change in place). The memo entry is read once and written once per line: a first pass
    judges thousands of results, and the separate look-ups of the verdict and of the line
    cost as much as formatting it.
    """
    if type(arguments) is not str and arguments is not None:
        return _tool_line(name, arguments, content, is_error)
    key = (name, arguments, is_error)
    entry = _failures.memo_entry(content)
    if entry[0] is content:
        if entry[3] == key:
            return cast(str, entry[4])  # a line is stored with every key (failures.remember)
    elif len(content) < CACHE_MIN_CHARS:
        return _tool_line(name, arguments, content, is_error)
    try:
        args = parse_arguments(arguments)
        line = _BY_TOOL.get(name, _generic)(name, args, content)
        reads = name in DATA_TOOLS or (name in EDITOR_TOOLS and args.get("command") == "view")
        flags = (2 if is_error else 0) | (1 if reads else 0)
        if entry[0] is content and entry[1] == flags:
            failure = entry[2]
        else:
            failure = _failure_of(content, is_error, reads)
        if failure is not None:
            line = _with_failure(line, failure)
    except Exception:  # noqa: BLE001 - a summary line must never break compression
        return f"[{name}] ({len(content):,} chars result)"
    remember(content, flags, failure, key, line, entry[0] is content)
    return line


def line_with_verdict(name: str, args: dict[str, Any], content: str, failure: Failure | None) -> str | None:
    """The line ``tool_line`` builds for a result whose verdict is ``failure`` (``args``: the
    parsed arguments), without the memo; ``None`` where ``tool_line`` would give its fallback
    (a formatter that raised), which it does not remember."""
    try:
        line = _BY_TOOL.get(name, _generic)(name, args, content)
        return line if failure is None else _with_failure(line, failure)
    except Exception:  # noqa: BLE001 - the caller builds the line the general way
        return None


def remembered_tool_line(name: Any, arguments: Any, content: str, is_error: Any = False) -> str | None:
    """The line ``tool_line`` would give when it is remembered, else ``None`` (no work done)."""
    if type(arguments) is not str and arguments is not None:
        return None
    return _failures.remembered_line(content, (name, arguments, is_error))


def _tool_line(name: Any, arguments: Any, content: str, is_error: Any) -> str:
    try:
        args = parse_arguments(arguments)
        if content[:1] == "[" and no_result(content):
            return no_result_line(name, args)
        return _failed_line(name, args, content, is_error, _BY_TOOL.get(name, _generic)(name, args, content))
    except Exception:  # noqa: BLE001 - a summary line must never break compression
        return f"[{name}] ({len(content):,} chars result)"


def exit_code_of(content: str) -> str:
    """The exit code a terminal-like result reports, or ``"?"``."""
    try:
        return _exit_code(content)
    except Exception:  # noqa: BLE001
        return "?"
