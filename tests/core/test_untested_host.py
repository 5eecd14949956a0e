"""Paths of the plugin host and its per-implementation guard that the rest of the suite never
reached: ill-typed results of each checked hook, wrappers that misbehave, observers of
wrappers, entry-point collisions, a missing core, plugins that fail validation."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Config, HermesPluginError, PluginHost, hookimpl
from hermes_core.diagnostics import collecting
from hermes_core.hookguard import CallLog, HookCall, summarize
from hermes_core.host import _dist_name_version

from fake_dists import make_dist


def bare(*plugins: tuple[object, str], strict: bool = False) -> PluginHost:
    """A host with only the given plugins (no entry points)."""
    return PluginHost.create(load_entry_points=False, strict=strict, plugins=plugins)


def answering(hook: str, value: Any) -> object:
    """A plugin whose one implementation of ``hook`` answers ``value``."""

    class Plugin:
        pass

    def impl(self: Any, **kwargs: Any) -> Any:
        return value

    impl.__name__ = hook
    setattr(Plugin, hook, hookimpl(specname=hook)(_with_args(hook, impl)))
    return Plugin()


def _with_args(hook: str, impl: Any) -> Any:
    # pluggy reads the implementation's argument names; give it exactly the spec's.
    names = {
        "hermes_context_scan": "text, source, scope",
        "hermes_tokenizer": "model",
        "hermes_environment_runner": "backend",
        "hermes_tools_assemble": "tools, ctx",
        "hermes_report_html": "request",
    }[hook]
    namespace: dict[str, Any] = {"impl": impl}
    exec(f"def {hook}(self, {names}):\n    return impl(self)\n", namespace)  # noqa: S102
    return namespace[hook]


# --- hookguard: summaries and attribution ---------------------------------------------------


def test_summarize_survives_a_broken_repr() -> None:
    # reprlib picks its list printer by the type's name, then asks for the length: a hostile
    # object named "list" makes reprlib itself raise.
    def broken_len(self: Any) -> int:
        raise RuntimeError("no length for you")

    hostile = type("list", (), {"__len__": broken_len})()
    assert summarize(hostile) == "<list>"


def test_call_log_owner_is_none_for_a_value_no_plugin_returned() -> None:
    log = CallLog()
    produced = ["a"]
    log.answers.append(("p", produced))
    assert log.owner(produced) == "p"
    assert log.owner(["a"]) is None  # equal but not the same object: nobody produced it


# --- hookguard: each check drops an ill-typed result with a warning naming the plugin ------


@pytest.mark.parametrize(
    ("hook", "kwargs", "value", "reason"),
    [
        ("hermes_context_scan", {"text": "t", "source": "s", "scope": "x"}, {"a": 1}, "expected a sequence of strings, got dict"),
        ("hermes_context_scan", {"text": "t", "source": "s", "scope": "x"}, ["ok", 3], "expected a sequence of strings"),
        ("hermes_tokenizer", {"model": "m"}, object(), "object has no count method"),
        ("hermes_environment_runner", {"backend": "b"}, 42, "expected a callable, got int"),
        ("hermes_tools_assemble", {"tools": [], "ctx": None}, {"not": "a list"}, "expected a list of tool definitions, got dict"),
    ],
)
def test_an_ill_typed_result_is_dropped_with_a_warning(hook: str, kwargs: dict[str, Any], value: Any, reason: str) -> None:
    host = bare((answering(hook, value), "odd"))
    with collecting() as warnings:
        result = getattr(host.pm.hook, hook)(**kwargs)
    assert result in (None, [])
    [warning] = [w for w in warnings if w.kind == "plugin_result_invalid"]
    assert warning.plugin == "odd" and reason in warning.message and hook in warning.message


def test_an_ill_typed_result_is_an_error_in_strict_mode() -> None:
    host = bare((answering("hermes_environment_runner", 42), "odd"), strict=True)
    with pytest.raises(HermesPluginError, match="expected a callable"):
        host.pm.hook.hermes_environment_runner(backend="b")


def test_a_lone_string_from_context_scan_is_one_finding() -> None:
    host = bare((answering("hermes_context_scan", "prompt injection"), "scanner"))
    assert host.scan_content("text", source="AGENTS.md", scope="project") == ("prompt injection",)


def test_should_compress_must_answer_a_bool_and_a_reason(plugin_host: PluginHost) -> None:
    class Bad:
        @hookimpl(tryfirst=True)
        def hermes_engine_should_compress(self, engine: Any, prompt_tokens: Any) -> Any:
            return "yes please"

    plugin_host.register(Bad(), "bad_decider")
    try:
        engine = plugin_host.create_engine("compressor", Config())
        with collecting() as warnings:
            answer = plugin_host.engine_step("should_compress", engine, prompt_tokens=10)
    finally:
        plugin_host.unregister("bad_decider")
    assert isinstance(answer, tuple) and isinstance(answer[0], bool)  # the engine's own answer
    assert any("expected (bool, reason), got 'yes please'" in w.message for w in warnings)


# --- hookguard: wrappers ----------------------------------------------------------------------


def test_a_collect_hook_wrapper_returning_a_non_list_keeps_the_inner_results() -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def hermes_context_scan(self, text: str, source: str, scope: str) -> Any:
            yield
            return "not a list"

    host = bare((answering("hermes_context_scan", ["found"]), "scanner"), (Wrapper(), "wrapper"))
    with collecting() as warnings:
        assert host.pm.hook.hermes_context_scan(text="t", source="s", scope="x") == [("found",)]
    assert any("must return a list, got str" in w.message and w.plugin == "wrapper" for w in warnings)


class _Raising:
    @hookimpl
    def hermes_environment_runner(self, backend: str) -> Any:
        raise RuntimeError("inner failed")


def test_a_wrapper_may_handle_the_inner_error_in_strict_mode() -> None:
    def fallback() -> None:
        return None

    class Handler:
        @hookimpl(wrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            try:
                return (yield)
            except HermesPluginError:
                return fallback

    host = bare((_Raising(), "raising"), (Handler(), "handler"), strict=True)
    assert host.pm.hook.hermes_environment_runner(backend="b") is fallback


def test_a_wrapper_that_does_not_handle_the_inner_error_lets_it_through() -> None:
    class Passive:
        @hookimpl(wrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            return (yield)

    host = bare((_Raising(), "raising"), (Passive(), "passive"), strict=True)
    with pytest.raises(HermesPluginError, match="inner failed"):
        host.pm.hook.hermes_environment_runner(backend="b")


def test_observers_hear_both_wrapper_styles() -> None:
    def runner() -> None:
        return None

    class New:
        @hookimpl(wrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            return (yield)

    class Old:
        @hookimpl(hookwrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            yield

    host = bare((answering("hermes_environment_runner", runner), "impl"), (New(), "new"), (Old(), "old"))
    calls: list[HookCall] = []
    host.observe(calls.append)
    host.pm.hook.hermes_environment_runner(backend="b")
    wrappers = {c.plugin for c in calls if c.wrapper}
    assert wrappers == {"new", "old"}
    assert all(c.hook == "hermes_environment_runner" for c in calls)


def test_an_old_style_wrapper_forcing_an_ill_typed_result_is_undone() -> None:
    def runner() -> None:
        return None

    class Forcer:
        @hookimpl(hookwrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            outcome = yield
            outcome.force_result("not callable")

    host = bare((answering("hermes_environment_runner", runner), "impl"), (Forcer(), "forcer"))
    with collecting() as warnings:
        assert host.pm.hook.hermes_environment_runner(backend="b") is runner
    assert any(w.kind == "plugin_result_invalid" and w.plugin == "forcer" for w in warnings)


def test_an_old_style_wrapper_changing_an_unchecked_result_is_credited() -> None:
    class Forcer:
        @hookimpl(hookwrapper=True)
        def hermes_report_html(self, request: Any) -> Any:
            outcome = yield
            outcome.force_result("<p>wrapped</p>")

    host = bare((answering("hermes_report_html", "<p>inner</p>"), "impl"), (Forcer(), "forcer"))
    value, record = host._call("hermes_report_html", {"request": None})
    assert value == "<p>wrapped</p>"
    assert record.owner(value) == "forcer"


# --- host: loading ----------------------------------------------------------------------------


PLUGIN = """
from hermes_core import hookimpl

