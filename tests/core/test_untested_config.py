"""Config paths the rest of the suite never reached: every checker's edge (plugin API), a
plugin section that is not a mapping, keys no declaration owns, plain attrs fields, unreadable
files, the config cache's unreadable signature, YAML bounds, record converters."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from hermes_core import Config, ConfigError, PluginHost, config_cache, hookimpl, safeyaml
from hermes_core import config as config_module
from hermes_core.config import ConfigSection, bind_sections, load_config
from hermes_core.diagnostics import collecting
from hermes_core.plugin import (
    boolean,
    clamped,
    field,
    free_mapping,
    integer,
    load_yaml,
    name_list,
    number,
    string,
    string_list,
)
from hermes_core.records import PromptContext, ToolCallContext

# --- the checkers (hermes_core.plugin API) ---------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [(" Yes ", True), ("off", False), ("1", True), ("0", False)])
def test_boolean_reads_the_words(raw: str, expected: bool) -> None:
    assert boolean(raw) is expected


def test_integer_edges() -> None:
    assert integer(optional=True)(None) is None
    assert integer()(3.0) == 3 and isinstance(integer()(3.0), int)
    with pytest.raises(ValueError, match="must be at most 9"):
        integer(1, 9)(10)
    with pytest.raises(ValueError, match="expected an integer or null"):
        integer(optional=True)(2.5)


def test_number_edges() -> None:
    assert number(optional=True)(None) is None
    for bad in ([1], None, True):
        with pytest.raises(ValueError, match="expected a number"):
            number()(bad)
    with pytest.raises(ValueError, match="expected a number"):
        number()("three")


def test_string_edges() -> None:
    assert string()(42) == "42"  # a YAML number where a string is wanted
    with pytest.raises(ValueError, match="expected a string or null"):
        string(optional=True)(["a"])
    with pytest.raises(ValueError, match="expected a string"):
        string(choices=("a", "b"))(1)  # a number is not one of the words


def test_list_and_mapping_edges() -> None:
    assert string_list(None) == ()
    with pytest.raises(ValueError, match="expected a list of strings"):
        string_list([1, 2])
    assert free_mapping(None) == {}
    with pytest.raises(ValueError, match="expected a mapping"):
        free_mapping(["a"])
    assert name_list(None) is None


def test_clamped_refuses_a_boolean() -> None:
    assert clamped(0, 10, int)("12") == 10
    with pytest.raises(ValueError, match="expected a number"):
        clamped(0, 10, int)(True)


# --- plugin sections --------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Inner:
    depth: int = field(1, integer(0, 5))


@attrs.frozen(kw_only=True)
class AcmeOptions:
    level: int = field(1, integer(1, 9))
    note: Any = None  # a plain attrs field: no checker, taken as written
    # A nested attrs class without a checker; this module's annotations are strings
    # (``from __future__ import annotations``), as in most plugins.
    inner: Inner = attrs.field(factory=Inner)


ACME = ConfigSection(name="acme", model=AcmeOptions, env={"ACME_LEVEL": "acme.level"}, plugin="acme")


def test_a_plugin_section_reads_plain_and_nested_fields(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("acme:\n  note: [free, form]\n  inner:\n    depth: 4\n")
    config = bind_sections(load_config(home=tmp_path, env={}), [ACME])
    options = config.section(ACME)
    assert options.note == ["free", "form"] and options.inner.depth == 4
    assert config.acme is options


def test_a_nested_model_given_a_scalar_is_a_config_error() -> None:
    config = load_config(data={"acme": {"inner": "deep"}}, env={})
    with pytest.raises(ConfigError, match=r"acme.inner: expected a mapping, got 'deep'"):
        bind_sections(config, [ACME])


def test_a_nested_model_whose_annotation_cannot_be_resolved_is_a_plain_field() -> None:
    namespace: dict[str, Any] = {}
    exec(  # noqa: S102 - a model annotated with a name only a type checker would see
        "from __future__ import annotations\nimport attrs\n"
        "@attrs.frozen(kw_only=True)\nclass Hidden:\n    blob: OnlyForTypeCheckers = None\n",
        namespace,
    )
    hidden = ConfigSection(name="hidden", model=namespace["Hidden"], plugin="h")
    config = bind_sections(load_config(data={"hidden": {"blob": {"k": 1}}}, env={}), [hidden])
    assert config.section(hidden).blob == {"k": 1}


def test_a_plugin_section_that_is_not_a_mapping_names_the_plugin() -> None:
    config = load_config(data={"acme": "loud"}, env={})
    with pytest.raises(ConfigError, match=r"acme: expected a mapping, got 'loud' \(section of plugin 'acme'\)"):
        bind_sections(config, [ACME])


def test_a_plugin_extending_a_core_section_leaves_its_bad_value_to_the_core() -> None:
    @attrs.frozen(kw_only=True)
    class TopLevel:
        timezone: str = field("UTC", string())

    top = ConfigSection(name="", model=TopLevel, plugin="tz")
    # the top level is the one the core read; a bad *core* section value is the core's error
    with pytest.raises(ConfigError, match="agent: expected a mapping"):
        load_config(data={"agent": "x"}, env={})
    extend_agent = ConfigSection(name="agent", model=TopLevel, plugin="tz")
    config = attrs.evolve(load_config(data={}, env={}), raw={"agent": "x"})
    bound = bind_sections(config, [top, extend_agent])
    assert bound.section(extend_agent).timezone == "UTC"


def test_a_null_core_section_keeps_its_defaults() -> None:
    assert load_config(data={"compression": None}, env={}).compression == Config().compression


def test_a_flag_for_a_key_nobody_declares_is_an_error() -> None:
    config = load_config(data={}, env={}, flags={"nobody.key": 1})
    with pytest.raises(ConfigError, match=r"nobody.key: no such config key \(set by flag\)"):
        bind_sections(config, [ACME])


def test_a_flag_for_an_unknown_key_of_a_plugin_section_is_an_error() -> None:
    config = load_config(data={}, env={}, flags={"acme.nope": 1})
    with pytest.raises(ConfigError, match=r"acme.nope: no such config key \(set by flag\)"):
        bind_sections(config, [ACME])


def test_an_unbound_section_applies_its_environment_variable() -> None:
    config = load_config(data={"acme": {"level": 2}}, env={"ACME_LEVEL": "7"})
    assert config.section(ACME).level == 7


def test_private_names_are_not_plugin_sections() -> None:
    with pytest.raises(AttributeError):
        Config()._no_such_private_thing  # noqa: B018


def test_a_top_level_that_is_not_a_mapping_is_an_error() -> None:
    with pytest.raises(ConfigError, match="config: the top level must be a mapping, not list"):
        load_config(data=["a"], env={})  # type: ignore[arg-type]


def test_a_config_file_the_os_cannot_read_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("agent: {}\n")

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(config_module, "read_bytes_bounded", failing)
    with pytest.raises(ConfigError, match=r"config.yaml: cannot read config file: Input/output error"):
        load_config(path=path, env={})


def test_a_plugin_declaring_an_unusable_section_is_refused_with_a_warning() -> None:
    class NotAttrs:
        pass

    class Declarer:
        @hookimpl
        def hermes_config_sections(self) -> Any:
            return [ConfigSection(name="plain", model=NotAttrs), ConfigSection(name="a.b", model=AcmeOptions)]

    host = PluginHost.create(load_entry_points=False, plugins=[(Declarer(), "declarer")])
    with collecting() as warnings:
        assert host.config_sections() == []
    reasons = [w.message for w in warnings if w.kind == "config_section_refused"]
    assert any("is not an attrs class" in r for r in reasons)
    assert any("cannot contain a dot" in r for r in reasons)


# --- config cache ------------------------------------------------------------------------------


def test_a_config_path_that_cannot_be_statted_is_read_each_time(tmp_path: Path) -> None:
    loop = tmp_path / "config.yaml"
    os.symlink(loop, loop)  # a symlink to itself: stat fails with ELOOP, not "missing"
    assert config_cache._signature(loop) == (None, False)


def test_environ_copy_without_cpythons_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {"ONLY": "this"})
    copy = config_cache.environ_copy()
    assert copy == {"ONLY": "this"} and copy is not os.environ


# --- YAML bounds ---------------------------------------------------------------------------


def test_an_empty_document_is_none() -> None:
    assert load_yaml("# nothing but a comment\n") is None


def test_an_alias_deepening_a_document_past_the_bound_is_refused() -> None:
    # Each level is within the bound as written; the alias puts a deep node under a deep one.
    deep = "[" * 4 + "1" + "]" * 4
    text = f"a: &x {deep}\nb: [[[[*x]]]]\n"
    assert load_yaml(text, max_depth=10)["a"] == [[[[1]]]]
    with pytest.raises(safeyaml.YAMLLimitError, match="nested more than 7 levels deep"):
        load_yaml(text, max_depth=7)


def test_the_pure_python_parser_running_out_of_stack_is_a_limit_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safeyaml, "_LOADER", yaml.SafeLoader)  # PyYAML built without libyaml
    with pytest.raises(safeyaml.YAMLLimitError, match="more than the parser can follow"):
        load_yaml("[" * 800 + "]" * 800, max_depth=10**6)


# --- records -------------------------------------------------------------------------------


def test_record_converters_accept_strings(tmp_path: Path) -> None:
    ctx = PromptContext(cwd=tmp_path, home=tmp_path, config=Config(), tools="read, write,,", toolsets=None)
    assert ctx.tools == frozenset({"read", "write"}) and ctx.toolsets == frozenset()
    assert ToolCallContext(tool_name="t", home=str(tmp_path)).home == tmp_path
    assert ToolCallContext(tool_name="t", home=os.fsencode(str(tmp_path)).decode()).home == tmp_path
    given = Path(tmp_path)
    assert ToolCallContext(tool_name="t", home=given).home is given
