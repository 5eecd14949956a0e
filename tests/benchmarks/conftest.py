"""Benchmarks run serially: the project's addopts pass ``--dist loadfile`` for the test suite's
``-n 2``, and pytest-benchmark reads any ``--dist`` as "xdist is active" and turns itself off.
Without ``-n`` there are no workers, so ``--dist`` is dropped before pytest-benchmark looks."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not getattr(config.option, "numprocesses", None):
        config.option.dist = "no"