@hookimpl
def hermes_report_html(request):
    return None
"""


def test_one_plugin_name_from_two_distributions_fails_the_second(site_dir: Path) -> None:
    make_dist(site_dir, "acme-one", {"acme_twin": "acme_one_mod"}, {"acme_one_mod": PLUGIN})
    make_dist(site_dir, "acme-two", {"acme_twin": "acme_two_mod"}, {"acme_two_mod": PLUGIN})
    with collecting() as warnings:
        host = PluginHost.create()
    record = host.records["acme_twin"]
    assert record.status == "failed" and record.distribution == "acme-two"
    assert "declared by both acme-one and acme-two" in (record.error or "")
    assert any(w.kind == "plugin_load_failed" and w.plugin == "acme_twin" for w in warnings)
    assert host.records["identity"].status == "active"


def test_a_host_without_the_core_distribution_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])
    with pytest.raises(HermesPluginError, match="hermes-core is not installed"):
        PluginHost.create()


def test_a_plugin_pluggy_refuses_is_recorded_failed() -> None:
    class WrongArgs:
        @hookimpl
        def hermes_tokenizer(self, model: str, no_such_argument: int) -> Any:
            return None

    with collecting() as warnings:
        host = bare((WrongArgs(), "wrong_args"))
    record = host.records["wrong_args"]
    assert record.status == "failed" and "no_such_argument" in (record.error or "")
    assert not host.pm.has_plugin("wrong_args")
    assert any(w.kind == "plugin_load_failed" for w in warnings)


def test_an_implementation_of_a_hook_outside_hermes_is_refused_at_check_pending() -> None:
    class Foreign:
        @hookimpl
        def other_project_hook(self) -> None:
            return None

    with collecting() as warnings:
        host = bare((Foreign(), "foreign"))
    record = host.records["foreign"]
    assert record.status == "failed" and "other_project_hook" in (record.error or "")
    assert "plugin 'foreign' from <registered>" in (record.error or "")
    assert not host.pm.has_plugin("foreign")
    assert any(w.kind == "plugin_load_failed" and w.plugin == "foreign" for w in warnings)


SECTIONS = """
import attrs
from hermes_core.plugin import ConfigSection

