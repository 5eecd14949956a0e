"""Files edited through text (issue 29): Aider's edit formats, Cline/Roo's XML tools, Codex
``apply_patch`` envelopes and shell writes are found by one shared detector
(``_common.textedits``) and listed in the summary's "Files" section. Fixtures are written by
hand after each format's documented shape.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins._common.textedits import shell_writes, text_edits
from hermes_plugins.compressor.extractive import build_handoff

from compressor_support import assistant, call, tool, user
from hypothesis_budget import examples

AIDER_DIFF = """I'll add the import and change the default.

src/server/app.py
```python
<<<<<<< SEARCH
from flask import Flask
=======
import math
from flask import Flask
>>>>>>> REPLACE
```

```python
<<<<<<< SEARCH
PORT = 5000
=======
PORT = 8080
>>>>>>> REPLACE
```

tests/test_app.py
```python
<<<<<<< SEARCH
def test_port():
=======
def test_port_default():
>>>>>>> REPLACE
```
"""

AIDER_WHOLE = """Here is the new file.

docs/usage.md
```
# Usage

Run `app --port 8080`.
```
"""

AIDER_UDIFF = """```diff
--- a/lib/parse.py
+++ b/lib/parse.py
@@ -1,3 +1,3 @@
-def parse(x):
+def parse(x, strict=False):
--- /dev/null
+++ b/lib/new_helper.py
@@ -0,0 +1 @@
+HELPER = 1
```"""

CLINE_XML = """I'll create the config and patch the loader.

<write_to_file>
<path>config/settings.json</path>
<content>
{"debug": false}
</content>
</write_to_file>

<replace_in_file>
<path>src/loader.ts</path>
<diff>
------- SEARCH
const x = 1
=======
const x = 2
+++++++ REPLACE
</diff>
</replace_in_file>"""

ROO_XML = """<apply_diff>
<path>src/a.py</path>
<diff>...</diff>
</apply_diff>
<insert_content>
<path>src/b.py</path>
<line>3</line>
<content>x = 1</content>
</insert_content>"""

CODEX_PATCH = """*** Begin Patch
*** Update File: pkg/core.py
@@ def run():
-    return 1
+    return 2
*** Add File: pkg/extra.py
+VALUE = 3
*** Delete File: pkg/legacy.py
*** End Patch"""


def _paths(found: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    return [(path, verb) for path, verb, _how in found]


def test_aider_search_replace_blocks() -> None:
    assert _paths(text_edits(AIDER_DIFF)) == [
        ("src/server/app.py", "modified"), ("src/server/app.py", "modified"), ("tests/test_app.py", "modified")]


def test_aider_whole_file_and_udiff() -> None:
    assert _paths(text_edits(AIDER_WHOLE)) == [("docs/usage.md", "modified")]
    assert _paths(text_edits(AIDER_UDIFF)) == [("lib/parse.py", "modified"), ("lib/new_helper.py", "created")]


def test_cline_and_roo_xml_tools() -> None:
    assert _paths(text_edits(CLINE_XML)) == [("config/settings.json", "created"), ("src/loader.ts", "modified")]
    assert _paths(text_edits(ROO_XML)) == [("src/a.py", "modified"), ("src/b.py", "modified")]


def test_xml_tool_content_is_not_read_for_paths() -> None:
    reply = ("<write_to_file>\n<path>conf/app.xml</path>\n<content>\n<config><path>/not/a/file</path></config>\n"
             "</content>\n</write_to_file>\n<apply_diff>\n<args>\n<file><path>a.py</path><diff>x</diff></file>\n"
             "<file><path>b.py</path><diff><path>inside</path></diff></file>\n</args>\n</apply_diff>")
    assert _paths(text_edits(reply)) == [("conf/app.xml", "created"), ("a.py", "modified"), ("b.py", "modified")]


def test_codex_apply_patch_envelope() -> None:
    assert _paths(text_edits(CODEX_PATCH)) == [
        ("pkg/core.py", "modified"), ("pkg/extra.py", "created"), ("pkg/legacy.py", "deleted")]


def test_prose_and_snippets_name_no_file() -> None:
    prose = ("You could write:\n```python\nprint('hi')\n```\nThat is, e.g.\n```\nx > y\n```\n"
             "version 1.2\n```\nok\n```\nThe file src/app.py is fine.")
    assert text_edits(prose) == []


def test_shell_writes() -> None:
    heredoc = "cat > src/config.py <<'EOF'\nDEBUG = 1 > 0\nprint('a' > 'b')\nEOF\npython src/config.py"
    assert _paths(shell_writes(heredoc)) == [("src/config.py", "created")]
    assert _paths(shell_writes("cat <<EOF > notes/todo.txt\nitem > other\nEOF")) == [("notes/todo.txt", "created")]
    assert _paths(shell_writes("sed -i 's/old/new/g' src/a.py src/b.py")) == [
        ("src/a.py", "modified"), ("src/b.py", "modified")]
    assert _paths(shell_writes("sed -i.bak -e 's/x/y/' conf.ini")) == [("conf.ini", "modified")]
    assert _paths(shell_writes("pytest -q 2>&1 | tee -a logs/run.txt")) == [("logs/run.txt", "modified")]
    assert _paths(shell_writes("echo hi >> CHANGES.md && ls > listing.txt")) == [
        ("CHANGES.md", "modified"), ("listing.txt", "created")]
    for quiet in ("python x.py > /dev/null 2>&1", "echo $X > $OUT", "grep -n foo bar.py", "echo 'a > b'",
                  "sed -n '1,5p' file.txt", "echo 'unbalanced"):
        assert shell_writes(quiet) == [], quiet


@settings(max_examples=examples(80), deadline=None)
@given(st.text(alphabet=st.sampled_from("ab.>|&;'\"<-\n tees$ix/"), max_size=60))
def test_shell_writes_never_raises_and_names_text_it_saw(command: str) -> None:
    for path, verb, _how in shell_writes(command):
        assert path and set(path) <= set(command)  # made of what the command wrote, quotes taken off
        assert verb in ("created", "modified")


def _files(summary: str) -> str:
    start = summary.find("## Files")
    end = summary.find("\n## ", start + 1)
    return summary[start: end if end != -1 else len(summary)] if start != -1 else ""


def test_summary_lists_files_edited_through_text() -> None:
    messages: list[dict[str, Any]] = [
        user("bump the port and document it"),
        assistant(AIDER_DIFF),
        {"role": "user", "content": "Applied edit to src/server/app.py\nApplied edit to tests/test_app.py",
         "_injected": "aider-output"},
        assistant(AIDER_WHOLE),
        user("now the loader"),
        assistant(CLINE_XML),
        user("and the core"),
        assistant("", call("c1", "shell", command=["apply_patch", CODEX_PATCH])),
        tool("c1", "Success. Updated the following files:\nM pkg/core.py"),
        assistant("", call("c2", "bash", command="cat > scripts/run.sh <<'EOF'\necho 1 > /tmp/x\nEOF")),
        tool("c2", ""),
        assistant("", call("c3", "bash", command="sed -i 's/8080/9090/' config/port.txt")),
        tool("c3", ""),
        user("thanks"),
    ]
    files = _files(build_handoff(messages))
    for path in ("src/server/app.py", "tests/test_app.py", "docs/usage.md", "config/settings.json",
                 "src/loader.ts", "pkg/core.py", "pkg/extra.py", "pkg/legacy.py", "scripts/run.sh",
                 "config/port.txt"):
        assert path in files, path
    assert "/tmp/x" not in files  # the heredoc's body is no command
    assert "pkg/legacy.py — deleted" in files


def test_text_agent_action_writes_files() -> None:
    """mini-swe-agent / SWE-agent 0.x: the reply's fenced block ran (an observation follows)."""
    messages = [
        user("fix the bug"),
        assistant("THOUGHT: write the fix\n\n```bash\ncat <<'EOF' > src/fix.py\nx = 1\nEOF\n```"),
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>", "_injected": "observation"},
        user("ok"),
    ]
    assert "src/fix.py" in _files(build_handoff(messages))


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet=st.sampled_from("ab.>|&;'\" <-2()/"), max_size=40))
def test_tokens_are_shlex_tokens(line: str) -> None:
    """The one-pass tokenizer splits as ``shlex`` (punctuation characters, POSIX) does, and
    refuses the lines ``shlex`` refuses (backslash escapes aside)."""
    import shlex

    from hermes_plugins._common.textedits import _words

    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        expected = list(lexer)
    except ValueError:
        expected = []
    # shlex glues operator characters into runs and splits "<<-" (not its punctuation); the
    # shell (and we) read known operators only.
    if "<<-" in line or any(set(t) <= set("<>|&;()") and t not in {">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<-", "<<<", "<&",
                                                  "<>", "|", "||", "|&", "&&", "&", ";", ";;", "(", ")"}
           for t in expected):
        return
    assert _words(line) == expected


