"""Plugin state belongs to a plugin host: built once per host and key, never shared between hosts."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, refresh_plugins
from hermes_core.host import host_state

from hypothesis_budget import examples
from locations import ROOT


class Counter:
    built = 0

    def __init__(self) -> None:
        type(self).built += 1
        self.value = 0


def bare_host() -> PluginHost:
    return PluginHost.create(load_entry_points=False, env={})


def test_state_is_built_once_per_host_and_kept() -> None:
    host = bare_host()
    first = host.state(Counter)
    first.value = 7
    assert host.state(Counter) is first and host.state(Counter).value == 7
    other = bare_host()
    assert other.state(Counter) is not first and other.state(Counter).value == 0


def test_an_explicit_key_separates_states_of_one_factory() -> None:
    host = bare_host()
    a, b = host.state(Counter, key="a"), host.state(Counter, key="b")
    assert a is not b and host.state(Counter, key="a") is a
    assert host.state(Counter) not in (a, b)


def test_without_a_host_nothing_is_remembered() -> None:
    assert host_state(None, Counter) is not host_state(None, Counter)
    host = bare_host()
    assert host_state(host, Counter) is host_state(host, Counter) is host.state(Counter)


def test_concurrent_first_use_builds_one_state() -> None:
    built: list[object] = []

    def slow() -> object:
        time.sleep(0.01)  # widen the window in which a second builder could slip in
        obj = object()
        built.append(obj)
        return obj

    host = bare_host()
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(host.state(slow))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and seen == built * 8


def test_a_refreshed_shared_host_starts_with_fresh_state() -> None:
    host = PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""})
    host.state(Counter).value = 3
    assert PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""}).state(Counter).value == 3
    refresh_plugins()
    assert PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""}).state(Counter).value == 0


@settings(max_examples=examples(100))
@given(st.lists(st.sampled_from("abcde"), max_size=30))
def test_one_state_per_distinct_key(keys: list[str]) -> None:
    host = bare_host()
    states = {key: host.state(Counter, key=key) for key in keys}
    assert len({id(s) for s in states.values()}) == len(set(keys))
    assert all(host.state(Counter, key=key) is states[key] for key in keys)


# --- no module-level caches: what a module keeps across calls is listed here, with its reason --

_MUTATORS = frozenset({
    "add", "append", "clear", "discard", "extend", "insert", "move_to_end", "pop", "popitem",
    "put", "remove", "setdefault", "update",
})

#: (module path, name) -> why it may live in the module rather than on a plugin host. A new
#: entry needs a reason a reviewer accepts: a process resource (threads, connections, fork-safe
#: by pid), a fact of the machine, a per-thread scratch value, or the owner itself.
ALLOWED = {
    ("hermes_core/host.py", "_SHARED"): "the owner: the process's shared hosts (refresh_plugins)",
    ("hermes_core/config_cache.py", "_MEMO"): (
        "what Session.open reads before it has a host (config.yaml bound for the shared host it "
        "picks), bounded; checked against the file's stat, the environment and the host each open"
    ),
    ("hermes_core/config_cache.py", "_ENVIRON"): (
        "a decoded copy of the process's environment, checked against os.environ each use"
    ),
    ("hermes_core/aio.py", "_holding"): "per-thread flag: does this worker hold a CPU slot",
    ("hermes_core/encodings.py", "_loaded"): "the o200k_base encoding built once from a constant shipped file (a pure load)",
    ("hermes_core/logging.py", "_root"): "the library's stdlib root logger (handlers are the process's)",
    ("hermes_core/tokens.py", "_default_exact"): "the bundled encoding, loaded once; immutable",
    ("hermes_core/redaction.py", "_COMPILED"): (
        "pure memo, bounded (64 at most): the one redaction regex per set of optional families"
    ),
    ("plugins/hermes_plugins/archive/sqlite_store.py", "_connections"): "connections per (pid, file): the file is the process's",
    ("plugins/hermes_plugins/archive/sqlite_store.py", "_writers"): "one writer thread per (pid, file)",
    ("plugins/hermes_plugins/session_store.py", "_connections"): "connections per (pid, file): the file is the process's",
    ("plugins/hermes_plugins/redis_store.py", "_clients"): "connection pool per (pid, URL)",
    ("plugins/hermes_plugins/skills/filters.py", "_host_environments"): "a fact of the machine (docker, s6), probed once",
    ("plugins/hermes_plugins/skills/frontmatter.py", "_GOOD_KEYS"): "memo of a pure predicate on key text (bounded)",
    ("plugins/hermes_plugins/summarizers_async.py", "_clients"): "owned by each event loop (weak keys, closed at its shutdown)",
    ("plugins/hermes_plugins/compressor/facts.py", "_KINDS"): "memo of pure predicates on a tool name (bounded)",
    ("plugins/hermes_plugins/_common/failures.py", "_verdicts"): (
        "pure memo, bounded: verdict of a result string (held, by identity) and the one-liner built from it"
    ),
    ("plugins/hermes_plugins/_common/failures.py", "_line_verdicts"): (
        "pure memo, bounded: the verdict memo's one-liners by identity (rebuilt at each sweep)"
    ),
    ("plugins/hermes_plugins/_common/failures.py", "_held"): "pure memo, bounded: the verdict memo's size",
    ("plugins/hermes_plugins/_common/failures.py", "_sweep_at"): "pure memo, bounded: the verdict memo's next sweep",
    ("plugins/hermes_plugins/tools/search_index.py", "_stems"): "pure memo, bounded: word -> Snowball stem",
    ("plugins/hermes_plugins/tools/search_index.py", "_stemmer"): "the stemmer, loaded once; a pure function of the word",
    ("plugins/hermes_plugins/tools/search_index.py", "_token_cache"): "pure memo, bounded: indexed fields -> term counts",
    # Not converted yet (files of other areas this session): listed so that nothing new joins them.
}


def _mutated_module_names(path: Path) -> set[str]:
    """Module-level names a function of the module rebinds (``global``) or mutates in place."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        top.update(t.id for t in targets if isinstance(t, ast.Name))
    found: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(node.names)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name) and node.func.attr in _MUTATORS):
                found.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                found.update(
                    t.value.id for t in targets
                    if isinstance(t, (ast.Subscript, ast.Attribute)) and isinstance(t.value, ast.Name)
                )
    return found & top


def _module_state() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for base in (ROOT / "hermes_core", ROOT / "plugins" / "hermes_plugins", ROOT / "contrib_engines"):
        for path in base.rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            out.update((rel, name) for name in _mutated_module_names(path))
    return out


def test_module_level_state_is_only_what_is_listed_with_a_reason() -> None:
    state = _module_state()
    unlisted = sorted(state - ALLOWED.keys())
    assert not unlisted, (
        f"module-level state {unlisted}: keep it on the plugin host (host.state(MyState), see "
        "docs/plugin-guide.md) or add it to ALLOWED with the reason it belongs to the process"
    )
    stale = sorted(ALLOWED.keys() - state)
    assert not stale, f"ALLOWED lists state that is gone; remove {stale}"


def test_the_scan_sees_a_module_cache(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "_memo = {}\n_seen = set()\n_flag = None\nTABLE = {'a': 1}\n"
        "def f(k):\n    _memo[k] = 1\n    _seen.add(k)\n    global _flag\n    _flag = k\n    return TABLE[k]\n"
    )
    assert _mutated_module_names(module) == {"_memo", "_seen", "_flag"}
