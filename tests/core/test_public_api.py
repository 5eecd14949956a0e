"""``hermes_core``'s public names: each importable, each imported only when first asked for."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hermes_core

#: The public API as the README and plugin authors use it; a name dropped from ``__all__`` or
#: from the lazy table fails here.
PUBLIC = {
    "AsyncSession", "CompressionReport", "Config", "ConfigError", "ContextEngine", "ContextFile",
    "ContextFileLoader", "ContextOverflowError", "EngineSpec", "FrozenTools", "HermesError",
    "HermesPluginError", "HostWarning", "InvalidMessagesError", "PayloadContext", "PluginHost",
    "PluginRecord", "PromptBlock", "PromptContext", "RequestReport", "Session", "SessionOptions", "SkillSource",
    "StoreError", "ToolCallContext", "ToolsContext", "TurnResult", "UnknownEngineError", "Usage", "__version__",
    "as_message", "coerce_usage", "content_tokens", "drain_warnings", "freeze_tools", "get_logger", "hookimpl",
    "hookspec",
    "load_config", "normalize_messages", "record_warning", "refresh_plugins",
}


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return out.stdout


def test_all_lists_exactly_the_public_names() -> None:
    assert set(hermes_core.__all__) == PUBLIC
    assert PUBLIC <= set(dir(hermes_core))


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_imports_from_the_package(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from hermes_core import {name}", namespace)  # noqa: S102 - the statement users write
    assert namespace[name] is getattr(hermes_core, name)


def test_public_names_are_the_objects_of_their_modules() -> None:
    from hermes_core.config import Config
    from hermes_core.hookspecs import hookimpl
    from hermes_core.session import Session

    assert hermes_core.Session is Session and hermes_core.Config is Config
    assert hermes_core.hookimpl is hookimpl


def test_a_bare_import_loads_none_of_the_package_and_names_load_what_they_need() -> None:
    probe = (
        "import sys, json\n"
        "import hermes_core\n"
        "bare = sorted(m for m in sys.modules if m.startswith('hermes_core.'))\n"
        "heavy = sorted(m for m in ('attrs', 'yaml', 'structlog', 'pluggy') if m in sys.modules)\n"
        "from hermes_core import hookimpl\n"
        "marker = 'hermes_core.transcripts' in sys.modules or 'hermes_core.config' in sys.modules\n"
        "from hermes_core import *\n"
        "print(json.dumps([bare, heavy, marker, 'hermes_core.transcripts' in sys.modules]))\n"
    )
    bare, heavy, marker_pulls_more, star_pulls_transcripts = json.loads(_fresh(probe))
    assert bare == [] and heavy == []
    assert not marker_pulls_more  # a plugin module's ``from hermes_core import hookimpl``
    assert not star_pulls_transcripts  # read a transcript, then pay for the reader


def test_submodules_resolve_as_attributes_and_unknown_names_fail() -> None:
    out = _fresh("import hermes_core; print(hermes_core.tokens.__name__)")
    assert out.strip() == "hermes_core.tokens"
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        hermes_core.no_such_thing  # noqa: B018
