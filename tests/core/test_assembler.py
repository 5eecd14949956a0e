"""The assembler: table order, join rules, failures costing one block, per-build warnings."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import (
    HermesPluginError,
    PluginHost,
    PromptBlock,
    PromptContext,
    hookimpl,
    load_config,
)
from hermes_core.assembler import BuiltPrompt, assemble, stored_prompt
from hermes_core.diagnostics import record_warning
from hermes_core.prompt import BLOCK_NAMES, PROMPT_TABLE, join_parts


class Stub:
    """Answers every block hook with the block's own name as text (``<name> text``)."""

    def __init__(self, skip: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.skip = set(skip)
        for slot in PROMPT_TABLE:
            if slot.hook is not None:
                setattr(self, slot.hook, self._impl(slot.blocks))

    def _impl(self, blocks: tuple[str, ...]) -> Any:
        def impl(ctx: PromptContext) -> list[PromptBlock]:
            return [PromptBlock(name=b, text=f"  {b} text \n") for b in blocks if b not in self.skip]

        return hookimpl(tryfirst=True)(impl)


def bare_host(*plugins: tuple[object, str], strict: bool = False) -> PluginHost:
    return PluginHost.create(load_entry_points=False, plugins=plugins, strict=strict, env={})


def make_ctx(tmp_path: Path, **kwargs: Any) -> PromptContext:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return PromptContext(cwd=tmp_path, home=home, config=load_config(data={}, env={}), **kwargs)


def test_every_block_in_table_order_and_layers_joined(tmp_path: Path) -> None:
    built = assemble(bare_host((Stub(), "stub")), make_ctx(tmp_path), system_message=" caller \n")
    expected = [name for name in BLOCK_NAMES]
    assert list(built.block_names) == expected
    stable = [n for n in expected if next(s for s in PROMPT_TABLE if n in s.blocks).layer == "stable"]
    assert built.layers["stable"] == "\n\n".join(f"{n} text" for n in stable)
    assert built.layers["context"] == "caller\n\ncontext_files text"
    assert built.layers["volatile"].endswith("session_line text")
    assert built.prompt == "\n\n".join(built.layers[k] for k in ("stable", "context", "volatile"))
    assert built.origin == "built"


def test_join_rules_drop_empty_parts_and_layers(tmp_path: Path) -> None:
    class Sparse:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="identity", text="\n  I am  \n")

        @hookimpl
        def hermes_prompt_environment(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="environment", text="  \n\t")

        @hookimpl
        def hermes_prompt_session_line(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="session_line", text="date")

    built = assemble(bare_host((Sparse(), "sparse")), make_ctx(tmp_path), system_message="")
    assert built.prompt == "I am\n\ndate"
    assert built.layers == {"stable": "I am", "context": "", "volatile": "date"}
    assert [b.name for b in built.blocks] == ["identity", "session_line"]
    assert join_parts(["a", "", "  ", " b "]) == "a\n\nb"


def test_blocks_of_a_slot_follow_the_table_not_the_plugin(tmp_path: Path) -> None:
    class Reversed:
        @hookimpl
        def hermes_prompt_general_guidance(self, ctx: PromptContext) -> list[PromptBlock]:
            return [
                PromptBlock(name="extra", text="E"),
                PromptBlock(name="parallel_tool_calls", text="P"),
                PromptBlock(name="help", text="H"),
            ]

    built = assemble(bare_host((Reversed(), "rev")), make_ctx(tmp_path))
    assert built.prompt == "H\n\nP\n\nE"


def test_block_metadata_plugin_chars_and_exact_tokens(tmp_path: Path, offline_tokenizer: Any) -> None:
    built = assemble(bare_host((Stub(), "stub")), make_ctx(tmp_path))
    first = built.blocks[0]
    assert (first.name, first.layer, first.plugin) == ("identity", "stable", "stub")
    assert first.chars == len("identity text")
    assert first.tokens == offline_tokenizer.count("identity text")
    assert built.exact_tokens == offline_tokenizer.count(built.prompt)
    assert built.estimated_tokens == (len(built.prompt) + 3) // 4


def test_tokens_are_counted_only_when_asked(tmp_path: Path) -> None:
    calls: list[int] = []

    class CountingTokenizer:
        name = "counting"

        def count(self, text: str) -> int:
            calls.append(len(text))
            return len(text.split())

    class Tok:
        @hookimpl
        def hermes_tokenizer(self, model: str) -> CountingTokenizer:
            return CountingTokenizer()

    built = assemble(bare_host((Stub(), "stub"), (Tok(), "tok")), make_ctx(tmp_path, model="m"))
    assert calls == []
    assert built.blocks[0].tokens == 2
    assert len(calls) == len(BLOCK_NAMES) - 1  # every block but the absent system message
    assert built.blocks is built.blocks  # counted once


def test_a_raising_plugin_costs_its_block_and_names_itself(tmp_path: Path) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_environment(self, ctx: PromptContext) -> PromptBlock:
            raise RuntimeError("probe exploded")

    # With another implementation to answer, only the raising plugin's answer is lost.
    built = assemble(bare_host((Stub(), "stub"), (Broken(), "broken_env")), make_ctx(tmp_path))
    assert "environment" in built.block_names
    (failure,) = [w for w in built.warnings if w.kind == "plugin_hook_failed"]
    assert failure.plugin == "broken_env" and "left out:" not in failure.message

    stub = Stub()
    del stub.hermes_prompt_environment  # the raising plugin is the block's only producer
    built = assemble(bare_host((stub, "stub"), (Broken(), "broken_env")), make_ctx(tmp_path))
    assert "environment" not in built.block_names
    assert "platform" in built.block_names and "identity" in built.block_names
    failures = [w for w in built.warnings if w.kind == "plugin_hook_failed"]
    assert len(failures) == 1
    assert failures[0].plugin == "broken_env"
    assert "probe exploded" in failures[0].message
    assert failures[0].message.endswith("(blocks left out: environment)")
    assert failures[0].details["blocks"] == ["environment"]


