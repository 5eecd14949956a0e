"""The plugin host: resilient loading, blocking, collisions, attribution, tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import (
    Config,
    ContextFileLoader,
    HermesPluginError,
    PluginHost,
    PromptBlock,
    PromptContext,
    hookimpl,
)
from hermes_core.cli import cli
from hermes_core.diagnostics import collecting
from hermes_core.errors import UnknownEngineError

from fake_dists import make_dist

ENGINE_MODULE = """
from hermes_core import ContextEngine, hookimpl

class {cls}(ContextEngine):
    name = "{name}"
    def compress(self, messages, current_tokens=None, focus_topic=None, force=False):
        return messages

@hookimpl
def hermes_context_engines():
    return {{"{name}": {cls}}}
"""


def ctx(tmp_path: Path, host: PluginHost | None = None) -> PromptContext:
    return PromptContext(cwd=tmp_path, home=tmp_path, config=Config(), host=host)


def test_broken_third_party_plugin_is_recorded_as_failed(site_dir: Path) -> None:
    make_dist(
        site_dir, "acme-broken", {"acme_broken": "acme_broken_mod"},
        {"acme_broken_mod": "import does_not_exist_anywhere\n"},
    )
    with collecting() as warnings:
        host = PluginHost.create()
    record = host.records["acme_broken"]
    assert record.status == "failed"
    assert record.distribution == "acme-broken"
    assert "does_not_exist_anywhere" in (record.error or "")
    assert any(w.kind == "plugin_load_failed" and w.plugin == "acme_broken" for w in warnings)
    # Everything else still works.
    assert host.records["identity"].status == "active"
    assert "compressor" in host.context_engines()


def test_broken_plugin_leaves_every_cli_command_working(site_dir: Path) -> None:
    make_dist(site_dir, "acme-broken", {"acme_broken": "acme_broken_mod"}, {"acme_broken_mod": "raise RuntimeError('boom at import')\n"})
    runner = CliRunner()
    for args in (["hooks"], ["engines"], ["config"], ["plugins"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    rows = json.loads(runner.invoke(cli, ["plugins", "--json"]).stdout)
    broken = next(r for r in rows if r["name"] == "acme_broken")
    assert broken["status"] == "failed" and "boom at import" in broken["error"]
    table = runner.invoke(cli, ["plugins"]).output
    assert "acme_broken" in table and "failed" in table


def test_strict_mode_turns_a_broken_plugin_into_an_error(site_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dist(site_dir, "acme-broken", {"acme_broken": "acme_broken_mod"}, {"acme_broken_mod": "import nope_nope\n"})
    with pytest.raises(HermesPluginError, match="acme_broken"):
        PluginHost.create(strict=True)
    monkeypatch.setenv("HERMES_STRICT_PLUGINS", "1")
    with pytest.raises(HermesPluginError):
        PluginHost.create()
    result = CliRunner().invoke(cli, ["--strict-plugins", "hooks"])
    assert result.exit_code == 2 and "acme_broken" in result.output


def test_third_party_engine_is_listed_and_selectable(site_dir: Path, tmp_path: Path) -> None:
    make_dist(
        site_dir, "hermes-engine-fancy", {"fancy_engine": "fancy_engine_mod"},
        {"fancy_engine_mod": ENGINE_MODULE.format(cls="FancyEngine", name="fancy")}, version="0.3.0",
    )
    host = PluginHost.create()
    spec = host.context_engines()["fancy"]
    assert (spec.distribution, spec.version, spec.plugin) == ("hermes-engine-fancy", "0.3.0", "fancy_engine")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("context:\n  engine: fancy\n")
    rows = json.loads(CliRunner().invoke(cli, ["--home", str(home), "engines", "--json"]).stdout)
    fancy = next(r for r in rows if r["name"] == "fancy")
    assert fancy == {"name": "fancy", "plugin": "fancy_engine", "distribution": "hermes-engine-fancy", "version": "0.3.0", "selected": True, "default": False}
    from hermes_core.config import load_config

    engine = host.create_engine(load_config(home=home).context.engine, load_config(home=home))
    assert type(engine).__name__ == "FancyEngine"


def test_engine_name_collision_names_both_distributions(site_dir: Path) -> None:
    make_dist(site_dir, "hermes-engine-one", {"one": "one_mod"}, {"one_mod": ENGINE_MODULE.format(cls="A", name="dup")})
    make_dist(site_dir, "hermes-engine-two", {"two": "two_mod"}, {"two_mod": ENGINE_MODULE.format(cls="B", name="dup")})
    host = PluginHost.create()
    with pytest.raises(HermesPluginError) as info:
        host.context_engines()
    assert "hermes-engine-one" in str(info.value) and "hermes-engine-two" in str(info.value)
    result = CliRunner().invoke(cli, ["engines"])
    assert result.exit_code == 2 and "dup" in result.output


def test_unknown_engine_lists_the_available_ones(tmp_path: Path) -> None:
    host = PluginHost.create(only=())
    with pytest.raises(UnknownEngineError) as info:
        host.create_engine("nope", Config())
    assert "nope" in str(info.value) and "compressor" in str(info.value)


@pytest.mark.parametrize("how", ["argument", "env", "config", "flag"])
def test_blocking_a_plugin(how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if how == "flag":
        rows = json.loads(CliRunner().invoke(cli, ["--disable", "identity", "plugins", "--json"]).stdout)
        assert next(r for r in rows if r["name"] == "identity")["status"] == "blocked"
        return
    kwargs: dict[str, Any] = {}
    if how == "argument":
        kwargs["blocked"] = ["identity"]
    elif how == "env":
        monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "identity, guidance")
    else:
        kwargs["config"] = Config().__class__(plugins=Config().plugins.__class__(disabled=("identity",)))
    host = PluginHost.create(only=(), **kwargs)
    assert host.records["identity"].status == "blocked"
    info = next(h for h in host.hooks() if h.name == "hermes_prompt_identity")
    assert all(i.plugin != "identity" for i in info.impls)


def test_blocked_builtin_can_be_replaced(tmp_path: Path) -> None:
    class MyIdentity:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="identity", text="I am Acme's agent.")

    host = PluginHost.create(only=(), blocked=["identity"], plugins=[(MyIdentity(), "acme_identity")])
    blocks, plugin = host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert plugin == "acme_identity" and blocks[0].text == "I am Acme's agent."


def test_misspelled_hook_drops_only_that_implementation_and_suggests_the_name(tmp_path: Path) -> None:
    class Typo:
        @hookimpl
        def hermes_prompt_identiy(self, ctx: Any) -> None:  # sic
            return None

        @hookimpl
        def hermes_prompt_platform_hint(self, ctx: Any) -> PromptBlock:
            return PromptBlock(name="platform", text="still here")

    with collecting() as warnings:
        host = PluginHost.create(only=(), plugins=[(Typo(), "typo_plugin")])
    record = host.records["typo_plugin"]
    assert record.status == "active" and record.hooks == ("hermes_prompt_platform_hint",)
    assert "hermes_prompt_identiy" in (record.error or "")
    unknown = [w for w in warnings if w.kind == "plugin_hook_unknown"]
    assert unknown and unknown[0].plugin == "typo_plugin"
    assert "did you mean 'hermes_prompt_identity'" in unknown[0].message
    blocks, plugin = host.prompt_block("hermes_prompt_platform_hint", ctx(tmp_path, host))
    assert plugin == "typo_plugin" and blocks[0].text == "still here"
    with pytest.raises(HermesPluginError, match="typo_plugin"):
        PluginHost.create(only=(), strict=True, plugins=[(Typo(), "typo_plugin")])


def test_third_party_block_wins_over_builtin_without_tryfirst(plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    class Mine:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="identity", text="third party")

    register_plugin(Mine(), "mine")
    blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert (blocks[0].text, blocks[0].plugin, plugin) == ("third party", "mine", "mine")


def test_raising_block_plugin_loses_only_its_answer(plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    class Broken:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            raise ValueError("cannot think today")

    register_plugin(Broken(), "broken_identity")
    with collecting() as warnings:
        blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    # Pluggy goes on to the next implementation: the built-in answers in its place.
    assert plugin == "identity" and blocks[0].plugin == "identity"
    assert warnings[0].kind == "plugin_hook_failed"
    assert warnings[0].plugin == "broken_identity" and "identity" in warnings[0].message
    assert "cannot think today" in warnings[0].message
    strict = PluginHost.create(only=(), strict=True, plugins=[(Broken(), "broken_identity")])
    with pytest.raises(HermesPluginError, match="broken_identity"):
        strict.prompt_block("hermes_prompt_identity", ctx(tmp_path))


def test_wrapper_sees_and_may_edit_the_result(plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    class Shout:
        @hookimpl(wrapper=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> Any:
            block = yield
            return PromptBlock(name="identity", text=block.text.upper(), plugin="shout")

    register_plugin(Shout(), "shout")
    blocks, _ = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert blocks[0].text.startswith("YOU ARE")


def test_loader_order_follows_rank_not_registration(tmp_path: Path) -> None:
    def loader(name: str, rank: float) -> Any:
        class P:
            @hookimpl
            def hermes_context_file_loaders(self, ctx: PromptContext) -> ContextFileLoader:
                return ContextFileLoader(name=name, rank=rank, load=lambda c: ())

        return P()

    for order in ([("b", 2.5), ("a", 1.5)], [("a", 1.5), ("b", 2.5)]):
        host = PluginHost.create(load_entry_points=False, plugins=[(loader(n, r), f"p_{n}") for n, r in order])
        assert [loader.name for loader in host.context_file_loaders(ctx(tmp_path, host))] == ["a", "b"]


def test_trace_hooks_logs_calls(capture_events: list[dict[str, Any]], tmp_path: Path) -> None:
    host = PluginHost.create(only=(), trace=True)
    host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    events = [e for e in capture_events if e.get("hook") == "hermes_prompt_identity"]
    assert events[0]["event"] == "hook_called" and events[0]["impls"] == ["identity"]
    assert events[0]["log_level"] == "debug"
    assert any(e["event"] == "hook_returned" for e in events)


def test_many_sessions_have_their_own_engines() -> None:
    host = PluginHost.create(only=())
    a = host.create_engine("compressor", Config())
    b = host.create_engine("compressor", Config())
    host.engine_step("update_from_response", a, usage={"prompt_tokens": 123})
    assert (a.last_prompt_tokens, b.last_prompt_tokens) == (123, 0)


def test_engine_step_failure_is_reported_and_loses_nothing(capture_events: list[dict[str, Any]]) -> None:
    class Saboteur:
        @hookimpl(tryfirst=True)
        def hermes_engine_compress(self, engine: Any, messages: Any, current_tokens: Any, focus_topic: Any, force: Any) -> Any:
            raise RuntimeError("sabotage")

    host = PluginHost.create(only=(), plugins=[(Saboteur(), "saboteur")])
    engine = host.create_engine("compressor", Config())
    messages = [{"role": "user", "content": "hi"}]
    assert host.engine_step("compress", engine, messages=messages, current_tokens=None, focus_topic=None, force=True) is messages
    assert host.engine_step("should_compress", engine, prompt_tokens=10) is not None
    failed = [e for e in capture_events if e["event"] == "engine_step_failed"]
    assert failed and failed[0]["plugin"] == "saboteur"


def test_a_distribution_without_a_name_does_not_break_loading(site_dir: Path) -> None:
    # Broken metadata on sys.path (no Name:) must not stop the host from sorting entry points.
    make_dist(site_dir, "nameless", {"nameless_plugin": "nameless_mod"}, {"nameless_mod": "X = 1\n"})
    info = next(site_dir.glob("*.dist-info"))
    (info / "METADATA").write_text("Metadata-Version: 2.1\n")
    host = PluginHost.create()
    assert "identity" in {r.name for r in host.plugins()}
