"""The memory snapshot blocks (spec §12): entries, limits, block format, switches."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_core import PromptContext, load_config
from hermes_core.diagnostics import collecting
from hermes_plugins.memory import RULE, hermes_prompt_memory, read_entries, render_block

from hypothesis_budget import examples


def write(home: Path, name: str, text: str) -> Path:
    folder = home / "memories"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def blocks(home: Path, memory: dict[str, Any] | None = None) -> dict[str, str]:
    ctx = PromptContext(cwd=home, home=home, config=load_config(data={"memory": memory or {}}, env={}))
    return {b.name: b.text for b in hermes_prompt_memory(ctx)}


def test_entries_are_split_stripped_deduplicated(tmp_path: Path) -> None:
    path = write(tmp_path, "MEMORY.md", "dup\n§\ndup\n§\nunique\n§\n  \n§\n  spaced  ")
    assert read_entries(path) == ["dup", "unique", "spaced"]


def test_crlf_files_split_too(tmp_path: Path) -> None:
    path = write(tmp_path, "USER.md", "a\r\n§\r\nb")
    assert read_entries(path) == ["a", "b"]


def test_missing_files_give_no_blocks(tmp_path: Path) -> None:
    assert blocks(tmp_path) == {}


def test_block_format_with_percentage_header(tmp_path: Path) -> None:
    write(tmp_path, "MEMORY.md", "alpha\n§\nbeta")
    write(tmp_path, "USER.md", "Prefers tea.")
    out = blocks(tmp_path)
    content = "alpha\n§\nbeta"
    assert out["memory"] == (
        f"{RULE}\nMEMORY (your personal notes) [0% — {len(content)}/2,200 chars]\n{RULE}\n{content}"
    )
    assert out["user_profile"] == (
        f"{RULE}\nUSER PROFILE (who the user is) [0% — 12/1,375 chars]\n{RULE}\nPrefers tea."
    )
    assert RULE == "═" * 46


def test_percentage_thousands_and_over_budget(tmp_path: Path) -> None:
    text = render_block("MEMORY (your personal notes)", ["x" * 1500], 2000)
    assert "[75% — 1,500/2,000 chars]" in text
    over = render_block("MEMORY (your personal notes)", ["x" * 2500], 2000)
    assert "[100% — 2,500/2,000 chars ⚠ OVER BUDGET]" in over
    assert render_block("T", [], 10) == ""


def test_limits_from_config(tmp_path: Path) -> None:
    write(tmp_path, "MEMORY.md", "x" * 150)
    write(tmp_path, "USER.md", "y" * 50)
    out = blocks(tmp_path, {"memory_char_limit": 100, "user_char_limit": 1000})
    assert "[100% — 150/100 chars ⚠ OVER BUDGET]" in out["memory"]
    assert "[5% — 50/1,000 chars]" in out["user_profile"]


def test_render_cap_keeps_head_and_tail_and_warns(tmp_path: Path) -> None:
    entries = [f"entry {i:04d} " + "z" * 80 for i in range(100)]  # ~9,000 chars against cap 4,000
    path = write(tmp_path, "MEMORY.md", "\n§\n".join(entries))
    with collecting() as warnings:
        text = blocks(tmp_path, {"memory_char_limit": 1000})["memory"]
    body = text.split(RULE + "\n", 2)[2]
    assert body.startswith("entry 0000")
    assert body.endswith(entries[-1])
    assert "consolidate" in body
    assert len(body) < 4000 + 300
    assert [w.kind for w in warnings] == ["memory_truncated"]
    assert warnings[0].path == str(path)


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        ({}, {"memory", "user_profile"}),
        ({"memory_enabled": False}, {"user_profile"}),
        ({"user_profile_enabled": False}, {"memory"}),
        ({"memory_enabled": False, "user_profile_enabled": False}, set()),
    ],
)
def test_switches(tmp_path: Path, memory: dict[str, Any], expected: set[str]) -> None:
    write(tmp_path, "MEMORY.md", "m")
    write(tmp_path, "USER.md", "u")
    assert set(blocks(tmp_path, memory)) == expected


def test_unreadable_file_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").mkdir()  # a directory where the file should be
    write(tmp_path, "USER.md", "u")
    with collecting() as warnings:
        out = blocks(tmp_path)
    assert set(out) == {"user_profile"}
    assert [(w.kind, w.plugin) for w in warnings] == [("file_refused", "memory")]
    assert "a directory" in warnings[0].message and str(tmp_path / "memories" / "MEMORY.md") in warnings[0].message


def test_invalid_utf8_is_replaced_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_bytes(b"caf\xe9 fact")
    with collecting() as warnings:
        out = blocks(tmp_path)
    assert "caf\ufffd fact" in out["memory"]
    assert [(w.kind, w.plugin) for w in warnings] == [("file_invalid_utf8", "memory")]


def test_block_source_is_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "MEMORY.md", "m")
    ctx = PromptContext(cwd=tmp_path, home=tmp_path, config=load_config(data={}, env={}))
    assert [b.source for b in hermes_prompt_memory(ctx)] == [os.fspath(path)]


entry = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="§\r"), min_size=0, max_size=30)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(entry, max_size=12))
@example(["\ufeff"])
def test_entries_roundtrip_invariants(tmp_path_factory: Any, entries: list[str]) -> None:
    home = tmp_path_factory.mktemp("mem")
    path = write(home, "MEMORY.md", "\n§\n".join(entries))
    got = read_entries(path)
    assert len(got) == len(set(got))
    assert all(e and e == e.strip() for e in got)
    if entries and entries[0].startswith("\ufeff"):
        # A file that opens with U+FEFF opens with a byte-order mark: it is read as the
        # encoding's mark (utf-8-sig), not as text of the first entry.
        entries = [entries[0][1:], *entries[1:]]
    expected = list(dict.fromkeys(e.strip() for e in entries if e.strip()))
    if not any("\n§\n" in e or e.startswith("§\n") or e.endswith("\n§") for e in entries):
        assert got == expected