def test_a_raising_multi_block_slot_names_every_lost_block(tmp_path: Path) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_general_guidance(self, ctx: PromptContext) -> PromptBlock:
            raise KeyError("help")

    stub = Stub()
    del stub.hermes_prompt_general_guidance
    built = assemble(bare_host((stub, "stub"), (Broken(), "broken")), make_ctx(tmp_path))
    assert not {"help", "task_completion", "parallel_tool_calls"} & set(built.block_names)
    (failure,) = built.warnings
    assert failure.plugin == "broken"
    assert "help, task_completion, parallel_tool_calls" in failure.message


def test_a_strict_host_raises_instead(tmp_path: Path) -> None:
    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            raise ValueError("bad soul")

    host = bare_host((Stub(), "stub"), (Broken(), "broken"), strict=True)
    with pytest.raises(HermesPluginError, match="broken"):
        assemble(host, make_ctx(tmp_path))


def test_non_text_block_is_left_out_with_a_warning(tmp_path: Path) -> None:
    class Odd:
        @hookimpl(tryfirst=True)
        def hermes_prompt_platform_hint(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="platform", text=42)  # type: ignore[arg-type]

    built = assemble(bare_host((Stub(), "stub"), (Odd(), "odd")), make_ctx(tmp_path))
    assert "platform" not in built.block_names
    assert [w.kind for w in built.warnings] == ["prompt_block_invalid"]
    assert built.warnings[0].plugin == "odd"


def test_soul_identity_marks_later_slots(tmp_path: Path) -> None:
    seen: dict[str, bool] = {}

    class Soul:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            seen["identity"] = ctx.soul_loaded
            return PromptBlock(name="identity", text="soul", source=str(ctx.home / "SOUL.md"))

        @hookimpl
        def hermes_prompt_context_files(self, ctx: PromptContext) -> PromptBlock:
            seen["context_files"] = ctx.soul_loaded
            return PromptBlock(name="context_files", text="files")

    assemble(bare_host((Soul(), "soul")), make_ctx(tmp_path))
    assert seen == {"identity": False, "context_files": True}


def test_default_identity_leaves_soul_unloaded(tmp_path: Path) -> None:
    seen: list[bool] = []

    class Default:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="identity", text="default", source=str(tmp_path / "SOUL.md"))

        @hookimpl
        def hermes_prompt_context_files(self, ctx: PromptContext) -> None:
            seen.append(ctx.soul_loaded)

    assemble(bare_host((Default(), "d")), make_ctx(tmp_path))  # a SOUL.md outside home: not it
    assert seen == [False]


def test_context_sees_the_building_host(tmp_path: Path) -> None:
    seen: list[Any] = []

    class Spy:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> None:
            seen.append(ctx.host)

    host = bare_host((Spy(), "spy"))
    assemble(host, make_ctx(tmp_path))
    assert seen == [host]


def test_context_files_sources_exposed(tmp_path: Path) -> None:
    sources = [
        {"path": tmp_path / "AGENTS.md", "rank": 20, "loader": "agents_md", "chars": 30_000,
         "kept_chars": 20_000, "truncated": True, "extra": "ignored"},
    ]

    class Files:
        @hookimpl
        def hermes_prompt_context_files(self, ctx: PromptContext) -> PromptBlock:
            return PromptBlock(name="context_files", text="# Project Context", meta={"sources": sources})

    built = assemble(bare_host((Files(), "files")), make_ctx(tmp_path))
    assert built.context_files == (
        {"path": str(tmp_path / "AGENTS.md"), "rank": 20, "loader": "agents_md", "chars": 30_000,
         "kept_chars": 20_000, "truncated": True},
    )


def test_warnings_are_per_build_even_across_threads(tmp_path: Path) -> None:
    barrier = threading.Barrier(2)

    class Noisy:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            record_warning("noise", f"from {ctx.session_id}")
            barrier.wait(timeout=5)
            record_warning("noise", f"again from {ctx.session_id}")
            return PromptBlock(name="identity", text=ctx.session_id)

    host = bare_host((Noisy(), "noisy"))
    results: dict[str, BuiltPrompt] = {}

    def build(sid: str) -> None:
        results[sid] = assemble(host, make_ctx(tmp_path, session_id=sid))

    threads = [threading.Thread(target=build, args=(sid,)) for sid in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sid in ("a", "b"):
        assert [w.message for w in results[sid].warnings] == [f"from {sid}", f"again from {sid}"]


def test_a_build_leaves_no_warnings_in_the_callers_context(tmp_path: Path) -> None:
    from hermes_core import drain_warnings

    class Noisy:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> None:
            record_warning("noise", "inside")

    drain_warnings()
    built = assemble(bare_host((Noisy(), "noisy")), make_ctx(tmp_path))
    assert [w.message for w in built.warnings] == ["inside"]
    assert drain_warnings() == []


def test_stored_prompt_record() -> None:
    record = stored_prompt("P", model="m")
    assert record.origin == "stored"
    assert record.prompt == "P"
    assert record.blocks == ()
    assert dict(record.layers) == {"stable": "", "context": "", "volatile": ""}
