"""Build the system prompt once: walk the prompt table, ask each block's hook, join the layers.

The order is the data in ``hermes_core.prompt.PROMPT_TABLE``, never registration order. A hook
that raises costs its own block and a warning (a strict host raises). Warnings are collected per
build in a ContextVar, so concurrent builds never mix; exact token counts are computed on first
access, so an agent that only sends the prompt never pays the tokenizer.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from hermes_core.diagnostics import HostWarning, collecting, record_warning
from hermes_core.logging import get_logger
from hermes_core.prompt import LAYERS, join_parts, ordered_slots
from hermes_core.records import Layer, PromptBlock, PromptContext
from hermes_core.tokens import estimate_tokens

if TYPE_CHECKING:
    from hermes_core.host import PluginHost

log = get_logger("hermes_core.assembler")

SYSTEM_MESSAGE_BLOCK = "system_message"
CONTEXT_FILES_BLOCK = "context_files"
IDENTITY_BLOCK = "identity"
#: The keys every ``context_files`` source entry exposes (the context-files block's contract).
CONTEXT_FILE_KEYS = ("path", "rank", "loader", "chars", "kept_chars", "truncated")
#: Added to an entry when the injection scan acted on the file: the lines it replaced (with
#: their original text, for the report) and the low-severity findings it only warned about.
CONTEXT_FILE_SCAN_KEYS = ("blocked", "blocked_lines", "flagged")


@attrs.frozen(kw_only=True)
class BlockInfo:
    """One block as it landed in the prompt: where, from whom, and how big."""

    name: str
    layer: Layer
    plugin: str | None
    chars: int
    tokens: int
    source: str | None = None


@attrs.frozen(kw_only=True)
class BuiltPrompt:
    """The result of one build (or of one restore from the session store).

    ``origin`` is ``"built"`` for a fresh build and ``"stored"`` when the session store's copy
    was reused verbatim; a stored prompt has no layer or block breakdown (empty strings and an
    empty tuple), because the only faithful thing to do with it is to replay its bytes.
    """

    prompt: str
    layers: Mapping[str, str]
    context_files: tuple[Mapping[str, Any], ...] = ()
    warnings: tuple[HostWarning, ...] = ()
    origin: Literal["built", "stored"] = "built"
    model: str = ""
    # (name, layer, plugin, text, source) per block, kept to count tokens lazily.
    _parts: tuple[tuple[str, Layer, str | None, str, str | None], ...] = attrs.field(
        default=(), repr=False, alias="parts"
    )
    _tokenizer: Any = attrs.field(default=None, repr=False, eq=False, alias="tokenizer")

    @functools.cached_property
    def blocks(self) -> tuple[BlockInfo, ...]:
        """Every non-empty block in prompt order, with its exact token count."""
        texts = [text for _, _, _, text, _ in self._parts]
        counts = _count_many(self._tokenizer, texts)
        return tuple(
            BlockInfo(name=name, layer=layer, plugin=plugin, chars=len(text), tokens=count, source=source)
            for (name, layer, plugin, text, source), count in zip(self._parts, counts, strict=True)
        )

    @functools.cached_property
    def exact_tokens(self) -> int:
        """Exact tokens of the whole prompt (the session's tokenizer)."""
        if not self.prompt:
            return 0
        return _count_many(self._tokenizer, [self.prompt])[0]

    @property
    def estimated_tokens(self) -> int:
        """The rough chars/4 estimate the engines use for preflight decisions."""
        return estimate_tokens(self.prompt)

    @property
    def block_names(self) -> tuple[str, ...]:
        return tuple(name for name, *_ in self._parts)

    def block_text(self, name: str) -> str | None:
        """The stripped text of block ``name`` as it appears in the prompt, or ``None``."""
        for block_name, _, _, text, _ in self._parts:
            if block_name == name:
                return text
        return None


def _count_many(tokenizer: Any, texts: list[str]) -> list[int]:
    if tokenizer is None:
        from hermes_core.tokens import exact_tokenizer

        tokenizer = exact_tokenizer()
    count_many = getattr(tokenizer, "count_many", None)
    if callable(count_many):
        return list(count_many(texts))
    return [tokenizer.count(t) for t in texts]


def assemble(host: PluginHost, ctx: PromptContext, *, system_message: str | None = None) -> BuiltPrompt:
    """Build the system prompt for ``ctx`` with ``host``'s plugins.

    ``system_message`` (else ``ctx.system_message``) fills the caller's slot in the context
    layer. Warnings raised while building are in ``BuiltPrompt.warnings``; they are also
    logged as structlog events when raised.
    """
    if system_message is None:
        system_message = ctx.system_message
    if ctx.host is not host:
        ctx = attrs.evolve(ctx, host=host)
    with collecting() as bucket:
        parts, context_files = _collect_blocks(host, ctx, system_message, bucket)
        warnings = tuple(bucket)
    layers: dict[str, str] = {
        layer: join_parts([text for _, lay, _, text, _ in parts if lay == layer]) for layer in LAYERS
    }
    prompt = "\n\n".join(text for text in layers.values() if text)
    log.debug(
        "system_prompt_assembled",
        session_id=ctx.session_id,
        chars=len(prompt),
        blocks=[name for name, *_ in parts],
        warnings=len(warnings),
    )
    return BuiltPrompt(
        prompt=prompt,
        layers=layers,
        context_files=context_files,
        warnings=warnings,
        model=ctx.model,
        parts=tuple(parts),
        tokenizer=host.tokenizer(ctx.model),
    )


def _collect_blocks(
    host: PluginHost, ctx: PromptContext, system_message: str | None, bucket: list[HostWarning]
) -> tuple[list[tuple[str, Layer, str | None, str, str | None]], tuple[Mapping[str, Any], ...]]:
    parts: list[tuple[str, Layer, str | None, str, str | None]] = []
    context_files: tuple[Mapping[str, Any], ...] = ()
    slots = ordered_slots()
    hooks = [slot.hook for slot in slots if slot.hook is not None]
    soul_path = ctx.home / "SOUL.md"

    def after(hook: str, blocks: tuple[PromptBlock, ...], ctx: PromptContext) -> PromptContext:
        for block in blocks:
            if block.name != IDENTITY_BLOCK or not isinstance(block.text, str):
                continue
            meta = block.meta if isinstance(block.meta, Mapping) else {}
            if meta.get("default_identity") is True and not ctx.default_identity:
                # hermes-core's own identity: the blocks about Hermes itself may follow.
                ctx = attrs.evolve(ctx, default_identity=True)
            if not ctx.soul_loaded and (
                isinstance(block.source, str) and block.source and Path(block.source) == soul_path
                or meta.get("soul_refused") == str(soul_path)
            ):
                # SOUL.md is the identity now (or the identity refused it and said so); the
                # context-file block must not load it again.
                ctx = attrs.evolve(ctx, soul_loaded=True)
        return ctx

    # One dispatch for the whole assembly (see hermes_core.prompt_dispatch); a hook left out
    # (timed out) is absent from ``answered`` and has its own warning already.
    answered = {hook: (blocks, plugin) for hook, blocks, plugin in host.prompt_blocks(hooks, ctx, after=after)}
    for slot in slots:
        if slot.hook is None:
            if system_message is not None and system_message.strip():
                parts.append((SYSTEM_MESSAGE_BLOCK, slot.layer, None, system_message.strip(), None))
            continue
        blocks, plugin = answered.get(slot.hook, ((), None))
        if not blocks:
            _name_lost_blocks(bucket, 0, slot.hook, slot.blocks)
        for block in _in_table_order(blocks, slot.blocks):
            text = block.text
            if not isinstance(text, str):
                record_warning(
                    "prompt_block_invalid",
                    f"plugin {block.plugin or plugin!r} returned a non-text {block.name} block "
                    f"({type(text).__name__}); the block was left out",
                    plugin=block.plugin or plugin,
                    block=block.name,
                )
                continue
            if block.name == CONTEXT_FILES_BLOCK:
                context_files = _context_file_sources(block)
            stripped = text.strip()
            if stripped:
                parts.append((block.name, slot.layer, block.plugin or plugin, stripped, block.source))
    return parts, context_files


_LOST_BLOCK_KINDS = ("plugin_hook_failed", "prompt_hook_timed_out")


def _name_lost_blocks(bucket: list[HostWarning], start: int, hook: str, names: tuple[str, ...]) -> None:
    # The host words a failure by hook; the user knows the prompt by block names, so say which
    # blocks went missing (a slot such as general_guidance holds three).
    for i in range(start, len(bucket)):
        warning = bucket[i]
        if warning.kind in _LOST_BLOCK_KINDS and warning.details.get("hook") == hook:
            bucket[i] = attrs.evolve(
                warning,
                message=f"{warning.message} (blocks left out: {', '.join(names)})",
                details={**warning.details, "blocks": list(names)},
            )


def _in_table_order(blocks: tuple[PromptBlock, ...], names: tuple[str, ...]) -> list[PromptBlock]:
    # The table names the order of a slot's blocks; a plugin's extra block names go last, in
    # the order it returned them (a stable sort keeps that).
    rank = {name: i for i, name in enumerate(names)}
    return sorted(blocks, key=lambda b: rank.get(b.name, len(names)))


def _context_file_sources(block: PromptBlock) -> tuple[Mapping[str, Any], ...]:
    sources = block.meta.get("sources") if isinstance(block.meta, Mapping) else None
    if not sources:
        return ()
    out: list[Mapping[str, Any]] = []
    for entry in sources:
        if isinstance(entry, Mapping):
            item = {key: entry.get(key) for key in CONTEXT_FILE_KEYS}
        else:  # a ContextFile-like record
            item = {key: getattr(entry, key, None) for key in CONTEXT_FILE_KEYS}
        if item["path"] is not None:
            item["path"] = str(item["path"])
        for key in CONTEXT_FILE_SCAN_KEYS:
            value = entry.get(key) if isinstance(entry, Mapping) else getattr(entry, key, None)
            if value:
                item[key] = [dict(v) if isinstance(v, Mapping) else v for v in value]
        out.append(item)
    return tuple(out)


def stored_prompt(prompt: str, *, model: str = "", tokenizer: Any = None) -> BuiltPrompt:
    """A ``BuiltPrompt`` for a prompt reused verbatim from the session store."""
    return BuiltPrompt(
        prompt=prompt,
        layers={layer: "" for layer in LAYERS},
        origin="stored",
        model=model,
        tokenizer=tokenizer,
    )
