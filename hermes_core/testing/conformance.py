"""``EngineConformance``: the tests every context engine should pass.

Subclass it with ``engine_name`` (and ``xfail_reasons``: strict expected failures, so a fix
surfaces as an unexpected pass); it checks discovery, registration, signatures, lifecycle hooks,
idempotent teardown, pairing at every cut, budgets and error reporting (docs/plugin-guide.md).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, ClassVar

import pytest

from hermes_core.config import Config
from hermes_core.engine import ContextEngine
from hermes_core.hookspecs import hookimpl
from hermes_core.host import PluginHost
from hermes_core.pairing import is_valid_pairing, pairing_problems, pending_calls
from hermes_core.tokens import estimate_messages_tokens

LIFECYCLE = (
    "on_session_start",
    "update_from_response",
    "should_compress",
    "should_compress_info",
    "compress",
    "on_session_end",
    "on_session_reset",
    "has_content_to_compress",
    "should_defer_preflight_to_real_usage",
    "get_status",
    "update_model",
)


def long_history(turns: int = 60, result_chars: int = 4_000) -> list[dict[str, Any]]:
    """A deterministic tool-heavy conversation with paired calls and results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a test agent."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"step {i}: read file_{i}.py and fix it"})
        call_id = f"call_{i}"
        messages.append({
            "role": "assistant",
            "content": "",
            "tool_calls": [{
                "id": call_id, "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"file_{i}.py"})},
            }],
        })
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"# file {i}\n" + "x = 1\n" * (result_chars // 6)})
        messages.append({"role": "assistant", "content": f"Fixed file_{i}.py."})
    messages.append({"role": "user", "content": "now run the tests"})
    return messages


def pairs_intact(messages: list[dict[str, Any]]) -> bool:
    """Valid by the provider pairing rule (``hermes_core.pairing``): each result right after
    the call it answers, one per call; only the newest message's calls may be pending."""
    return is_valid_pairing(messages)


def reused_id_history(rounds: int = 14, result_chars: int = 3_000) -> list[dict[str, Any]]:
    """A tool-heavy history as providers really send it: ids reused across turns (gpt-4o,
    SWE-agent 1.x) and within one message's parallel calls, results of parallel calls out of
    order, and a few plain exchanges between rounds."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a test agent."}]
    ids = ("call_0", "call_1", "call_0")
    for r in range(rounds):
        if r % 4 == 0:
            messages.append({"role": "user", "content": f"round {r}: check the logs and fix what fails"})
        group = ids[: 1 + r % 3]
        calls = [{"id": ident, "type": "function",
                  "function": {"name": "terminal", "arguments": json.dumps({"command": f"step {r}.{k}"})}}
                 for k, ident in enumerate(group)]
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        for k in reversed(range(len(group))):
            messages.append({"role": "tool", "tool_call_id": group[k],
                             "content": f"step {r}.{k}\n" + "output line\n" * (result_chars // 12)})
        if r % 3 == 2:
            messages.append({"role": "assistant", "content": f"Round {r} done."})
    return messages


def check_pairing_at_every_cut(engine: ContextEngine, history: list[dict[str, Any]] | None = None) -> None:
    """Compress every prefix of a reused-id history (so the engine's cut falls at every
    position, pending calls included) and require output valid by ``hermes_core.pairing``:
    results right after their calls, one per call, only the newest message's calls pending."""
    history = history if history is not None else reused_id_history()
    for end in range(2, len(history) + 1):
        messages = history[:end]
        if pairing_problems(messages):
            continue  # only valid inputs bind the engine
        out = engine.compress(list(messages), force=True)
        problems = pairing_problems(out)
        assert not problems, f"compressing the first {end} messages broke pairing: {problems[:3]}"
        pending = pending_calls(messages)
        if pending:
            calls = messages[pending[0][0]]["tool_calls"]
            assert any(m.get("tool_calls") == calls for m in out), (
                f"compressing the first {end} messages rewrote the calls in flight"
            )


class EngineConformance:
    """Subclass with ``engine_name`` set; every ``test_*`` here runs against that engine."""

    engine_name: ClassVar[str] = ""
    xfail_reasons: ClassVar[dict[str, list[str]]] = {}
    context_length: ClassVar[int] = 200_000

    @pytest.fixture(autouse=True)
    def _apply_xfails(self, request: pytest.FixtureRequest) -> None:
        name = request.node.originalname if hasattr(request.node, "originalname") else request.node.name
        for reason, tests in self.xfail_reasons.items():
            if name in tests:
                request.applymarker(pytest.mark.xfail(reason=reason, strict=True))

    @pytest.fixture
    def host(self) -> PluginHost:
        return PluginHost.create(strict=True)

    @pytest.fixture
    def engine(self, host: PluginHost) -> ContextEngine:
        engine = host.create_engine(self.engine_name, Config())
        engine.update_model("test-model", self.context_length)
        return engine

    def test_discoverable_through_installed_metadata(self, host: PluginHost) -> None:
        specs = host.context_engines()
        assert self.engine_name in specs, f"no installed plugin registers {self.engine_name!r}"
        assert specs[self.engine_name].distribution not in {"<registered>", "unknown"}

    def test_registration_passes_check_pending(self, host: PluginHost) -> None:
        spec = host.context_engines()[self.engine_name]
        record = host.records[spec.plugin]
        assert record.status == "active"
        host.pm.check_pending()

    def test_is_a_context_engine(self, host: PluginHost) -> None:
        cls = host.context_engines()[self.engine_name].engine_class
        assert issubclass(cls, ContextEngine)
        assert cls.name == self.engine_name

    def test_overrides_keep_base_signatures(self, host: PluginHost) -> None:
        cls = host.context_engines()[self.engine_name].engine_class
        for method in LIFECYCLE:
            base = inspect.signature(getattr(ContextEngine, method))
            mine = inspect.signature(getattr(cls, method))
            params = mine.parameters
            accepts_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
            for name, param in base.parameters.items():
                if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                    continue
                assert name in params or accepts_kwargs, f"{cls.__name__}.{method} drops {name!r}"

    def test_lifecycle_runs_through_hooks(self, host: PluginHost, engine: ContextEngine) -> None:
        seen: list[str] = []

        class Observer:
            @hookimpl(wrapper=True)
            def hermes_engine_on_session_start(self, engine: Any, session_id: Any, boundary_reason: Any) -> Any:
                seen.append("on_session_start")
                return (yield)

            @hookimpl(wrapper=True)
            def hermes_engine_update_from_response(self, engine: Any, usage: Any) -> Any:
                seen.append("update_from_response")
                return (yield)

            @hookimpl(wrapper=True)
            def hermes_engine_should_compress(self, engine: Any, prompt_tokens: Any) -> Any:
                seen.append("should_compress")
                return (yield)

            @hookimpl(wrapper=True)
            def hermes_engine_compress(self, engine: Any, messages: Any, current_tokens: Any, focus_topic: Any, force: Any) -> Any:
                seen.append("compress")
                return (yield)

            @hookimpl(wrapper=True)
            def hermes_engine_on_session_end(self, engine: Any, session_id: Any, messages: Any) -> Any:
                seen.append("on_session_end")
                return (yield)

        host.register(Observer(), "conformance_observer")
        messages = long_history(8, 400)
        assert host.engine_step("on_session_start", engine, session_id="s1", boundary_reason=None) is not None
        assert host.engine_step("update_from_response", engine, usage={"prompt_tokens": 1000}) is not None
        decision = host.engine_step("should_compress", engine, prompt_tokens=None)
        assert isinstance(decision, tuple) and isinstance(decision[0], bool)
        out = host.engine_step("compress", engine, messages=messages, current_tokens=None, focus_topic=None, force=True)
        assert isinstance(out, list)
        host.engine_step("on_session_end", engine, session_id="s1", messages=out)
        assert seen == ["on_session_start", "update_from_response", "should_compress", "compress", "on_session_end"]

    def test_prompt_tokens_alone_decide(self, engine: ContextEngine) -> None:
        engine.update_from_response({"prompt_tokens": 10, "completion_tokens": 10_000_000})
        assert engine.last_prompt_tokens == 10
        assert engine.should_compress() is False

    def test_teardown_is_idempotent(self, host: PluginHost, engine: ContextEngine) -> None:
        host.engine_step("on_session_start", engine, session_id="s1", boundary_reason=None)
        host.engine_step("on_session_end", engine, session_id="s1", messages=[])
        host.engine_step("on_session_end", engine, session_id="s1", messages=[])
        engine.on_session_reset()
        assert engine.last_prompt_tokens == 0 and engine.compression_count == 0

    def test_compress_never_mutates_and_keeps_pairs(self, engine: ContextEngine) -> None:
        messages = long_history()
        snapshot = json.dumps(messages, sort_keys=True)
        out = engine.compress(messages, force=True)
        assert json.dumps(messages, sort_keys=True) == snapshot
        assert pairs_intact(out)
        assert out[-1] == messages[-1]

    def test_pairing_survives_reused_ids_at_every_cut(self, host: PluginHost) -> None:
        for window in (8_000, 32_000):
            engine = host.create_engine(self.engine_name, Config())
            engine.update_model("test-model", window)
            check_pairing_at_every_cut(engine)

    def test_compress_shrinks_long_history(self, engine: ContextEngine) -> None:
        messages = long_history()
        out = engine.compress(messages, force=True)
        assert estimate_messages_tokens(out) < estimate_messages_tokens(messages)

    def test_errors_reach_on_error_and_lose_nothing(self, host: PluginHost, engine: ContextEngine, monkeypatch: pytest.MonkeyPatch) -> None:
        errors: list[str] = []

        class Watcher:
            @hookimpl
            def hermes_engine_on_error(self, engine: Any, step: str, error: BaseException) -> None:
                errors.append(step)

        lenient = PluginHost.create(strict=False)
        lenient.register(Watcher(), "conformance_watcher")
        engine = lenient.create_engine(self.engine_name, Config())
        engine.update_model("test-model", self.context_length)

        def boom(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("engine exploded")

        monkeypatch.setattr(engine, "compress", boom)
        messages = long_history(4, 100)
        out = lenient.engine_step("compress", engine, messages=messages, current_tokens=None, focus_topic=None, force=True)
        assert out is messages
        assert errors == ["compress"]
