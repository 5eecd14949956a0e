"""Plugin state belongs to a plugin host: built once per host and key, never shared between hosts."""

from __future__ import annotations

import threading
import time

from hypothesis import given
from hypothesis import strategies as st

from hermes_core import PluginHost, refresh_plugins
from hermes_core.host import host_state


class Counter:
    built = 0

    def __init__(self) -> None:
        type(self).built += 1
        self.value = 0


def bare_host() -> PluginHost:
    return PluginHost.create(load_entry_points=False, env={})


def test_state_is_built_once_per_host_and_kept() -> None:
    host = bare_host()
    first = host.state(Counter)
    first.value = 7
    assert host.state(Counter) is first and host.state(Counter).value == 7
    other = bare_host()
    assert other.state(Counter) is not first and other.state(Counter).value == 0


def test_an_explicit_key_separates_states_of_one_factory() -> None:
    host = bare_host()
    a, b = host.state(Counter, key="a"), host.state(Counter, key="b")
    assert a is not b and host.state(Counter, key="a") is a
    assert host.state(Counter) not in (a, b)


def test_without_a_host_nothing_is_remembered() -> None:
    assert host_state(None, Counter) is not host_state(None, Counter)
    host = bare_host()
    assert host_state(host, Counter) is host_state(host, Counter) is host.state(Counter)


def test_concurrent_first_use_builds_one_state() -> None:
    built: list[object] = []

    def slow() -> object:
        time.sleep(0.01)  # widen the window in which a second builder could slip in
        obj = object()
        built.append(obj)
        return obj

    host = bare_host()
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(host.state(slow))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and seen == built * 8


def test_a_refreshed_shared_host_starts_with_fresh_state() -> None:
    host = PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""})
    host.state(Counter).value = 3
    assert PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""}).state(Counter).value == 3
    refresh_plugins()
    assert PluginHost.shared(env={"HERMES_LOAD_PLUGINS": ""}).state(Counter).value == 0


@given(st.lists(st.sampled_from("abcde"), max_size=30))
def test_one_state_per_distinct_key(keys: list[str]) -> None:
    host = bare_host()
    states = {key: host.state(Counter, key=key) for key in keys}
    assert len({id(s) for s in states.values()}) == len(set(keys))
    assert all(host.state(Counter, key=key) is states[key] for key in keys)
