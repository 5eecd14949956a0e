"""The host on pluggy's own loop: per-implementation isolation, both wrapper styles, result
checks at the boundary, tracing and the recorder, engine fallback, the prompt-hook budget."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner

from hermes_core import Config, ContextFileLoader, HermesPluginError, PluginHost, PromptBlock, PromptContext, hookimpl
from hermes_core.cli import cli
from hermes_core.diagnostics import collecting
from hermes_core.records import SkillSource

from fake_dists import make_dist


def ctx(tmp_path: Path, host: PluginHost | None = None, config: Config | None = None) -> PromptContext:
    return PromptContext(cwd=tmp_path, home=tmp_path, config=config or Config(), host=host)


def test_old_style_hookwrapper_sees_and_may_force_the_result(plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    seen: list[str] = []

    class Old:
        @hookimpl(hookwrapper=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> Any:
            outcome = yield
            block = outcome.get_result()
            seen.append(block.name)
            outcome.force_result(PromptBlock(name="identity", text="forced"))

    register_plugin(Old(), "old_wrapper")
    blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert seen == ["identity"]
    assert blocks[0].text == "forced" and plugin == "old_wrapper"


def test_observing_wrapper_is_not_credited_with_the_block(plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    class Watch:
        @hookimpl(wrapper=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> Any:
            return (yield)

    register_plugin(Watch(), "watcher")
    blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert plugin == "identity" and blocks[0].plugin == "identity"


@pytest.mark.parametrize("style", ["wrapper", "hookwrapper"])
def test_a_raising_wrapper_loses_only_its_own_part(style: str, plugin_host: PluginHost, register_plugin: Any, tmp_path: Path) -> None:
    if style == "wrapper":
        class Bad:
            @hookimpl(wrapper=True)
            def hermes_prompt_identity(self, ctx: PromptContext) -> Any:
                yield
                raise RuntimeError("wrapper broke")
    else:
        class Bad:  # type: ignore[no-redef]
            @hookimpl(hookwrapper=True)
            def hermes_prompt_identity(self, ctx: PromptContext) -> Any:
                yield
                raise RuntimeError("wrapper broke")

    register_plugin(Bad(), "bad_wrapper")
    with collecting() as warnings:
        blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert plugin == "identity" and blocks[0].text.startswith("You are")
    assert [(w.kind, w.plugin) for w in warnings] == [("plugin_hook_failed", "bad_wrapper")]


def _misbehaving(style: str, how: str) -> object:
    def body(self: Any, ctx: PromptContext) -> Any:
        if how == "raises_first":
            raise RuntimeError("broke before yielding")
        if how == "never_yields":
            return
        yield
        yield

    return type("Bad", (), {"hermes_prompt_identity": hookimpl(**{style: True})(body)})()


@pytest.mark.parametrize("style", ["wrapper", "hookwrapper"])
@pytest.mark.parametrize(("how", "said"), [
    ("raises_first", "RuntimeError: broke before yielding"),
    ("never_yields", "did not yield"),
    ("yields_twice", "yielded twice"),
])
def test_a_misbehaving_wrapper_is_named_and_the_result_kept(
    style: str, how: str, said: str, plugin_host: PluginHost, register_plugin: Any, tmp_path: Path
) -> None:
    register_plugin(_misbehaving(style, how), "bad_wrapper")
    with collecting() as warnings:
        blocks, plugin = plugin_host.prompt_block("hermes_prompt_identity", ctx(tmp_path))
    assert plugin == "identity" and blocks[0].text.startswith("You are")
    assert [(w.kind, w.plugin) for w in warnings] == [("plugin_hook_failed", "bad_wrapper")]
    assert said in warnings[0].message
    if how != "raises_first":
        assert f"the {style} " in warnings[0].message


def test_raising_collect_plugin_loses_only_its_part(tmp_path: Path) -> None:
    class Good:
        @hookimpl
        def hermes_context_file_loaders(self, ctx: PromptContext) -> ContextFileLoader:
            return ContextFileLoader(name="good", rank=1.0, load=lambda c: ())

    class Bad:
        @hookimpl
        def hermes_context_file_loaders(self, ctx: PromptContext) -> Any:
            raise OSError("disk on fire")

    host = PluginHost.create(load_entry_points=False, plugins=[(Good(), "good"), (Bad(), "bad")])
    with collecting() as warnings:
        loaders = host.context_file_loaders(ctx(tmp_path, host))
    assert [loader.name for loader in loaders] == ["good"]
    assert [(w.kind, w.plugin) for w in warnings] == [("plugin_hook_failed", "bad")]


def _returning(hook: str, value: Any, **opts: Any) -> object:
    def impl(self: Any, **kwargs: Any) -> Any:
        return value

    # pluggy reads argument names from the signature; build one per hook
    code = {
        "hermes_prompt_identity": "def f(self, ctx): return value",
        "hermes_context_engines": "def f(self): return value",
        "hermes_tokenizer": "def f(self, model): return value",
        "hermes_skills_sources": "def f(self, ctx): return value",
    }[hook]
    namespace: dict[str, Any] = {"value": value}
    exec(code, namespace)  # noqa: S102 - a test helper building one-line impls
    return type("P", (), {hook: hookimpl(**opts)(namespace["f"])})()


@pytest.mark.parametrize("value", ["a bare string", 42, [1, 2], {"name": "identity"}])
def test_prompt_hook_of_the_wrong_type_is_dropped_and_blamed(value: Any, tmp_path: Path) -> None:
    host = PluginHost.create(only=(), plugins=[(_returning("hermes_prompt_identity", value), "garbage")])
    with collecting() as warnings:
        blocks, plugin = host.prompt_block("hermes_prompt_identity", ctx(tmp_path, host))
    assert plugin == "identity"  # only the garbage was lost: the built-in answered
    bad = [w for w in warnings if w.kind == "plugin_result_invalid"]
    assert len(bad) == 1 and bad[0].plugin == "garbage" and "hermes_prompt_identity" in bad[0].message


def test_engines_of_the_wrong_type_are_dropped_and_blamed() -> None:
    host = PluginHost.create(only=(), plugins=[
        (_returning("hermes_context_engines", ["not", "a", "mapping"]), "listy"),
        (_returning("hermes_context_engines", {"fake": "not a class"}), "stringy"),
    ])
    with collecting() as warnings:
        engines = host.context_engines()
    assert "compressor" in engines and "fake" not in engines
    assert sorted(w.plugin for w in warnings if w.kind == "plugin_result_invalid") == ["listy", "stringy"]


def test_garbage_tokenizer_and_skill_source_are_blamed(tmp_path: Path) -> None:
    host = PluginHost.create(only=(), plugins=[
        (_returning("hermes_tokenizer", "cl100k"), "bad_tokens"),
        (_returning("hermes_skills_sources", [SkillSource(path=tmp_path, precedence=5), "x"]), "bad_skills"),
    ])
    with collecting() as warnings:
        tokenizer = host.tokenizer("gpt-4o")
        sources = host.skill_sources(ctx(tmp_path, host))
    assert tokenizer.count("hello world") > 0
    assert all(s.path != tmp_path for s in sources)
    assert sorted(w.plugin for w in warnings if w.kind == "plugin_result_invalid") == ["bad_skills", "bad_tokens"]


def test_strict_mode_refuses_a_wrong_type(tmp_path: Path) -> None:
    from hermes_core import HermesPluginError

    host = PluginHost.create(only=(), strict=True, plugins=[(_returning("hermes_prompt_identity", 42), "garbage")])
    with pytest.raises(HermesPluginError, match="garbage"):
        host.prompt_block("hermes_prompt_identity", ctx(tmp_path, host))


def test_an_engine_that_fails_to_construct_falls_back_to_the_default() -> None:
    from hermes_core import ContextEngine

    class Fragile(ContextEngine):
        name = "fragile"

        def __init__(self, **kwargs: Any) -> None:
            raise RuntimeError("no GPU")

    class P:
        @hookimpl
        def hermes_context_engines(self) -> Any:
            return {"fragile": Fragile}

    host = PluginHost.create(only=(), plugins=[(P(), "fragile_plugin")])
    with collecting() as warnings:
        engine = host.create_engine("fragile", Config())
    assert engine.name == "compressor"
    assert [(w.kind, w.plugin) for w in warnings] == [("engine_construction_failed", "fragile_plugin")]
    assert "no GPU" in warnings[0].message


def test_an_engine_that_cannot_start_at_all_is_one_plugin_error_naming_it(site_dir: Path) -> None:
    # Strict (or no default to fall back on): a HermesPluginError naming the engine and its
    # plugin, which the CLI prints as one line with exit 2 (issue 32), never a traceback.
    body = (
        "from hermes_core import ContextEngine, hookimpl\n"
        "class Fragile(ContextEngine):\n"
        "    name = 'fragile'\n"
        "    def __init__(self, **kwargs):\n"
        "        raise RuntimeError('no GPU')\n"
        "@hookimpl\n"
        "def hermes_context_engines():\n"
        "    return {'fragile': Fragile}\n"
    )
    make_dist(site_dir, "acme-fragile", {"acme_fragile": "acme_fragile_mod"}, {"acme_fragile_mod": body})
    host = PluginHost.create(strict=True)
    with pytest.raises(HermesPluginError, match="engine 'fragile' .*acme_fragile.* failed to start: RuntimeError: no GPU"):
        host.create_engine("fragile", Config())
    transcript = site_dir / "t.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]))
    result = CliRunner().invoke(cli, ["--strict-plugins", "compress", str(transcript), "--engine", "fragile"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and "failed to start: RuntimeError: no GPU" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("body", ["raise SystemExit(3)\n", "raise KeyboardInterrupt\n"])
def test_exit_at_import_is_a_failed_plugin_and_the_cli_keeps_running(body: str, site_dir: Path) -> None:
    make_dist(site_dir, "acme-exit", {"acme_exit": "acme_exit_mod"}, {"acme_exit_mod": body})
    host = PluginHost.create()
    assert host.records["acme_exit"].status == "failed"
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0
    assert any(r["name"] == "acme_exit" and r["status"] == "failed" for r in json.loads(result.stdout))


def test_historic_hook_of_a_late_plugin_is_isolated() -> None:
    class Late:
        @hookimpl
        def hermes_plugin_host_ready(self, host: Any) -> None:
            raise RuntimeError("not ready")

        @hookimpl
        def hermes_prompt_platform_hint(self, ctx: Any) -> Any:
            return None

    host = PluginHost.create(only=())
    with collecting() as warnings:
        host.register(Late(), "late")
    assert host.records["late"].status == "active"
    assert [(w.kind, w.plugin) for w in warnings] == [("plugin_hook_failed", "late")]


def test_hook_recorder_sees_every_call_of_a_whole_session(plugin_host: PluginHost, hook_recorder: Any, tmp_path: Path) -> None:
    from hermes_core import Session

    session = Session.open(cwd=tmp_path, home=tmp_path, host=plugin_host, model="gpt-4o", context_length=100_000)
    assert session.system_prompt
    hooks = {call.hook for call in hook_recorder}
    assert {"hermes_engine_on_session_start", "hermes_prompt_identity", "hermes_context_file_loaders"} <= hooks
    identity = hook_recorder.by_hook("hermes_prompt_identity")[0]
    assert identity.plugin == "identity" and "ctx" in identity.args
    assert "PromptBlock" in identity.result and identity.seconds >= 0
    loaders = {call.plugin for call in hook_recorder.by_hook("hermes_context_file_loaders")}
    assert {"hermes_md", "agents_md"} <= loaders


def test_trace_shows_collect_hooks_with_arguments_and_results(capture_events: list[dict[str, Any]], tmp_path: Path) -> None:
    host = PluginHost.create(only=(), trace=True)
    host.context_file_loaders(ctx(tmp_path, host))
    called = [e for e in capture_events if e["event"] == "hook_called" and e["hook"] == "hermes_context_file_loaders"]
    assert called and "ctx" in called[0]["args"]
    each = [e for e in capture_events if e["event"] == "hook_impl_returned" and e["hook"] == "hermes_context_file_loaders"]
    assert {"hermes_md", "agents_md"} <= {e["plugin"] for e in each}
    assert all("ContextFileLoader" in e["result"] and e["ms"] >= 0 for e in each)


def test_a_slow_prompt_hook_is_skipped_after_its_budget_without_a_thread_per_call(tmp_path: Path) -> None:
    release = threading.Event()

    class Slow:
        @hookimpl
        def hermes_prompt_platform_hint(self, ctx: PromptContext) -> Any:
            release.wait(30)  # a hang guard: a host that waited for it would show "late"
            return PromptBlock(name="platform", text="late")

    host = PluginHost.create(only=(), plugins=[(Slow(), "slowpoke")])
    config = attrs.evolve(Config(), plugins=attrs.evolve(Config().plugins, prompt_hook_budget=0.3))
    before = threading.active_count()
    try:
        for _ in range(4):
            with collecting() as warnings:
                blocks, plugin = host.prompt_block("hermes_prompt_platform_hint", ctx(tmp_path, host, config))
            assert blocks == () and plugin is None
            assert [(w.kind, w.plugin) for w in warnings] == [("prompt_hook_timed_out", "slowpoke")]
            assert "slowpoke" in warnings[0].message
        assert threading.active_count() - before <= 2
    finally:
        release.set()
