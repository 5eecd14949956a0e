"""Plugins own their configuration: hermes_config_sections, and the quality bar of issue 18 as
a user sees it through hermes-ctx (third-party wrappers of both styles, a plugin with its own
config section, an engine configured through compression.*)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from hermes_core import ConfigError, PluginHost, Session, hookimpl, load_config
from hermes_core.cli import cli
from hermes_core.config import ConfigSection, bind_sections
from hermes_core.config_fields import field
from hermes_core.diagnostics import collecting
from hermes_core.hookdocs import render_config_markdown

from fake_dists import make_dist

SECTION_PLUGIN = """
import attrs
from hermes_core import PromptBlock, hookimpl
from hermes_core.plugin import ConfigSection, field, integer

@attrs.frozen(kw_only=True)
class AcmeSettings:
    level: int = field(3, integer(1, 9), doc="how hard Acme tries")
    motto: str = "be brief"

@hookimpl
def hermes_config_sections():
    return ConfigSection(name="acme", model=AcmeSettings, doc="Acme's own settings.")

@hookimpl
def hermes_prompt_platform_hint(ctx):
    return PromptBlock(name="platform", text=f"acme level {ctx.config.acme.level}: {ctx.config.acme.motto}")
"""

OLD_WRAPPER = """
from hermes_core import hookimpl

@hookimpl(hookwrapper=True)
def hermes_prompt_identity(ctx):
    outcome = yield
    block = outcome.get_result()
    outcome.force_result(block.__class__(name=block.name, text=block.text + " (old-style wrapped)"))
"""

NEW_WRAPPER = """
from hermes_core import hookimpl

@hookimpl(wrapper=True)
def hermes_prompt_identity(ctx):
    block = yield
    return block.__class__(name=block.name, text=block.text + " (new-style wrapped)")
"""

ENGINE = """
from hermes_core import ContextEngine, hookimpl

class Tail(ContextEngine):
    name = "tail"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        return messages[-self.protect_last_n:]

@hookimpl
def hermes_context_engines():
    return {"tail": Tail}
