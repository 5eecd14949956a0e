"""Which skills a session sees: platforms, environments, tools, disabled names."""

from __future__ import annotations

import pytest

from hermes_plugins.skills import filters
from hermes_plugins.skills.filters import (
    current_environments,
    disabled_names,
    environment_matches,
    hidden_reason,
    is_termux,
    names_from,
    platform_matches,
    session_platform,
    tools_allow,
)
from hermes_plugins.skills.metadata import conditions


@pytest.mark.parametrize(
    ("tags", "os_platform", "termux", "expected"),
    [
        ([], "linux", False, True),
        ([], "win32", False, True),
        (["macos"], "darwin", False, True),
        (["macos"], "linux", False, False),
        (["linux"], "darwin", False, False),  # spec §16.5 #4
        (["windows"], "win32", False, True),
        (["MacOS", "windows"], "win32", False, True),
        (["linux"], "android", True, True),  # Termux
        (["macos"], "android", True, False),
        (["windows"], "linux", True, False),
        (["termux"], "linux", True, True),
        (["android"], "android", True, True),
        (["linux"], "android", False, False),  # plain Android without Termux
        (["linux"], "freebsd15", False, True),
        (["freebsd"], "freebsd15", False, True),
        (["solaris"], "sunos5", False, False),
    ],
)
def test_platform_matches(tags: list[str], os_platform: str, termux: bool, expected: bool) -> None:
    assert platform_matches(tags, os_platform, termux=termux) is expected


def test_environment_matches_or_and_fails_open() -> None:
    assert environment_matches([], frozenset())
    assert environment_matches(["docker"], {"docker"})
    assert not environment_matches(["docker"], frozenset())
    assert environment_matches(["docker", "kanban"], {"kanban"})
    assert environment_matches(["quantum-computer"], frozenset())  # unknown tag: shown


def test_current_environments() -> None:
    base = filters.host_environments()
    assert current_environments("local", {}, ()) == base
    assert "docker" in current_environments("docker", {}, ())
    assert "kanban" in current_environments("local", {}, {"kanban_show"})
    assert "kanban" in current_environments("local", {"HERMES_KANBAN_TASK": "t1"}, ())


def cond(**keys: object) -> list:
    result = conditions(keys)
    assert result is not None
    return result


def test_tools_allow_matches_the_reference() -> None:
    # spec §16.1 #9
    empty = [[], [], [], [], [], [], False]
    assert tools_allow(empty, None, None)
    assert tools_allow(empty, {"web"}, {"web"})
    fallback = cond(fallback_for_toolsets=["web"])
    assert not tools_allow(fallback, set(), {"web"})
    assert tools_allow(fallback, set(), set())
    assert tools_allow(fallback, None, None)  # nothing known: the duckduckgo fallback shows
    requires = cond(requires_toolsets=["terminal"])
    assert not tools_allow(requires, set(), set())
    assert tools_allow(requires, None, {"terminal"})
    assert not tools_allow(cond(requires_tools=["web_search"]), {"terminal"}, set())
    assert not tools_allow(cond(fallback_for_tools=["web_search"]), {"web_search"}, None)


def test_hidden_reason_order() -> None:
    kwargs = dict(tools={"t"}, toolsets=set(), os_platform="linux", termux=False, environments=frozenset())
    assert hidden_reason(None, **kwargs) is None
    assert hidden_reason(cond(platforms=["macos"]), **kwargs) == "platform"
    assert hidden_reason(cond(environments=["docker"]), **kwargs) == "environment"
    assert hidden_reason(cond(requires_tools=["web"]), **kwargs) == "tools"
    assert hidden_reason(cond(**{"disable-model-invocation": True}), **kwargs) == "disable-model-invocation"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, []),
        ("", []),
        ("one", ["one"]),
        (" a b ", ["a b"]),
        ('["a", "b"]', ["a", "b"]),
        ("[not json", ["[not json"]),
        (["x ", "", None, "y"], ["x", "y"]),
    ],
)
def test_names_from(value: object, expected: list[str]) -> None:
    assert names_from(value) == expected


def test_disabled_names() -> None:
    assert disabled_names(("a", "b"), {}, "") == {"a", "b"}
    assert disabled_names(("a",), {"telegram": ["t"], "cli": "c"}, "telegram") == {"a", "t"}
    assert disabled_names((), {"cli": '["x","y"]'}, "cli") == {"x", "y"}
    assert disabled_names((), {"cli": ["x"]}, "") == frozenset()
    # config splits a string on commas, so a JSON array written as a string arrives in pieces
    assert disabled_names(('["a"', '"b"]'), {}, "") == {"a", "b"}


def test_session_platform_and_termux() -> None:
    assert session_platform("telegram", {"HERMES_PLATFORM": "cli"}) == "telegram"
    assert session_platform("", {"HERMES_PLATFORM": "cli"}) == "cli"
    assert session_platform("", {"HERMES_SESSION_PLATFORM": "discord"}) == "discord"
    assert is_termux({"TERMUX_VERSION": "0.118"})
    assert is_termux({"PREFIX": "/data/data/com.termux/files/usr"})
    assert not is_termux({})
