"""No hidden caches: every ContextVar, thread-local and memo decorator is listed with a reason.

A value remembered outside the arguments makes a function that looks pure depend on what an
earlier caller left (issue 33). What the core keeps must be passed where it is used (a
per-session or per-host object) unless it is one of:

* (b) a pure memo of an immutable result determined by the arguments alone;
* (c) per-call plumbing that is not a memo, where an explicit parameter would be worse.

Module-level dicts, lists and sets that functions change are checked by
``test_plugin_state.test_module_level_state_is_only_what_is_listed_with_a_reason``; this scan
adds what that one cannot see: ``ContextVar``, ``threading.local`` and ``lru_cache``/``cache``.
"""

from __future__ import annotations

import ast

from locations import ROOT

#: (module path, name) -> (class, why it may stay). A new entry needs a reason a reviewer accepts.
ALLOWED = {
    ("hermes_core/diagnostics.py", "_collector"): (
        "c", "the warnings of the build in progress (collecting()); a parameter would run "
        "through every function that can warn, plugins' included"),
    ("hermes_core/hookguard.py", "CURRENT"): (
        "c", "the hook call in progress, read by the wrappers pluggy calls (it passes nothing of ours)"),
    ("hermes_core/prompt_dispatch.py", "IN_WORKER"): (
        "c", "set in a prompt worker's thread: a nested prompt call runs inline instead of "
        "queueing behind itself"),
    ("hermes_core/aio.py", "_host_loop"): (
        "c", "the AsyncSession's event loop, for a summariser called deep inside a worker step"),
    ("hermes_core/aio.py", "_holding"): ("c", "per-thread flag: does this worker hold a CPU slot"),
    ("hermes_core/store_guard.py", "_local"): (
        "c", "on a TurnBudget the budgeted store owns: each thread's turn deadline, so concurrent "
        "turns do not share one"),
    ("hermes_core/payload.py", "canonical_arguments"): (
        "b", "str -> str, a function of the string alone (bounded: 65,536 entries)"),
    ("hermes_core/model_data.py", "_snapshot"): ("b", "the data file shipped in the package, read once"),
}

#: The same in the plugins and the contrib engine: pure memos only (class b). A ContextVar or
#: thread-local a plugin needs belongs on its host state (``host.state``), on a per-build or
#: per-call object it passes along, or in its records when it remembers results. (The tool
#: bridge's turn split and the context-file loaders' project location were ContextVars; they
#: are now passed: ``classify(..., turn=)``, ``project(ctx, name, locations)``.)
PLUGINS_ALLOWED = {
    ("plugins/hermes_plugins/caching.py", "prompt_cache_key"): ("b", "session id -> its digest"),
    ("plugins/hermes_plugins/tools/sources.py", "_label_of_source"): ("b", "source -> display label"),
    ("plugins/hermes_plugins/tools/bridge.py", "_search_description"): (
        "b", "count and listing text -> description text"),
    ("plugins/hermes_plugins/tools/catalog.py", "_defer_set"): ("b", "tuple -> frozenset"),
    ("plugins/hermes_plugins/threat_scan.py", "_remembered"): (
        "b", "text and scope -> findings under the constant rules (256 texts of <= 64K chars)"),
    ("plugins/hermes_plugins/threat_text.py", "confusable_map"): ("b", "a data file, read once"),
}

_FACTORIES = frozenset({"ContextVar", "local"})
_MEMO_DECORATORS = frozenset({"lru_cache", "cache"})


def _called_name(node: ast.AST) -> str | None:
    """``f`` of ``f(...)``, ``m.f(...)`` or a bare ``f`` / ``m.f`` (a decorator without call)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _target_name(target: ast.expr) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):  # ``self.local = threading.local()``
        return target.attr
    return ast.unparse(target)


def hidden_state(source: str) -> set[str]:
    """Names bound to a ContextVar or a thread-local anywhere (a module name, or an attribute:
    one on an object is as hidden a channel as one in the module), any such object made
    without a name (``<ContextVar>``), and functions (at any depth) decorated with
    ``lru_cache`` / ``cache``."""
    tree = ast.parse(source)
    found: set[str] = set()
    named: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            if isinstance(node.value, ast.Call) and _called_name(node.value) in _FACTORIES:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(_target_name(t) for t in targets)
                named.add(id(node.value))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _called_name(d) in _MEMO_DECORATORS for d in node.decorator_list
        ):
            found.add(node.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in named:
            name = _called_name(node)
            if name in _FACTORIES:
                found.add(f"<{name}>")
    return found


def _state_under(*folders: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for path in sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out.update((rel, name) for name in hidden_state(path.read_text(encoding="utf-8")))
    return out


def test_the_core_keeps_only_listed_context_vars_thread_locals_and_memos() -> None:
    state = _state_under("hermes_core")
    unlisted = sorted(state - ALLOWED.keys())
    assert not unlisted, (
        f"hidden state {unlisted}: pass the value where it is used (a per-session or per-host "
        "object), or add it to ALLOWED with its class (b: pure memo, c: plumbing) and reason"
    )
    stale = sorted(ALLOWED.keys() - state)
    assert not stale, f"ALLOWED lists state that is gone; remove {stale}"


def test_plugins_add_no_unlisted_context_vars_thread_locals_or_memos() -> None:
    state = _state_under("plugins", "contrib_engines")
    unlisted = sorted(state - PLUGINS_ALLOWED.keys())
    assert not unlisted, (
        f"hidden state {unlisted}: keep it on the plugin host (host.state, docs/plugin-guide.md) "
        "or pass it where it is used; a pure memo goes into PLUGINS_ALLOWED with its reason"
    )
    stale = sorted(PLUGINS_ALLOWED.keys() - state)
    assert not stale, f"PLUGINS_ALLOWED lists state that is gone; remove {stale}"


def test_every_listed_entry_is_a_pure_memo_or_plumbing_with_a_reason() -> None:
    # No "not converted yet" class: what changes a result is passed where it is used.
    assert {kind for kind, _ in ALLOWED.values()} <= {"b", "c"}
    assert {kind for kind, _ in PLUGINS_ALLOWED.values()} == {"b"}
    assert all(reason.strip() for _, reason in (*ALLOWED.values(), *PLUGINS_ALLOWED.values()))


def test_the_scan_sees_each_kind() -> None:
    source = (
        "import contextvars, functools, threading\n"
        "from functools import lru_cache\n"
        "A = contextvars.ContextVar('a', default=None)\n"
        "B: contextvars.ContextVar[int] = contextvars.ContextVar('b')\n"
        "C = threading.local()\n"
        "D = {}\n"  # a dict is test_plugin_state's business
        "@functools.lru_cache(maxsize=4)\n"
        "def e(x): return x\n"
        "@lru_cache\n"
        "def f(x): return x\n"
        "class G:\n"
        "    @functools.cache\n"
        "    def h(self): return 1\n"
        "    @property\n"
        "    def i(self): return 2\n"
        "    def __init__(self):\n"
        "        self.j = threading.local()\n"
        "        k: contextvars.ContextVar[int] = contextvars.ContextVar('k')\n"
        "        self.slots = [threading.local()]\n"
    )
    assert hidden_state(source) == {"A", "B", "C", "e", "f", "h", "j", "k", "<local>"}
