"""Files an agent edits through text, not through a tool call's arguments (issue 29).

Text-editing agents write their edits into the reply and the harness applies them; shell agents
write files with the shell. Shared by the compressor's summary ("Files") and ``eval``'s file
probes, so both see the same files. Each finding is ``(path, verb, how)``: ``verb`` is
``"created"``, ``"modified"`` or ``"deleted"`` (``"read"`` for the XML tools that read), ``how``
names the form it was found in.

In a reply's text (``text_edits``):

* Aider's SEARCH/REPLACE blocks: ``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE``, the file
  named on one of the (up to 3) lines before the block, over its opening fence; a block with no
  name belongs to the file named before it (Aider's own rule);
* Aider's whole-file blocks: a line holding only a path, then a fenced block;
* unified diffs (Aider's udiff, ``git diff``): a ``--- a/x`` line, then ``+++ b/x``;
* Cline / Roo Code XML tools: ``<write_to_file>``, ``<replace_in_file>``, ``<apply_diff>``,
  ``<insert_content>``, ``<search_and_replace>`` (and ``<read_file>``), each with ``<path>``;
* Codex ``apply_patch`` envelopes: ``*** Begin Patch`` / ``*** Add|Update|Delete File: x``.

In a shell command (``shell_writes``): ``>``/``>>``/``&>`` redirections (heredoc writes such as
``cat > x <<EOF`` included; a heredoc's body is never read as commands), ``tee [-a] x``, ``sed
-i ... x``. Targets under ``/dev/``, and targets holding ``$``, a backquote or a glob are skipped:
a path is reported only when the text names it.

``message_edits`` gives every file one message changes by every route (tool calls, text, shell,
Aider's output): ``eval``'s file probes and the summary's "Files" section agree through it.

Cheap pre-checks (``in`` tests for each form's marker) come before any regex or tokenizer, so a
reply without edits costs a few substring scans.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import bounded, content_text
from hermes_plugins._common.injected import applied_edits
from hermes_plugins._common.toolkinds import SHELL_TOOLS, command_of, file_actions, patch_files

#: A finding: (path, verb, how it was found).
Edit = tuple[str, str, str]

PATH_MAX = 300

_SEARCH = re.compile(r"[ \t]*<{5,9} SEARCH>?[ \t]*")
_FENCE = "```"
#: A file name as Aider writes it above a block, after its decorations are stripped.
_PATHLIKE = re.compile(r"[\w.\-/\\~@+]+")
#: A file name without a folder: a stem and an extension (``setup.py``, ``.env.local``).
_BASENAME = re.compile(r"[\w.\-]*\w\.[A-Za-z0-9]{1,10}")
_DIFF_PAIR = re.compile(r"(?m)^--- (\S+)[^\n]*\n\+\+\+ (\S+)")
_XML_TOOLS = ("write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace",
              "edit_file", "read_file")
_XML_VERBS = {"write_to_file": "created", "read_file": "read"}


def _clean_name(line: str) -> str | None:
    """A file name on a line above a block (Aider's decorations stripped), or ``None``."""
    name = line.strip().rstrip(":").lstrip("#").strip().strip("`").strip("*").strip()
    if not name or len(name) > PATH_MAX or name == "..." or not _PATHLIKE.fullmatch(name):
        return None
    if "/" not in name and not _BASENAME.fullmatch(name):  # a word or a number, not a file
        return None
    return name if any(c.isalpha() for c in name) else None


def _fence_name(line: str) -> str | None:
    """The name some models put on the opening fence itself (```path/to/file.py)."""
    candidate = line.strip()[len(_FENCE):].strip()
    return _clean_name(candidate) if candidate and ("/" in candidate or "." in candidate) else None


def _name_above(lines: list[str], number: int) -> str | None:
    """The file named on one of the 3 lines above line ``number``: the nearest that is not a
    fence (a name on the fence itself counts), as Aider looks for it."""
    for back in range(number - 1, max(-1, number - 4), -1):
        above = lines[back]
        if above.strip().startswith(_FENCE):
            name = _fence_name(above)
            if name:
                return name
            continue
        return _clean_name(above)
    return None


def _search_replace(text: str) -> list[Edit]:
    found: list[Edit] = []
    lines = text.split("\n")
    current: str | None = None
    for number, line in enumerate(lines):
        if "SEARCH" in line and _SEARCH.fullmatch(line):
            current = _name_above(lines, number) or current
            if current:
                found.append((current, "modified", "search/replace"))
    return found


def _whole_files(text: str) -> list[Edit]:
    """A line holding only a path, then a fenced block that is no edit block of another form.

    Fence lines are found with ``str.find`` (no split of the whole reply into lines)."""
    found: list[Edit] = []
    inside = False
    at = text.find(_FENCE)
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        if text[line_start:at].strip():  # a fence inside a line: not a block's
            at = text.find(_FENCE, at + 3)
            continue
        if not inside and line_start > 0:
            above_start = text.rfind("\n", 0, line_start - 1) + 1
            name = _clean_name(text[above_start:line_start - 1])
            if name:
                body_start = text.find("\n", at)
                body = text[body_start + 1: body_start + 200] if body_start != -1 else ""
                if not body.lstrip(" \t").startswith(("<<<<<<<", "--- ", "@@")):
                    found.append((name, "modified", "whole file"))
        inside = not inside
        line_end = text.find("\n", at)
        if line_end == -1:
            break
        at = text.find(_FENCE, line_end)
    return found


def _diffs(text: str) -> list[Edit]:
    found: list[Edit] = []
    for match in _DIFF_PAIR.finditer(text):
        old, new = match.group(1), match.group(2)
        if new == "/dev/null":
            path, verb = old, "deleted"
        else:
            path, verb = new, "created" if old == "/dev/null" else "modified"
        if path.startswith(("a/", "b/")) and (old[2:] == new[2:] or "/dev/null" in (old, new)):
            path = path[2:]
        if path and len(path) <= PATH_MAX:
            found.append((path, verb, "diff"))
    return found


def _past_body(text: str, at: int, end: int) -> int:
    """Where to look for the next ``<path>`` after one ending at ``at``: past the ``<content>`` or
    ``<diff>`` body that follows it (a file's text may hold ``<path>`` tags of its own)."""
    best, closing = end, ""
    for opening, close_tag in (("<content>", "</content>"), ("<diff>", "</diff>")):
        found = text.find(opening, at, best)
        if found != -1:
            best, closing = found, close_tag
    if not closing:
        return at
    close = text.find(closing, best, end)
    return end if close == -1 else close


def _xml_tools(text: str) -> list[Edit]:
    """Cline/Roo tool uses, found by their literal tags (``str.find``: a tool's content may be a
    whole file, which a lazy regex would walk character by character)."""
    found: list[tuple[int, Edit]] = []
    for tool in _XML_TOOLS:
        opening, closing = f"<{tool}>", f"</{tool}>"
        at = text.find(opening)
        while at != -1:
            end = text.find(closing, at)
            end = len(text) if end == -1 else end
            verb = _XML_VERBS.get(tool, "modified")
            path_at = text.find("<path>", at, end)
            while path_at != -1:
                path_end = text.find("</path>", path_at, end)
                if path_end == -1:
                    break
                path = text[path_at + 6:path_end].strip()
                if path and len(path) <= PATH_MAX and "\n" not in path and "<" not in path:
                    found.append((path_at, (path, verb, tool)))
                path_at = text.find("<path>", _past_body(text, path_end, end), end)
            at = text.find(opening, end)
    found.sort(key=lambda item: item[0])
    return [edit for _at, edit in found]


def text_edits(text: str) -> list[Edit]:
    """Every file ``text`` (an agent's reply) edits or, for the XML tools, reads - in order of the
    forms above, each form's findings in text order."""
    if not text:
        return []
    found: list[Edit] = []
    if "SEARCH" in text and "<<<<<" in text:
        found += _search_replace(text)
    if "*** Begin Patch" in text:
        found += [(path, verb, "apply_patch") for path, verb in patch_files(text)]
    elif "\n+++ " in text and "--- " in text:
        found += _diffs(text)
    if "</path>" in text:
        found += _xml_tools(text)
    if _FENCE in text:
        found += _whole_files(text)
    return found


# --- shell commands ---------------------------------------------------------------------------

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([\w.\-]+)\1")
_REDIRECTS = {">": "created", ">|": "created", "&>": "created", ">>": "modified", "&>>": "modified"}
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "(", ")", ";;", "|&"})


