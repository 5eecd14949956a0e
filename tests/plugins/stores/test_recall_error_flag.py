"""The archive honours ``_is_error`` (issue 29): a recalled result the provider flagged as an
error says so (``"is_error": true``), since its text alone may not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost

from recall_support import TestEngines, call


def _history() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for turn in range(8):
        messages.append({"role": "user", "content": f"step {turn}: deploy the quarkbeam service"})
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            call(f"c{turn}", "deploy", json.dumps({"target": f"stage{turn}"}))]})
        result: dict[str, Any] = {"role": "tool", "tool_call_id": f"c{turn}",
                                  "content": f"quarkbeam quota exceeded on stage{turn}" if turn == 1
                                  else f"quarkbeam deployed to stage{turn}"}
        if turn == 1:
            result["_is_error"] = True
        messages.append(result)
        messages.append({"role": "assistant", "content": f"done {turn}"})
    return messages


def test_recalled_flagged_result_says_it_failed(tmp_path: Path) -> None:
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=64_000, session_id="s1",
                           host=host, config=load_config(data={"context": {"engine": "drophalf"}}))
    session.compress(_history())
    hits = json.loads(str(session.handle_tool_call("context_search", json.dumps({"query": "quarkbeam quota"}))))["hits"]
    flagged = [hit for hit in hits if "quota" in hit["snippet"]]
    assert flagged and flagged[0]["is_error"] is True
    assert all("is_error" not in hit for hit in hits if "quota" not in hit["snippet"])
    expanded = json.loads(str(session.handle_tool_call("context_expand", json.dumps({"ref": flagged[0]["ref"]}))))
    assert expanded["is_error"] is True and "quota exceeded" in expanded["text"]
    session.close()