"""


@pytest.fixture
def acme_home(site_dir: Path, tmp_path: Path) -> Path:
    make_dist(site_dir, "acme-hermes", {"acme_section": "acme_section_mod"}, {"acme_section_mod": SECTION_PLUGIN})
    make_dist(site_dir, "acme-old", {"acme_old": "acme_old_mod"}, {"acme_old_mod": OLD_WRAPPER})
    make_dist(site_dir, "acme-new", {"acme_new": "acme_new_mod"}, {"acme_new_mod": NEW_WRAPPER})
    make_dist(site_dir, "hermes-engine-tail", {"tail_engine": "tail_engine_mod"}, {"tail_engine_mod": ENGINE}, version="0.4.0")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "acme:\n  level: 7\nacmee: {}\ncontext:\n  engine: tail\n"
        "compression:\n  threshold: 0.6\n  protect_last_n: 2\n"
    )
    return home


def cli_json(home: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--home", str(home), *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_quality_bar_through_the_cli(acme_home: Path, tmp_path: Path) -> None:
    values, stderr = cli_json(acme_home, "config")
    shown = {v["key"]: (v["value"], v["source"]) for v in values["values"]}
    owners = {v["key"]: v["owner"] for v in values["values"]}
    # The third party's keys and the built-ins' are shown the same way, each with its plugin.
    assert owners["acme.level"] == "acme_section" and owners["skills.external_dirs"] == "skills"
    assert owners["agent.tool_use_enforcement"] == "guidance" and owners["timezone"] == "session_line"
    assert owners["compression.threshold"] == owners["agent.system_prompt"] == "hermes-core"
    assert shown["acme.level"] == (7, "file") and shown["acme.motto"] == ("be brief", "default")
    assert shown["compression.threshold"] == (0.6, "file") and shown["compression.protect_last_n"] == (2, "file")
    assert "acmee" in stderr and "'acme.level'" not in stderr and "unknown config key 'acme'" not in stderr

    hooks, _ = cli_json(acme_home, "hooks")
    identity = next(h for h in hooks if h["name"] == "hermes_prompt_identity")
    wrappers = {i["plugin"] for i in identity["impls"] if i["wrapper"]}
    assert wrappers == {"acme_old", "acme_new"}

    plugins, _ = cli_json(acme_home, "plugins")
    by_name = {p["name"]: p for p in plugins}
    assert by_name["acme_section"]["hooks"] == ["hermes_config_sections", "hermes_prompt_platform_hint"]
    assert all(by_name[n]["status"] == "active" for n in ("acme_section", "acme_old", "acme_new", "tail_engine"))

    engines, _ = cli_json(acme_home, "engines")
    tail = next(e for e in engines if e["name"] == "tail")
    assert tail["selected"] and tail["version"] == "0.4.0"

    prompt, _ = cli_json(acme_home, "prompt", "--cwd", str(tmp_path), "--context-length", "100000")
    assert "acme level 7: be brief" in prompt["prompt"]
    assert "(old-style wrapped)" in prompt["prompt"] and "(new-style wrapped)" in prompt["prompt"]

    session = Session.open(home=acme_home, cwd=tmp_path, context_length=100_000, persist=False)
    assert (session.engine.name, session.engine.threshold_tokens, session.engine.protect_last_n) == ("tail", 60_000, 2)
    assert session.config.acme.level == 7
    messages = [{"role": "user", "content": str(i)} for i in range(5)]
    out = session.host.engine_step("compress", session.engine, messages=messages, current_tokens=None,
                                   focus_topic=None, force=True)
    assert [m["content"] for m in out] == ["3", "4"]


@attrs.frozen(kw_only=True)
class Knobs:
    depth: int = field(2, lambda v: int(v) if str(v).isdigit() else (_ for _ in ()).throw(ValueError("expected digits")))
    label: str = "x"


class Declares:
    @hookimpl
    def hermes_config_sections(self) -> Any:
        return ConfigSection(name="knobs", model=Knobs, doc="Test knobs.")


def test_load_config_reads_declared_sections_and_warns_only_undeclared_keys() -> None:
    host = PluginHost.create(only=(), plugins=[(Declares(), "knobs_plugin")])
    sections = host.config_sections()
    assert ("knobs", "knobs_plugin") in [(s.name, s.plugin) for s in sections]
    with collecting() as warnings:
        config = load_config(data={"knobs": {"depth": "5", "lable": "y"}, "nobs": {}}, env={}, sections=sections)
    assert config.knobs.depth == 5 and config.knobs.label == "x"
    unknown = sorted(w.details["key"] for w in warnings if w.kind == "config_unknown_key")
    assert unknown == ["knobs.lable", "nobs"]
    with collecting() as warnings:
        unbound = load_config(data={"knobs": {}}, env={})  # the owners are not known yet: no verdict
    assert warnings == []
    with collecting() as warnings:
        bind_sections(unbound, [])  # bound with no plugin declaring it: the key is unknown
    assert [w.details["key"] for w in warnings] == ["knobs"]
    with pytest.raises(ConfigError, match="knobs.depth"):
        load_config(data={"knobs": {"depth": "deep"}}, env={}, sections=sections)
    defaults = load_config(data={}, env={}, sections=sections)
    assert defaults.knobs == Knobs()
    with pytest.raises(AttributeError):
        load_config(data={}, env={}).knobs  # noqa: B018


@attrs.frozen(kw_only=True)
class Threshold:
    threshold: float = 0.9


def test_a_key_already_owned_is_refused_with_a_warning() -> None:
    class Clash:
        @hookimpl
        def hermes_config_sections(self) -> Any:
            return [ConfigSection(name="compression", model=Threshold), ConfigSection(name="knobs", model=Knobs)]

    host = PluginHost.create(only=(), plugins=[(Declares(), "knobs_plugin"), (Clash(), "clash")])
    with collecting() as warnings:
        sections = host.config_sections()
    knobs = [(s.name, s.plugin) for s in sections if s.name in {"knobs", "compression"}]
    assert knobs in ([("knobs", "knobs_plugin")], [("knobs", "clash")])
    refused = [w for w in warnings if w.kind == "config_section_refused"]
    assert len(refused) == 2 and {w.plugin for w in refused} <= {"clash", "knobs_plugin"}
    assert any("'compression.threshold'" in w.message and "hermes-core" in w.message for w in refused)


def test_the_reference_documents_declared_sections() -> None:
    host = PluginHost.create(only=(), plugins=[(Declares(), "knobs_plugin")])
    text = render_config_markdown(host.config_sections())
    assert "### `knobs` (plugin `knobs_plugin`)" in text and "| `knobs.depth` | `2` |" in text
    assert "Test knobs." in text


def test_a_session_given_a_config_still_reads_the_plugin_sections(tmp_path: Path) -> None:
    host = PluginHost.create(only=(), plugins=[(Declares(), "knobs_plugin")])
    config = load_config(data={"knobs": {"depth": 4}}, env={})
    session = Session.open(cwd=tmp_path, home=tmp_path, host=host, config=config, persist=False)
    assert session.config.knobs.depth == 4


def test_a_disabled_plugins_keys_are_not_unknown_but_typos_still_are(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "skills:\n  external_dirs: [x]\nagent:\n  tool_use_enforcement: true\n  tool_use_enforcment: true\n"
        "plugins:\n  disabled: [skills, guidance]\n"
    )
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    keys = {v["key"] for v in json.loads(result.stdout)["values"]}
    assert "skills.external_dirs" not in keys and "agent.tool_use_enforcement" not in keys
    assert "unknown config key 'agent.tool_use_enforcment'" in result.stderr
    assert "'skills'" not in result.stderr and "'agent.tool_use_enforcement'" not in result.stderr


@attrs.frozen(kw_only=True)
class AgentExtra:
    verbosity: int = field(1, lambda v: int(v))


class ExtendsAgent:
    @hookimpl
    def hermes_config_sections(self) -> Any:
        return ConfigSection(name="agent", model=AgentExtra, env={"ACME_VERBOSITY": "agent.verbosity"})


def test_a_plugin_adds_keys_to_a_core_section_with_env_and_flag_overrides() -> None:
    host = PluginHost.create(only=(), plugins=[(ExtendsAgent(), "acme_agent")])
    declared = next(s for s in host.config_sections() if s.plugin == "acme_agent")
    with collecting() as warnings:
        config = host.bind_config(load_config(data={"agent": {"verbosity": 2, "pass_session_id": True}}, env={}))
    assert warnings == []
    assert config.section(declared).verbosity == 2 and config.agent.pass_session_id is True
    assert config.get("agent.verbosity") == 2 and config.owner("agent.verbosity") == "acme_agent"
    env = {"ACME_VERBOSITY": "5"}
    from_env = host.bind_config(load_config(data={"agent": {"verbosity": 2}}, env=env))
    assert from_env.section(declared).verbosity == 5 and from_env.sources["agent.verbosity"] == "env"
    flagged = host.bind_config(load_config(data={}, env={}, flags={"agent.verbosity": "7"}))
    assert flagged.section(declared).verbosity == 7 and flagged.sources["agent.verbosity"] == "flag"
    # Unbound (the plugin not loaded with this configuration): read from the file on first use.
    assert load_config(data={"agent": {"verbosity": 3}}, env={}).section(declared).verbosity == 3


def test_session_open_reads_and_parses_the_config_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_core.config as config_module

    (tmp_path / "config.yaml").write_text("memory:\n  memory_char_limit: 99\ncompression:\n  threshold: 0.6\n")
    reads: list[Path] = []
    real = config_module._read_yaml

    def counting(path: Path, **kwargs: Any) -> Any:
        reads.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(config_module, "_read_yaml", counting)
    session = Session.open(home=tmp_path, cwd=tmp_path, persist=False, env={})
    assert reads == [tmp_path / "config.yaml"]
    assert session.config.memory.memory_char_limit == 99 and session.config.compression.threshold == 0.6
    reads.clear()
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config", "--json"], catch_exceptions=False)
    assert result.exit_code == 0 and reads == [tmp_path / "config.yaml"]


def test_an_environment_variable_for_a_key_the_plugin_does_not_own_is_refused() -> None:
    class Stray:
        @hookimpl
        def hermes_config_sections(self) -> Any:
            return ConfigSection(name="stray", model=Knobs, env={"STRAY_THRESHOLD": "compression.threshold"})

    with collecting() as warnings:
        sections = PluginHost.create(only=(), plugins=[(Stray(), "stray")]).config_sections()
    assert "stray" not in {s.name for s in sections}
    assert any(w.kind == "config_section_refused" and "STRAY_THRESHOLD" in w.message for w in warnings)
