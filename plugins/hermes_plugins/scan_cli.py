"""``hermes-ctx scan [PATH...]``: the prompt-injection findings in a repository's context files.

Each directory (default: the current one) is read by every context-file loader, as the prompt
build does, and each file screened as the build would (a file named directly on its own). Rows:
file, line, severity, family, id, action, text (``--json`` too). Exit 0 when nothing would be
cut, 1 when a line or file would be, 2 on an error (the other paths are still scanned).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hermes_core.plugin import CliState, ContextFile, PromptContext, collecting, emit_json, emit_table, guarded
from hermes_plugins._common.screening import HIGH, report

#: Loader warnings that mean a file could not be scanned.
_UNREADABLE = ("context_file_binary", "context_file_unreadable", "context_file_not_a_file",
               "context_file_symlink_loop", "context_file_broken_symlink",
               "context_file_read_timeout", "context_file_loader_failed")
_SHOWN = 72


def _files(state: CliState, root: Path, errors: list[str]) -> list[tuple[ContextFile, str, bool]]:
    """(file, loader, whether the prompt would load it) for every loader's files in ``root``."""
    ctx = PromptContext(cwd=root, home=state.home_path, host=state.host, config=state.config)
    out: list[tuple[ContextFile, str, bool]] = []
    winner: str | None = None
    for loader in state.host.context_file_loaders(ctx):
        with collecting() as bucket:
            try:
                result = loader.load(ctx) or ()
            except Exception as exc:  # noqa: BLE001 - one broken loader costs only itself, as in the build
                errors.append(f"{root}: context-file loader {loader.name!r} failed: "
                              f"{type(exc).__name__}: {exc}")
                continue
        errors.extend(f"{w.path or root}: {w.message}" for w in bucket if w.kind in _UNREADABLE)
        files = (result,) if isinstance(result, ContextFile) else tuple(result)
        files = tuple(f for f in files if isinstance(f, ContextFile) and f.text.strip())
        if files and winner is None:
            winner = loader.name
        out.extend((f, loader.name, loader.name == winner) for f in files)
    return out


def _single(path: Path, errors: list[str]) -> list[tuple[ContextFile, str, bool]]:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return []
    if "\x00" in text:
        errors.append(f"{path}: binary file (NUL bytes), not scanned")
        return []
    return [(ContextFile(path=path, label=path.name, text=text.removeprefix("\ufeff")), "file", True)]


def _shown(text: str) -> str:
    # Invisible and control characters are the point of some findings: show them escaped.
    visible = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text.strip())
    return visible if len(visible) <= _SHOWN else visible[:_SHOWN - 1] + "\u2026"


@click.command("scan")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="JSON: {files: [{path, loader, loaded, findings: [...]}], findings, high, errors}.")
@click.pass_obj
@guarded
def scan_command(state: CliState, paths: tuple[Path, ...], as_json: bool) -> None:
    """Show the prompt-injection findings in the context files of PATH (default: cwd).

    Exit 0: nothing would be cut; 1: a line or a file would be cut; 2: an error.
    """
    errors: list[str] = []
    files: list[dict[str, Any]] = []
    for path in paths or (Path.cwd(),):
        path = path.expanduser()
        if not path.exists():
            errors.append(f"{path}: no such file or directory")
            continue
        found = _files(state, path.resolve(), errors) if path.is_dir() else _single(path, errors)
        for context_file, loader, loaded in found:
            ctx = PromptContext(cwd=path if path.is_dir() else path.parent, home=state.home_path,
                                host=state.host, config=state.config)
            with collecting():
                rows = report(ctx, context_file.text, context_file.label, path=str(context_file.path))
            files.append({"path": str(context_file.path), "label": context_file.label,
                          "loader": loader, "loaded": loaded, "findings": rows})
    total = sum(len(f["findings"]) for f in files)
    high = sum(1 for f in files for r in f["findings"] if r["severity"] == HIGH)
    state.warnings_shown = True
    if as_json:
        emit_json({"files": files, "findings": total, "high": high, "errors": errors})
    else:
        table = [[f["label"] + ("" if f["loaded"] else " (not loaded)"), r["line"] or "-",
                  r["severity"], r["family"], r["finding"], r["action"], _shown(r["text"])]
                 for f in files for r in f["findings"]]
        if table:
            emit_table(["FILE", "LINE", "SEVERITY", "FAMILY", "FINDING", "ACTION", "TEXT"], table)
        scanned = len(files)
        click.echo(f"{scanned} context file(s) scanned, {total} finding(s), {high} high", err=True)
    for error in errors:
        click.echo(f"Error: {error}", err=True)
    raise SystemExit(2 if errors else 1 if high else 0)