@attrs.frozen
class Opts:
    level: int = 1

class Holder:
    class Inner:
        @staticmethod
        def hermes_config_sections():
            return ConfigSection(name="acme_nested", model=Opts)
"""


def test_a_disabled_plugin_declares_its_sections_through_a_dotted_attribute(site_dir: Path) -> None:
    make_dist(site_dir, "acme-nested", {"acme_nested": "acme_nested_mod:Holder.Inner"}, {"acme_nested_mod": SECTIONS})
    make_dist(site_dir, "acme-broken", {"acme_broken": "acme_broken_mod"}, {"acme_broken_mod": "raise ImportError('gone')\n"})
    host = PluginHost.create(blocked=("acme_nested", "acme_broken"))
    names = [s.name for s in host.disabled_config_sections()]
    assert names == ["acme_nested"]  # the broken one is skipped, not fatal


def test_a_summariser_name_registered_twice_is_an_error() -> None:
    class A:
        @hookimpl
        def hermes_summarizers(self) -> Any:
            return {"same": lambda **kw: None}

    host = bare((A(), "first"), (A(), "second"))
    with pytest.raises(HermesPluginError, match="summariser 'same' is registered by both"):
        host.summarizers()


def test_a_distribution_without_metadata_is_unknown() -> None:
    class NoMetadata:
        metadata = None

    assert _dist_name_version(None) == ("unknown", "?")
    assert _dist_name_version(NoMetadata()) == ("unknown", "?")  # type: ignore[arg-type]


# --- host_engines ----------------------------------------------------------------------------


def test_a_failing_engine_answers_no_compression_and_observers_hear_it(plugin_host: PluginHost) -> None:
    heard: list[tuple[str, str]] = []

    class Ear:
        @hookimpl
        def hermes_engine_on_error(self, engine: Any, step: str, error: BaseException) -> None:
            heard.append((step, str(error)))

    plugin_host.register(Ear(), "ear")
    try:
        engine = plugin_host.create_engine("compressor", Config())

        def broken(prompt_tokens: Any) -> Any:
            raise RuntimeError("engine broke")

        engine.should_compress_info = broken  # type: ignore[method-assign]
        with collecting() as warnings:
            assert plugin_host.engine_step("should_compress", engine, prompt_tokens=5) == (False, "error")
    finally:
        plugin_host.unregister("ear")
    assert heard == [("should_compress", "engine broke")]
    assert any(w.kind == "engine_step_failed" for w in warnings)


def test_strict_mode_engine_failure_is_heard_then_raised() -> None:
    heard: list[str] = []

    class Ear:
        @hookimpl
        def hermes_engine_on_error(self, engine: Any, step: str, error: BaseException) -> None:
            heard.append(type(error).__name__)

    host = PluginHost.create(strict=True, plugins=[(Ear(), "ear")])
    engine = host.create_engine("compressor", Config())

    def broken(prompt_tokens: Any) -> Any:
        raise RuntimeError("engine broke")

    engine.should_compress_info = broken  # type: ignore[method-assign]
    with pytest.raises(HermesPluginError, match="engine broke"):
        host.engine_step("should_compress", engine, prompt_tokens=5)
    assert heard == ["RuntimeError"]  # the cause, not the wrapping error


def test_a_collect_hook_wrapper_may_replace_the_results_with_a_list() -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def hermes_context_scan(self, text: str, source: str, scope: str) -> Any:
            inner = yield
            return [*inner, ("added",)]

    host = bare((answering("hermes_context_scan", ["found"]), "scanner"), (Wrapper(), "wrapper"))
    assert host.pm.hook.hermes_context_scan(text="t", source="s", scope="x") == [("found",), ("added",)]


def test_a_wrapper_yielding_again_after_the_inner_error_lets_the_error_through() -> None:
    class Stubborn:
        @hookimpl(wrapper=True)
        def hermes_environment_runner(self, backend: str) -> Any:
            try:
                return (yield)
            except HermesPluginError:
                yield  # a second yield: the guard closes it and the inner error stands
                return None

    host = bare((_Raising(), "raising"), (Stubborn(), "stubborn"), strict=True)
    with pytest.raises(HermesPluginError, match="inner failed"):
        host.pm.hook.hermes_environment_runner(backend="b")


def test_a_wrapper_adding_a_non_format_to_transcript_formats_is_named_and_left_out() -> None:
    class Adder:
        @hookimpl(wrapper=True)
        def hermes_transcript_formats(self) -> Any:
            inner = yield
            return [*inner, 7]

    host = PluginHost.create(plugins=[(Adder(), "adder")])
    with collecting() as warnings:
        formats = host.transcript_formats()
    assert "openai" in formats and all(hasattr(f, "detect") for f in formats.values())
    [warning] = [w for w in warnings if w.kind == "plugin_result_invalid"]
    assert "answered 7" in warning.message and "hermes_transcript_formats" in warning.message


def test_a_tracing_host_logs_each_hook_call(capture_events: list[dict[str, Any]]) -> None:
    host = bare((answering("hermes_environment_runner", len), "impl"))
    traced = PluginHost.create(load_entry_points=False, trace=True, plugins=[(answering("hermes_environment_runner", len), "impl")])
    def runner_events() -> set[str]:
        return {e["event"] for e in capture_events if e.get("hook") == "hermes_environment_runner"}

    host.pm.hook.hermes_environment_runner(backend="b")
    assert not runner_events()
    traced.pm.hook.hermes_environment_runner(backend="b")
    assert runner_events() == {"hook_called", "hook_returned", "hook_impl_returned"}
