"""Docs guards: every hook spec is documented, and the generated reference is current."""

from __future__ import annotations

from hermes_core.hookdocs import render_config_markdown, render_markdown
from hermes_core.hookspecs import SPEC_CLASSES

from locations import ROOT


def test_every_hook_spec_appears_in_the_docs() -> None:
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    missing = [
        name for cls in SPEC_CLASSES for name in vars(cls) if name.startswith("hermes_") and name not in docs
    ]
    assert missing == []


def test_hook_reference_is_up_to_date() -> None:
    current = (ROOT / "docs" / "hooks.md").read_text()
    assert current == render_markdown(), "run: python -m hermes_core.hookdocs > docs/hooks.md"


def test_configuration_reference_is_up_to_date() -> None:
    current = (ROOT / "docs" / "configuration.md").read_text()
    assert current == render_config_markdown(), "run: python -m hermes_core.hookdocs config > docs/configuration.md"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(line.strip() for line in ci.splitlines() if "pytest" in line)
    assert command in readme


def test_every_hook_docstring_follows_the_template() -> None:
    """When it is called, its arguments, what it returns (and what None means), who wins."""
    for cls in SPEC_CLASSES:
        for name, fn in vars(cls).items():
            if not name.startswith("hermes_"):
                continue
            doc = fn.__doc__ or ""
            for section in ("Called:", "Args:", "Returns:", "Semantics:"):
                assert section in doc, f"{name} lacks {section!r}"
            assert "versionadded" in doc, name
