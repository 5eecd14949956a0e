"""YAML from users' files: bombs, self-reference and deep nesting refused, the rest unchanged."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session, safeyaml
from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.errors import ConfigError
from hermes_core.safeyaml import YAMLLimitError, load_yaml
from hermes_plugins.skills import filters

from hypothesis_budget import examples
from skills_support import write_skill


def laughs(levels: int = 9, width: int = 9, key: str = "lol") -> str:
    """The classic "billion laughs": each anchor a list of ``width`` aliases of the previous."""
    lines = [f"{key}0: &{key}0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"{key}{level}: &{key}{level} [" + ", ".join([f"*{key}{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def deep_mapping(depth: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(depth)) + "  " * depth + "b: 1\n"


@pytest.fixture(autouse=True)
def _fresh_skills(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(filters, "_host_environments", frozenset())
    yield


def test_a_billion_laughs_is_refused_without_growing_memory() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(YAMLLimitError, match="billion laughs"):
            load_yaml(laughs())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000


def test_a_self_referencing_anchor_is_refused() -> None:
    with pytest.raises(YAMLLimitError, match="recursive"):
        load_yaml("a: &x [1, *x]\n")


@pytest.mark.parametrize("loader", ["libyaml", "pure-python"])
def test_deep_nesting_is_a_yaml_error_with_either_parser(monkeypatch: pytest.MonkeyPatch, loader: str) -> None:
    if loader == "pure-python":
        monkeypatch.setattr(safeyaml, "_LOADER", yaml.SafeLoader)
    depth = 1_200  # past the interpreter's recursion limit, past libyaml's nesting limit
    with pytest.raises(yaml.YAMLError):
        load_yaml("[" * depth + "]" * depth)
    with pytest.raises(yaml.YAMLError):
        load_yaml(deep_mapping(300))


def test_moderate_aliases_and_merge_keys_still_load() -> None:
    doc = "base: &b {model: m, timeout: 3}\nfast:\n  <<: *b\n  timeout: 1\nlist: [*b, *b]\n"
    assert load_yaml(doc) == {
        "base": {"model": "m", "timeout": 3},
        "fast": {"model": "m", "timeout": 1},
        "list": [{"model": "m", "timeout": 3}] * 2,
    }


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=20),
    st.floats(allow_nan=False, allow_infinity=False),
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=examples(150), deadline=None)
@given(documents)
def test_load_yaml_agrees_with_safe_load_on_documents_without_aliases(value: Any) -> None:
    text = yaml.safe_dump(value, allow_unicode=True)
    assert load_yaml(text) == yaml.safe_load(text)


# --- where users' YAML is read ---------------------------------------------------------


def test_a_bomb_in_config_yaml_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    target = tmp_path / "config.yaml"
    target.write_text(laughs(), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path, env={})
    assert str(target) in str(caught.value) and "billion laughs" in str(caught.value)


DEEP_20000 = {
    "flow-list": "x: " + "[" * 20_000 + "]" * 20_000 + "\n",
    "flow-map": "x: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n",
    "block-list": "x:\n" + "- " * 20_000 + "leaf\n",
}


@pytest.mark.parametrize("shape", sorted(DEEP_20000))
def test_a_20000_deep_config_yaml_is_a_config_error(tmp_path: Path, shape: str) -> None:
    target = tmp_path / "config.yaml"
    target.write_text(DEEP_20000[shape], encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path, env={})
    assert str(target) in str(caught.value)


@pytest.mark.parametrize("content", ["deep", "bomb", "deep-flow"])
def test_cli_exits_2_with_the_reason_on_a_hostile_config(tmp_path: Path, content: str) -> None:
    target = tmp_path / "config.yaml"
    text = {
        "deep": DEEP_20000["block-list"],
        "bomb": laughs(),
        "deep-flow": "x: " + "[" * 100_000 + "]" * 100_000 + "\n",
    }[content]
    target.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config", "--json"])
    assert result.exit_code == 2, result.output
    assert str(target) in result.stderr
    assert "Traceback" not in result.stderr and result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_exits_2_when_config_loading_recurses_or_exits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_core.cli.app as cli_module  # the group and its config loading live in app

    for error in (RecursionError("too deep"), SystemExit(3)):
        def broken(**_: Any) -> Any:
            raise error  # noqa: B023 - used within this iteration only

        monkeypatch.setattr(cli_module, "load_config", broken)
        result = CliRunner().invoke(cli, ["--home", str(tmp_path), "config", "--json"])
        assert result.exit_code == 2, (error, result.output)
        assert "configuration" in result.stderr


def test_a_bomb_in_skill_frontmatter_is_a_warning_and_the_index_still_builds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_skill(home / "skills", "tools/good", description="Good one")
    bomb = write_skill(home / "skills", "tools/bomb", raw="---\n" + laughs() + "name: bomb\n---\nbody\n")
    session = Session.open(cwd=tmp_path, home=home, tools=["skill_view"], env={}, persist=False)
    tracemalloc.start()
    try:
        prompt = session.system_prompt
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "Good one" in prompt
    assert peak < 50_000_000
    named = [w for w in session.warnings if w.path == str(bomb)]
    assert named and "billion laughs" in named[0].message


def test_a_bomb_in_a_category_description_is_a_warning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_skill(home / "skills", "tools/good", description="Good one")
    desc = home / "skills" / "tools" / "DESCRIPTION.md"
    desc.write_text("---\n" + laughs() + "description: boom\n---\n", encoding="utf-8")
    session = Session.open(cwd=tmp_path, home=home, tools=["skill_view"], env={}, persist=False)
    assert "Good one" in session.system_prompt
    assert [w for w in session.warnings if w.path == str(desc) and "billion laughs" in w.message]


def test_a_deep_document_is_refused_before_it_is_composed(monkeypatch: pytest.MonkeyPatch) -> None:
    # libyaml's composer recurses on the C stack (no RecursionError: the process crashes on
    # PyYAML builds whose scanner allows deep flow nesting), so depth is judged from events.
    import yaml

    from hermes_core import safeyaml

    def no_compose(self: object) -> None:
        raise AssertionError("composed a document over the depth bound")

    monkeypatch.setattr(safeyaml._LOADER, "get_single_node", no_compose, raising=False)
    with pytest.raises(yaml.YAMLError):
        safeyaml.load_yaml("x: " + "[" * 500 + "]" * 500 + "\n")