def _target(word: str) -> str | None:
    if not word or word.startswith(("/dev/", "&")) or len(word) > PATH_MAX:
        return None
    if any(c in word for c in "$`*?") or word.isdigit():
        return None
    return word


#: One shell token: an operator, or a word made of plain runs, escapes and quoted strings (a
#: lone quote is taken as a character: an unbalanced line still splits). One C-speed pass per
#: line; ``shlex`` (pure Python, character by character) cost ~100 us a line.
_TOKEN = re.compile(
    r"""(&>>|&>|>>|>\||>&|<<-|<<<|<<|<&|<>|\|\||\|&|&&|;;|[<>|&;()])"""
    r"""|((?:[^\s'"<>|&;()\\]+|\\.|'[^']*'|"(?:[^"\\]|\\.)*"|['"\\])+)"""
)
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""")


def _unquote(word: str) -> str:
    if "'" not in word and '"' not in word and "\\" not in word:
        return word
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else (
        m.group(2) if m.group(2) is not None else m.group(3)), word)


def _words(line: str) -> list[str]:
    """The shell tokens of ``line``: operators as they are, words unquoted (``shlex``'s split
    with punctuation characters, for what the writers below read)."""
    if ("'" in line or '"' in line) and any(q in _QUOTED.sub("", line) for q in "'\""):
        return []  # an unbalanced quote: the line is not read (shlex refuses it too)
    out: list[str] = []
    for operator, word in _TOKEN.findall(line):
        out.append(operator or _unquote(word))
    return out


def _tee(command: list[str]) -> list[Edit]:
    append = "-a" in command or "--append" in command
    return [(target, "modified" if append else "created", "tee")
            for word in command[1:] if not word.startswith("-") and (target := _target(word))]


def _sed_in_place(command: list[str]) -> list[Edit]:
    rest = command[1:]
    if not any(w == "--in-place" or w.startswith(("-i", "--in-place=")) or
               (w.startswith("-") and not w.startswith("--") and "i" in w[1:]) for w in rest):
        return []
    scripted = any(w in _SED_SCRIPT_OPTIONS for w in rest)
    operands: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word in _SED_SCRIPT_OPTIONS:
            skip = True  # its argument is the script (or a script file), not a file edited
        elif not word.startswith("-"):
            operands.append(word)
    files = operands if scripted else operands[1:]  # without -e, the first operand is the script
    return [(target, "modified", "sed -i") for word in files if (target := _target(word))]


_SED_SCRIPT_OPTIONS = frozenset({"-e", "--expression", "-f", "--file"})
#: Operators whose next word is a delimiter, an input or a descriptor, never a file written.
_NOT_WRITTEN = frozenset({"<<", "<<-", "<", "<<<", ">&", "<&", "<>"})


def _line_writes(words: list[str], writers: bool) -> list[Edit]:
    """Files one line's tokens write: redirection targets, and (``writers``: the line holds the
    word ``tee`` or ``sed``) the files of each simple command that is ``tee`` or ``sed -i``."""
    found: list[Edit] = []
    command: list[str] = []  # the words of the simple command being read
    commands: list[list[str]] = []
    index = 0
    count = len(words)
    while index < count:
        word = words[index]
        if word in _REDIRECTS:
            if index + 1 < count and (target := _target(words[index + 1])):
                found.append((target, _REDIRECTS[word], "redirect"))
            index += 2
            continue
        if word in _NOT_WRITTEN:
            index += 2
            continue
        if writers:
            if word in _SEPARATORS:
                if command:
                    commands.append(command)
                    command = []
            else:
                command.append(word)
        index += 1
    if command:
        commands.append(command)
    for simple in commands:
        head = simple[0].rsplit("/", 1)[-1]
        if head == "tee":
            found += _tee(simple)
        elif head == "sed":
            found += _sed_in_place(simple)
    return found


#: Redirections that write no file: the line is not tokenized for them.
_HARMLESS = ("2>&1", ">&2", "1>&2", ">/dev/null", "> /dev/null")
_WRITER_WORD = re.compile(r"\b(?:tee|sed)\b")


def _redirects(line: str) -> bool:
    """A cheap test before tokenizing: a ``>`` left once the harmless forms are taken out."""
    if ">" not in line:
        return False
    for harmless in _HARMLESS:
        if harmless in line:
            line = line.replace(harmless, "")
    return ">" in line


def shell_writes(command: str) -> list[Edit]:
    """Every file a shell ``command`` writes by redirection, ``tee`` or ``sed -i`` (heredoc
    bodies skipped)."""
    if not command or (">" not in command and "tee" not in command and "sed" not in command):
        return []
    found: list[Edit] = []
    delimiter: str | None = None
    for line in command.split("\n") if "\n" in command else (command,):
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        writers = ("tee" in line or "sed" in line) and _WRITER_WORD.search(line) is not None
        if writers or _redirects(line):
            found += _line_writes(_words(line), writers)
        if "<<" in line:
            heredoc = _HEREDOC.search(line)
            if heredoc:
                delimiter = heredoc.group(2)
    return found


# --- one message ------------------------------------------------------------------------------


def message_edits(message: Mapping[str, Any]) -> list[Edit]:
    """Every file one message changes, by every route the summary reads (``eval``'s file probes
    and the summary's "Files" section agree through it): an assistant message's tool calls
    (``toolkinds.file_actions``, and ``shell_writes`` of a shell command), the edits written in
    its text (``text_edits``); Aider's ``Applied edit to`` lines in its output. Reads are left out.
    """
    found: list[Edit] = []
    role = message.get("role")
    if role == "assistant":
        text = content_text(message.get("content"))
        if text:
            found += [edit for edit in text_edits(text) if edit[1] != "read"]
        for call in message.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(fn, Mapping):
                continue
            name = str(fn.get("name") or "")
            args = _arguments(fn.get("arguments"))
            found += [(path, verb, name) for path, verb in file_actions(name, args) if verb != "read"]
            command = command_of(args) if name in SHELL_TOOLS else None
            if command:
                found += shell_writes(command)
    elif role == "user" and message.get("_injected") == "aider-output":
        found += [(path, "modified", "aider") for path in applied_edits(content_text(message.get("content")))]
    return found


def _arguments(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = bounded.loads(raw)
        except ValueError:  # invalid, or nested too deep to parse (a model's arguments)
            return {}
        return value if isinstance(value, dict) else {}
    return {}
