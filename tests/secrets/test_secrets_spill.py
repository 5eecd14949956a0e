"""Spill files hold no secret: what goes to disk is redacted, the live preview is the result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core import ToolCallContext
from hermes_core.config import load_config
from hermes_core.redaction import Redactor
from hermes_plugins.tools.spill import process_tool_result

from secret_samples import SAMPLES, SECRETS


class _Session:
    def __init__(self) -> None:
        self.redactor = Redactor(b"s" * 32)


def _big_result_with_every_secret() -> str:
    rows = [f"row {i}: ok" for i in range(3_000)]
    for i, (_, text, _) in enumerate(SAMPLES):
        rows.insert(50 * i + 7, text)
    return "\n".join(rows)


def _spill(tmp_path: Path, content: str, **config: Any) -> tuple[str, str]:
    ctx = ToolCallContext(tool_name="terminal", tool_call_id="call_9", home=tmp_path,
                          config=load_config(data=config), context_length=32_000, session=_Session())
    out = process_tool_result(content, ctx)
    assert isinstance(out, str) and out.startswith("<persisted-output>")
    files = list((tmp_path / "cache" / "spillover").iterdir())
    assert len(files) == 1
    return out, files[0].read_text()


def test_a_spill_file_holds_the_sessions_placeholders_not_the_secrets(tmp_path: Path) -> None:
    content = _big_result_with_every_secret()
    _, stored = _spill(tmp_path, content)
    assert [s for s in SECRETS if s in stored] == []
    assert "[REDACTED:openai#" in stored and "row 2999: ok" in stored
    # the placeholder is the session's: the same one the archive would store
    assert _Session().redactor.redact(SAMPLES[0][1]) in stored


def test_the_preview_the_model_sees_now_is_the_live_result(tmp_path: Path) -> None:
    content = "OPENAI_API_KEY=" + SAMPLES[0][2] + "\n" + "x\n" * 60_000
    out, stored = _spill(tmp_path, content)
    assert SAMPLES[0][2] in out and SAMPLES[0][2] not in stored


def test_keep_secrets_writes_the_file_verbatim(tmp_path: Path) -> None:
    content = _big_result_with_every_secret()
    _, stored = _spill(tmp_path, content, archive={"keep_secrets": True})
    assert stored == content
