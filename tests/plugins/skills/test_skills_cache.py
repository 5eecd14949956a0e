"""The in-process LRU: capacity, key, generation, threads, and no system call on a hit."""

from __future__ import annotations

import builtins
import os
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest

from hermes_core import Config
from hermes_plugins.skills import plugin
from hermes_plugins.skills.cache import DEFAULT_CAPACITY, IndexCache
from hermes_plugins.skills.settings import SkillsSection

from skills_support import age, make_ctx, skills_host, write_skill


def test_capacity_and_lru_order() -> None:
    cache: IndexCache[str] = IndexCache()
    assert cache.capacity == DEFAULT_CAPACITY == 8
    for i in range(8):
        assert cache.put(i, f"v{i}", cache.generation)
    assert cache.get(0) == "v0"  # 0 becomes the most recent
    cache.put(8, "v8", cache.generation)
    assert cache.get(1) is None  # the least recent went
    assert cache.get(0) == "v0" and len(cache) == 8


def test_generation_blocks_stale_stores() -> None:
    cache: IndexCache[str] = IndexCache()
    started = cache.generation
    cache.put("k", "old", started)
    cache.invalidate()
    assert cache.get("k") is None
    assert not cache.put("k", "built-before-invalidate", started)
    assert cache.get("k") is None
    assert cache.put("k", "new", cache.generation) and cache.get("k") == "new"


def test_threads_share_the_cache_safely() -> None:
    cache: IndexCache[int] = IndexCache(capacity=4)
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            for i in range(2_000):
                key = (seed + i) % 11
                value = cache.get(key)
                assert value is None or value == key
                cache.put(key, key, cache.generation)
                if i % 500 == 0:
                    cache.invalidate()
        except BaseException as exc:  # noqa: BLE001  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) <= 4


def test_hit_makes_no_system_call(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(hermes_home / "skills", "coding/debug")
    host = skills_host()
    first = plugin.hermes_prompt_skills_index(make_ctx(hermes_home, host=host))

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"system call on an LRU hit: {args!r}")

    for name in ("stat", "lstat", "open", "scandir", "listdir", "access", "readlink"):
        monkeypatch.setattr(os, name, forbidden)
    monkeypatch.setattr(builtins, "open", forbidden)
    again = plugin.hermes_prompt_skills_index(make_ctx(hermes_home, host=host))  # an equal, new context
    monkeypatch.undo()
    assert again is first


def test_every_input_is_part_of_the_key(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    write_skill(root, "coding/debug", extra="requires_tools: [terminal]")
    write_skill(root, "social/poster")
    write_skill(root, "social/old-tool")
    age(root)
    base = make_ctx(hermes_home, tools={"skill_view", "terminal"}, host=skills_host())
    text = plugin.hermes_prompt_skills_index(base).text
    def skills(**keys: Any) -> Config:
        return Config().with_sections(SkillsSection(**keys))

    variants = [
        attrs.evolve(base, tools=frozenset({"skill_view"})),
        attrs.evolve(base, toolsets=frozenset({"x"}), tools=frozenset({"skill_view", "skill_manage", "terminal"})),
        attrs.evolve(base, compact_skill_categories=frozenset({"social"})),
        attrs.evolve(base, config=skills(disabled=("old-tool",))),
        attrs.evolve(base, config=skills(platform_disabled={"tg": ["poster"]}), platform="tg"),
        attrs.evolve(base, config=skills(index_max_tokens=50)),
    ]
    texts = [plugin.hermes_prompt_skills_index(ctx).text for ctx in variants]
    assert all(t != text for t in texts)
    assert len(set(texts)) == len(texts)
    assert plugin.hermes_prompt_skills_index(base).text == text


def test_same_inputs_hit(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_skill(hermes_home / "skills", "coding/debug")
    calls: list[Any] = []
    real = plugin.build_index
    monkeypatch.setattr(plugin, "build_index", lambda request: calls.append(request) or real(request))
    host = skills_host()
    for _ in range(3):
        plugin.hermes_prompt_skills_index(make_ctx(hermes_home, host=host))
    assert len(calls) == 1
    plugin.hermes_prompt_skills_index(make_ctx(hermes_home, host=skills_host()))
    assert len(calls) == 2  # another host: its own cache
    plugin.invalidate(host)
    plugin.hermes_prompt_skills_index(make_ctx(hermes_home, host=host))
    assert len(calls) == 3
    plugin.hermes_prompt_skills_index(make_ctx(hermes_home))
    plugin.hermes_prompt_skills_index(make_ctx(hermes_home))
    assert len(calls) == 5  # no host, nothing remembered


def test_an_old_entry_revalidates_against_disk(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A skill installed by hand while a long-lived process runs shows up once the cached index
    is older than ``skills.index_ttl_seconds`` - without anyone calling ``invalidate()``."""
    clock = [1_000.0]
    monkeypatch.setattr("hermes_plugins.skills.cache.time.monotonic", lambda: clock[0])
    root = hermes_home / "skills"
    write_skill(root, "coding/debug")
    age(root)
    host = skills_host()
    config = Config().with_sections(SkillsSection(index_ttl_seconds=30.0))
    first = plugin.hermes_prompt_skills_index(attrs.evolve(make_ctx(hermes_home, host=host), config=config)).text
    write_skill(root, "coding/profile")
    age(root)
    clock[0] += 10  # still fresh: the cached index is served, no disk access
    assert plugin.hermes_prompt_skills_index(attrs.evolve(make_ctx(hermes_home, host=host), config=config)).text == first
    clock[0] += 25  # older than the TTL: revalidated, the new skill appears
    later = plugin.hermes_prompt_skills_index(attrs.evolve(make_ctx(hermes_home, host=host), config=config)).text
    assert "profile" in later and "profile" not in first
    never = Config().with_sections(SkillsSection(index_ttl_seconds=None))
    plugin.invalidate(host)
    kept = plugin.hermes_prompt_skills_index(attrs.evolve(make_ctx(hermes_home, host=host), config=never)).text
    write_skill(root, "coding/trace")
    age(root)
    clock[0] += 10_000
    assert plugin.hermes_prompt_skills_index(attrs.evolve(make_ctx(hermes_home, host=host), config=never)).text == kept
