"""Building a plugin host reads each distribution's metadata once.

``Distribution.name`` and ``.version`` each parse the whole METADATA file (hermes-core's carries
the README): read per entry point, that was ~60% of a host's build (23 ms of CPU; 9 ms now),
paid by every first ``Session.open`` and by every test after ``refresh_plugins()``.
"""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from pathlib import Path

import pytest

from hermes_core.host import PluginHost

from fake_dists import make_dist

PLUGIN = '''"""A plugin that implements no hook: only its distribution matters here."""'''


def test_each_distribution_metadata_is_parsed_once_per_host(site_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A third-party distribution with two plugins beside hermes-core's many built-ins.
    make_dist(site_dir, "hermes-twins", {"twin_a": "twin_a", "twin_b": "twin_b"},
              {"twin_a": PLUGIN, "twin_b": PLUGIN}, version="2.5.0")
    reads: Counter[str] = Counter()
    real = importlib.metadata.Distribution.metadata

    def counted(self: importlib.metadata.Distribution) -> object:
        meta = real.fget(self)  # type: ignore[attr-defined]
        reads[meta["Name"]] += 1
        return meta

    monkeypatch.setattr(importlib.metadata.Distribution, "metadata", property(counted))
    host = PluginHost.create()
    # The records still name each plugin's distribution and version.
    assert (host.records["twin_a"].distribution, host.records["twin_a"].version) == ("hermes-twins", "2.5.0")
    assert host.records["compressor"].distribution == "hermes-core"
    assert reads["hermes-twins"] == 1, reads
    assert reads["hermes-core"] == 1, reads
