"""The core is floors, each importing only its own floor and those below, and no import circle.

Drawn from every import, those inside functions included (they run on the first call and
close a loop just as well); only imports under ``if TYPE_CHECKING:`` are left out. ``FLOORS``
below is the map of the core. A module that needs something from a floor above it is in the
wrong place: move the shared piece down, never hide the import in a function.
"""

from __future__ import annotations

from pathlib import Path

import hermes_core

from import_graph import cycles, imports_of, module_name

CORE = Path(hermes_core.__file__).parent

#: Floor -> its modules (without the ``hermes_core.`` prefix), from the bottom.
FLOORS: dict[int, tuple[str, ...]] = {
    # The package itself imports nothing when imported; ``from hermes_core import Name`` counts
    # as an import of the module that holds ``Name`` (``_LAZY``).
    0: ("",),
    # Exceptions, frozen records, host warnings, and the dependency-free helpers they use.
    1: ("errors", "records", "diagnostics", "logging", "redaction", "bounded", "daemon_pool",
        "reports", "summarizer", "session_options", "steer"),
    # Configuration: the model, field checkers, safe YAML, bounded file reads, model facts.
    2: ("config", "config_fields", "safeyaml", "files", "model_data"),
    # The message model: message helpers, wire shapes, ids, tokens, pairing, transcript records.
    3: ("messages", "text_repair", "transcript_format", "wire_ids", "conversion", "frozen",
        "encodings", "tokens", "content_tokens", "pairing", "responses_items", "responses", "wire", "history_scan"),
    # The plugin host: hook specs and markers, the host, per-hook isolation, the engine base.
    4: ("hookspecs", "host", "host_engines", "hookguard", "prompt_dispatch", "engine", "prompt"),
    # Built on the host: requests, the prompt, reading transcripts, what Session.open reads.
    5: ("payload", "history", "sdk", "assembler", "stored_copy", "transcripts", "config_cache"),
    # The session and the compaction it drives, sync and async.
    6: ("session", "session_open", "prompt_store", "compaction", "compaction_fit",
        "compaction_feedback", "overflow", "intake", "history_scan", "lease", "archive", "store_guard",
        "aio", "turn"),
    # The faces: the CLI, integrations, the conformance kit, reference pages, the plugin API.
    7: ("cli", "integrations", "testing", "hookdocs", "plugin"),
}

#: Packages whose every module sits on the package's floor.
PACKAGES = ("hookspecs", "cli", "integrations", "testing")


def floor_of(module: str) -> int | None:
    """The floor of a ``hermes_core`` module, or ``None`` when no floor lists it."""
    short = module.removeprefix("hermes_core").removeprefix(".")
    head = short.split(".")[0]
    name = head if head in PACKAGES else short
    return next((floor for floor, names in FLOORS.items() if name in names), None)


def edges(root: Path = CORE) -> dict[str, set[str]]:
    """Module -> the core modules it imports, a public name of the package resolved to the
    module that holds it (``hermes_core.Session`` -> ``hermes_core.session``)."""
    lazy = {f"hermes_core.{name}": where for name, where in hermes_core._LAZY.items()}
    out: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        name = module_name(path, root)
        found = {lazy.get(i, i) for i in imports_of(path, name, module_level_only=False)}
        out[name] = found
    modules = set(out)
    return {m: {i for i in found if i in modules and i != m} for m, found in out.items()}


def test_no_import_circle_in_the_core() -> None:
    found = cycles(edges())
    assert found == [], "import circles (move the shared piece down): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_every_core_module_has_a_floor() -> None:
    unplaced = sorted(m for m in edges() if floor_of(m) is None)
    assert unplaced == [], f"place these in FLOORS (tests/core/test_import_structure_core.py): {unplaced}"


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = sorted(
        f"{module} (floor {floor_of(module)}) imports {target} (floor {floor_of(target)})"
        for module, targets in edges().items()
        for target in targets
        if (floor_of(module) or 0) < (floor_of(target) or 0)
    )
    assert upward == [], "imports running up the floors:\n" + "\n".join(upward)


#: What everything stands on - exceptions, records, host warnings, configuration - named here
#: apart from ``FLOORS``, so that moving one of them up the map cannot pass unnoticed.
BOTTOM = ("errors", "records", "diagnostics", "logging", "redaction", "bounded",
          "config", "config_fields", "safeyaml", "files")


def test_the_bottom_imports_only_the_bottom() -> None:
    bottom = {f"hermes_core.{m}" for m in BOTTOM}
    reaching_up = {m: sorted(t - bottom - {"hermes_core"}) for m, t in edges().items() if m in bottom}
    assert {m: t for m, t in reaching_up.items() if t} == {}
    assert all((floor_of(m) or 9) <= 2 for m in bottom)


def test_the_floor_check_sees_an_upward_import(tmp_path: Path) -> None:
    # The graph must see an import inside a function, or the checks above prove nothing.
    pkg = tmp_path / "hermes_core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "records.py").write_text("def f():\n    from hermes_core.session import Session\n")
    (pkg / "session.py").write_text("from hermes_core.records import f\n")
    (pkg / "turn.py").write_text("from hermes_core import Session\n")
    found = edges(pkg)
    assert found["hermes_core.records"] == {"hermes_core.session"}
    assert found["hermes_core.turn"] == {"hermes_core", "hermes_core.session"}  # through _LAZY
    assert cycles(found) == [["hermes_core.records", "hermes_core.session"]]
    assert floor_of("hermes_core.records") < floor_of("hermes_core.session")  # type: ignore[operator]
