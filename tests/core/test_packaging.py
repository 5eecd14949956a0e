"""Packaging guards: built-ins are declared entry points, the core never imports them."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
import tomllib

import pytest

from hermes_core.host import (
    CORE_DISTRIBUTION,
    ENTRY_POINT_GROUP,
    ESSENTIAL_PLUGINS,
    PluginHost,
)

from locations import ROOT


def declared() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return dict(data["project"]["entry-points"][ENTRY_POINT_GROUP])


def test_every_module_with_a_hookimpl_is_declared() -> None:
    modules = set(declared().values())
    offenders = []
    for path in (ROOT / "plugins" / "hermes_plugins").rglob("*.py"):
        tree = ast.parse(path.read_text())
        has_impl = any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any("hookimpl" in ast.unparse(d) for d in node.decorator_list)
            and node.col_offset == 0
            for node in ast.walk(tree)
        )
        module = ".".join(path.relative_to(ROOT / "plugins").with_suffix("").parts)
        module = module.removesuffix(".__init__")
        if has_impl and module not in modules:
            offenders.append(module)
    assert offenders == [], f"modules with hook implementations but no entry point: {offenders}"


@pytest.mark.parametrize("name,target", sorted(declared().items()))
def test_every_declared_entry_point_imports(name: str, target: str) -> None:
    importlib.import_module(target)


def test_installed_entry_points_equal_pyproject() -> None:
    installed = {
        ep.name: ep.value
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
        if ep.dist is not None and ep.dist.name == CORE_DISTRIBUTION
    }
    assert installed == declared(), "stale install: run `pip install -e .` again"


def test_essential_plugins_are_declared() -> None:
    assert ESSENTIAL_PLUGINS <= set(declared())


def test_core_never_imports_hermes_plugins() -> None:
    offenders = []
    for path in (ROOT / "hermes_core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "hermes_plugins" or n.startswith("hermes_plugins.") for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        if re.search(r"import_module\(\s*['\"]hermes_plugins", path.read_text()):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_no_old_style_hookwrappers() -> None:
    host = PluginHost.create(only=())
    for caller in host.pm.hook.__dict__.values():
        for impl in getattr(caller, "get_hookimpls", lambda: [])():
            assert not impl.hookwrapper, f"{impl.plugin_name} uses hookwrapper=True; use wrapper=True"


def test_builtin_hook_impls_are_trylast() -> None:
    """Any third-party implementation must win without tryfirst."""
    host = PluginHost.create(only=())
    core = {r.name for r in host.plugins() if r.distribution == CORE_DISTRIBUTION}
    offenders = []
    for info in host.hooks():
        if info.mode != "firstresult":
            continue
        for impl in info.impls:
            if impl.plugin in core and not impl.wrapper and not impl.trylast:
                offenders.append(f"{impl.plugin}:{info.name}")
    assert offenders == []