def test_an_edit_block_before_an_observation_is_no_command() -> None:
    """Aider's output follows its edit blocks: the block is no shell action, its text
    (``a > b`` inside code) names no file written and no command."""
    reply = "src/calc.py\n```python\n<<<<<<< SEARCH\nok = a > b\n=======\nok = a >= b\n>>>>>>> REPLACE\n```"
    python = "Try this:\n```python\nresult = x > limit\n```"
    messages = [
        user("fix the comparison"), assistant(reply),
        {"role": "user", "content": "Applied edit to src/calc.py\nerror: tests failed", "_injected": "aider-output"},
        user("and this?"), assistant(python),
        {"role": "user", "content": "ran it", "_injected": "observation"},
        user("thanks"),
    ]
    summary = build_handoff(messages)
    files = _files(summary)
    assert "src/calc.py" in files and "— created" not in files
    assert "`<<<<<<< SEARCH`" not in summary and "limit" not in files and "`result" not in summary


def test_message_edits_covers_every_route() -> None:
    from hermes_plugins._common.textedits import message_edits

    calls = assistant(AIDER_DIFF, call("c1", "Edit", file_path="src/x.py", old_string="a", new_string="b"),
                      call("c2", "bash", command="echo 1 > out/one.txt"), call("c3", "read_file", path="r.py"))
    assert [(p, v) for p, v, _ in message_edits(calls)] == [
        ("src/server/app.py", "modified"), ("src/server/app.py", "modified"), ("tests/test_app.py", "modified"),
        ("src/x.py", "modified"), ("out/one.txt", "created")]
    output = {"role": "user", "content": "Applied edit to lib/a.py", "_injected": "aider-output"}
    assert message_edits(output) == [("lib/a.py", "modified", "aider")]
    assert message_edits(user("please edit src/x.py")) == []  # a request names, it does not edit
