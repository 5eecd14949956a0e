"""What the eval's probes decide from a message: failure evidence and who wrote a user turn.

One function per detector, so each can be switched to the shared detectors of
``hermes_plugins._common`` as they grow (issue 29) without touching the probes:

* ``failure_line`` - the first error line of a result or observation, on evidence only: the
  flag, or what ``failures.failure_of`` reads from structure (exit codes, JSON errors,
  tracebacks, lines opening with ``Error:``), or text no flag accompanies: mini-swe-agent's
  ``<returncode>N</returncode>`` with N != 0, a shell's ``command not found``. A call whose
  result was not recorded (the readers' placeholder) has no failure.
* ``pasted_tool_output`` - whether a user-role text is a tool's output an agent pasted there
  without a reader marking it: Cline/Roo's ``[tool for 'x'] Result:`` turns, mini-swe-agent's
  ``<returncode>`` observations, SWE-agent's ``OBSERVATION:`` turns, and what a harness writes
  there on its own (mini-swe-agent's format-error and timeout notes, Cline's environment details).
* ``is_person_request`` - a request the person typed: ``injected.is_request`` (not marked
  ``_injected``, not a summary or a known injected opening) and not pasted tool output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import MISSING_RESULT_TEXT, content_text, redact
from hermes_plugins._common.failures import failure_of
from hermes_plugins._common.injected import is_request

#: Cline / Roo Code write each tool result as the next user turn, opening with
#: ``[read_file for 'src/a.py'] Result:`` (or ``[attempt_completion] Result:``).
_CLINE_RESULT = re.compile(r"\A\s*\[[A-Za-z_][\w-]*(?: for [^\]\n]*)?\] Result:")
#: Cline's notes of a tool it refused or that failed: ``[ERROR] You did not use a tool ...``.
_CLINE_ERROR = re.compile(r"\A\s*\[ERROR\] ")
#: mini-swe-agent's observation template opens with the command's return code.
_RETURNCODE = re.compile(r"\A\s*<returncode>\s*(-?\d+)\s*</returncode>")
#: SWE-agent 0.x / text-ReAct observations written without a reader's mark.
_OBSERVATION = re.compile(r"\A\s*OBSERVATION:")
#: A shell that did not find the command: ``bash: foo: command not found``, ``zsh: command not found: foo``.
_NOT_FOUND = re.compile(r"(?m)^[^\n]*(?:: command not found\b|command not found: \S+)[^\n]*$")
_ERROR_PREFIX = re.compile(r"(?m)^\[ERROR\] [^\n]+$")
LINE_MAX = 300


#: What agents' harnesses write into the user role on their own (never the person's words):
#: mini-swe-agent's format-error and timeout templates, and a Cline turn that opens with its
#: environment details. (Cline's ``[TASK RESUMPTION]`` may carry the person's new instructions:
#: it stays a request.)
HARNESS_OPENINGS: tuple[tuple[str, str], ...] = (
    ("Please always provide EXACTLY ONE action in triple backticks", "mini-swe-agent-format-error"),
    ("The last command <command>", "mini-swe-agent-timeout"),
    ("<environment_details>", "cline-environment-details"),
)


def pasted_tool_output(text: str) -> str | None:
    """The kind of tool output or harness text ``text`` (a user-role turn) is, or ``None``
    when it is neither."""
    if _CLINE_RESULT.match(text) or _CLINE_ERROR.match(text):
        return "cline-tool-result"
    if _RETURNCODE.match(text):
        return "mini-swe-agent-observation"
    if _OBSERVATION.match(text):
        return "observation"
    opening = text.lstrip()
    for prefix, kind in HARNESS_OPENINGS:
        if opening.startswith(prefix):
            return kind
    return None


def is_person_request(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a request the person typed (see the module docstring)."""
    if not is_request(message):
        return False
    return pasted_tool_output(content_text(message.get("content"))) is None


def _one_line(text: str) -> str:
    # Redacted before it is clipped: a clipped secret may no longer look like one.
    line = " ".join(redact(text).split())
    return line if len(line) <= LINE_MAX else line[:LINE_MAX].rstrip()


def failure_line(text: str, *, is_error: Any = False, reads: bool = False) -> str | None:
    """The first error line ``text`` gives evidence of, or ``None`` when it shows no failure.

    A flagged result with no error line says so by its flag alone: its first line stands in.
    The placeholder a reader puts where no result was recorded is no evidence of anything.
    """
    if text.strip() == MISSING_RESULT_TEXT:
        return None
    failure = failure_of(text, is_error=is_error, reads=reads)
    if failure is not None:
        return failure.first or None
    if reads:
        return None
    code = _RETURNCODE.match(text)
    if code and code.group(1) != "0":
        body = text[code.end():].replace("<output>", "").replace("</output>", "")
        found = failure_of(body, is_error=True)
        line = found.first if found is not None and found.first else f"returncode {code.group(1)}"
        return _one_line(line)
    # A literal first: most outputs hold neither, and a substring test is a fast scan.
    for literal, pattern in (("command not found", _NOT_FOUND), ("[ERROR] ", _ERROR_PREFIX)):
        match = pattern.search(text) if literal in text else None
        if match:
            return _one_line(match.group(0))
    return None
