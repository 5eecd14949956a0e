"""``hermes-ctx sessions list|show|rm`` for the configured store, SQLite and Redis alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import Session
from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.session_store import close_connections

from recall_support import TestEngines, history
from redis_support import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    store: dict[str, Any] = {}
    if request.param == "redis":
        store = {"backend": "redis", "url": request.getfixturevalue("redis_url"), "key_prefix": f"{tmp_path.name}:"}
        (tmp_path / "config.yaml").write_text(
            f"session_store:\n  backend: redis\n  url: {store['url']}\n  key_prefix: '{store['key_prefix']}'\n"
        )
    data = {"context": {"engine": "drophalf"}, "session_store": store}
    for sid, compact in (("alpha", True), ("beta", False)):
        host = PluginHost.create()
        host.register(TestEngines(), "test_engines")
        session = Session.open(cwd=tmp_path, home=tmp_path, model="gpt-x", session_id=sid, host=host,
                               config=load_config(data=data))
        session.system_prompt  # noqa: B018 - built and stored
        if compact:
            session.compress(history(12))
        session.close()
    yield tmp_path
    close_connections()


def run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), "sessions", *args], catch_exceptions=False)


def test_list_show_rm(home: Path) -> None:
    rows = {r["session_id"]: r for r in json.loads(run(home, "list", "--json").stdout)}
    assert set(rows) == {"alpha", "beta"}
    assert rows["alpha"]["archived"] > 0 and rows["beta"]["archived"] == 0
    assert rows["alpha"]["model"] == "gpt-x" and rows["alpha"]["prompt_chars"] > 100
    shown = json.loads(run(home, "show", "alpha", "--json").stdout)
    assert shown == rows["alpha"]
    assert "gpt-x" in run(home, "show", "alpha", "--prompt").stdout
    removed = json.loads(run(home, "rm", "alpha", "--json").stdout)
    assert removed == {"session_id": "alpha", "prompt_removed": True, "archived_removed": rows["alpha"]["archived"]}
    assert [r["session_id"] for r in json.loads(run(home, "list", "--json").stdout)] == ["beta"]
    missing = run(home, "rm", "alpha")
    assert missing.exit_code == 2 and "no session 'alpha'" in missing.stderr
    assert run(home, "show", "nope").exit_code == 2
