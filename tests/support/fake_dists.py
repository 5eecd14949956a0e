"""Build real (uninstalled) distributions on sys.path: a ``.dist-info`` with entry points and the
module it names, which ``importlib.metadata`` finds exactly like a pip-installed package."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest


def make_dist(
    root: Path,
    dist: str,
    entry_points: dict[str, str],
    modules: dict[str, str],
    version: str = "1.0.0",
) -> Path:
    """Write ``<dist>-<version>.dist-info`` plus ``modules`` (name -> source) under ``root``."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = ["[hermes.plugins]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (info / "RECORD").write_text("")
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))
    return root


@pytest.fixture
def site_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path for fake distributions; modules are forgotten afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)
    yield root
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        if module is not None and str(getattr(module, "__file__", "") or "").startswith(str(root)):
            del sys.modules[name]
