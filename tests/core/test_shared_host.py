"""One plugin host per process and configuration: entry points read once, reused by every
``Session.open``; ``refresh_plugins`` picks up a plugin installed at run time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

import hermes_core.host as host_module
from hermes_core import Config, PluginHost, Session, refresh_plugins

from fake_dists import make_dist


def open_session(tmp_path: Path, **kwargs: Any) -> Session:
    return Session.open(cwd=str(tmp_path), home=str(tmp_path), persist=False, **kwargs)


def test_sessions_share_one_host_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = host_module.importlib.metadata.entry_points

    def counting(**kwargs: Any) -> Any:
        reads.append(1)
        return real(**kwargs)

    monkeypatch.setattr(host_module.importlib.metadata, "entry_points", counting)
    first = open_session(tmp_path)
    second = open_session(tmp_path, model="another")
    assert first.host is second.host
    assert len(reads) == 1
    assert first.engine is not second.engine  # engines stay per session


def test_a_different_plugin_configuration_gets_its_own_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = open_session(tmp_path)
    config = attrs.evolve(Config(), plugins=attrs.evolve(Config().plugins, disabled=["memory"]))
    blocked = open_session(tmp_path, config=config)
    assert blocked.host is not plain.host
    assert blocked.host.records["memory"].status == "blocked"
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "memory")
    assert open_session(tmp_path).host is not plain.host
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS")
    assert open_session(tmp_path).host is plain.host


def test_refresh_plugins_sees_a_plugin_installed_at_run_time(tmp_path: Path, site_dir: Path) -> None:
    before = open_session(tmp_path)
    assert "late_plugin" not in before.host.records
    make_dist(site_dir, "hermes-late", {"late_plugin": "late_mod"}, {"late_mod": "x = 1\n"})
    assert open_session(tmp_path).host is before.host  # same process, same configuration
    refresh_plugins()
    after = open_session(tmp_path)
    assert after.host is not before.host
    assert after.host.records["late_plugin"].status == "active"
    assert before.host.records.get("late_plugin") is None  # open sessions keep their host


def test_an_explicit_host_is_used_as_given(tmp_path: Path) -> None:
    own = PluginHost.create()
    assert open_session(tmp_path, host=own).host is own
    assert open_session(tmp_path).host is not own
