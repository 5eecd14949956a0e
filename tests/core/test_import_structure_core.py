"""The core is floors, each importing only its own floor and those below, and no import circle.

Drawn from every import: those inside functions (they run on the first call and close a loop
just as well) and those under ``if TYPE_CHECKING:`` (a picture of the code draws them, and a
type that needs a higher floor is a piece in the wrong place). ``FLOORS`` below is the map of
the core. A module that needs something from a floor above it is in the
wrong place: move the shared piece down, never hide the import in a function.
"""

from __future__ import annotations

from pathlib import Path

import hermes_core

from import_graph import cycles, imports_of, module_name

CORE = Path(hermes_core.__file__).parent

#: Floor -> its modules (without the ``hermes_core.`` prefix), from the bottom.
FLOORS: dict[int, tuple[str, ...]] = {
    # Exceptions, host warnings, and the dependency-free helpers they use.
    1: ("errors", "diagnostics", "logging", "redaction", "redaction_patterns", "bounded", "daemon_pool",
        "reports", "summarizer", "steer"),
    # Configuration (the model, field checkers, safe YAML, bounded file reads, model facts) and
    # the frozen records that cross hook boundaries: their contexts carry the Config.
    2: ("config", "config_fields", "safeyaml", "files", "model_data", "records"),
    # The message model: message helpers, wire shapes, ids, tokens, pairing, transcript records.
    3: ("messages", "text_repair", "transcript_format", "wire_ids", "server_blocks", "conversion", "frozen",
        "encodings", "tokens", "content_tokens", "pairing", "responses_items", "responses", "wire", "history_scan"),
    # The plugin host: hook specs and markers, the host, per-hook isolation, the engine base.
    4: ("hookspecs", "host", "host_engines", "hookguard", "prompt_dispatch", "engine", "prompt"),
    # Built on the host: requests, the prompt, reading transcripts, what Session.open reads.
    5: ("payload", "history", "sdk", "assembler", "stored_copy", "transcripts", "config_cache"),
    # The session and the compaction it drives, sync and async.
    6: ("session", "session_open", "prompt_store", "compaction", "compaction_fit",
        "compaction_feedback", "overflow", "intake", "lease", "archive", "store_guard",
        "aio", "turn", "session_options"),
    # The faces: the CLI, integrations, the conformance kit, reference pages, the plugin API,
    # and the package (``""``), whose public names come from every floor (its TYPE_CHECKING
    # block names them; it imports none of them until first asked, see below).
    7: ("cli", "integrations", "testing", "hookdocs", "plugin", ""),
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
    """Module -> the core modules it imports, ``TYPE_CHECKING`` ones included. A name taken
    from the package is an import of the module that holds it: ``from hermes_core import
    Session`` -> ``hermes_core.session`` (``_LAZY``), ``from hermes_core import bounded`` ->
    ``hermes_core.bounded``; the package itself only for a name of its own (``__version__``)."""
    lazy = {f"hermes_core.{name}": where for name, where in hermes_core._LAZY.items()}
    found = {module_name(path, root): imports_of(path, module_name(path, root), module_level_only=False,
                                                 type_checking=True) for path in root.rglob("*.py")}
    modules = set(found)

    def own_name(i: str) -> bool:
        return i.startswith("hermes_core.") and i.count(".") == 1 and i not in modules and i not in lazy

    out: dict[str, set[str]] = {}
    for m, names in found.items():
        targets = {lazy.get(i, i) for i in names}
        if not any(own_name(i) for i in names):
            targets.discard("hermes_core")
        out[m] = {i for i in targets if i in modules and i != m}
    return out


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
BOTTOM = ("errors", "records", "diagnostics", "logging", "redaction", "redaction_patterns", "bounded",
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
    (pkg / "bounded.py").write_text("")
    (pkg / "cli.py").write_text("from hermes_core import __version__, bounded\n")
    found = edges(pkg)
    assert found["hermes_core.records"] == {"hermes_core.session"}
    assert found["hermes_core.turn"] == {"hermes_core.session"}  # through _LAZY
    assert found["hermes_core.cli"] == {"hermes_core", "hermes_core.bounded"}  # a name of its own
    assert cycles(found) == [["hermes_core.records", "hermes_core.session"]]
    assert floor_of("hermes_core.records") < floor_of("hermes_core.session")  # type: ignore[operator]


def test_the_graph_sees_an_import_made_for_annotations_only(tmp_path: Path) -> None:
    # A type that needs a higher floor closes a circle in the picture of the code as surely as
    # a runtime import: the check must not look away from ``if TYPE_CHECKING:``.
    pkg = tmp_path / "hermes_core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "wire.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hermes_core.history import H\n")
    (pkg / "history.py").write_text("from hermes_core.wire import f\n")
    found = edges(pkg)
    assert found["hermes_core.wire"] == {"hermes_core.history"}
    assert cycles(found) == [["hermes_core.history", "hermes_core.wire"]]


def test_the_package_imports_nothing_until_asked() -> None:
    # It sits on the top floor for the names its TYPE_CHECKING block gives type checkers;
    # running, it imports none of them (``__getattr__`` loads each on first use).
    init = CORE / "__init__.py"
    running = imports_of(init, "hermes_core", module_level_only=False)
    assert {i for i in running if i.startswith("hermes_core")} == set()
    assert edges()["hermes_core"]  # the names the type checker sees do count
