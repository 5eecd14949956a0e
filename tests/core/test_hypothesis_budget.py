"""A bounded property test runs its own count by default and the soak profile's when loaded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from hypothesis_budget import examples


@pytest.fixture
def restore_profile() -> Iterator[None]:
    """Put back whatever profile the run loaded (``ci`` under CI=true, or the default)."""
    before = settings.default
    yield
    settings.register_profile("_restored_by_test_hypothesis_budget", parent=before)
    settings.load_profile("_restored_by_test_hypothesis_budget")


def test_the_default_run_keeps_each_tests_own_count(restore_profile: None) -> None:
    settings.load_profile("default")
    assert examples(150) == 150
    assert examples(40) == 40  # below hypothesis's default too: the test's own choice stands


def test_the_soak_profile_raises_every_bounded_test(restore_profile: None) -> None:
    settings.load_profile("soak")
    soak = settings.get_profile("soak").max_examples
    assert soak > 150
    assert examples(150) == soak
    assert examples(40) == soak


def test_a_profile_asking_for_fewer_leaves_the_count_alone(restore_profile: None) -> None:
    settings.register_profile("_quick_for_test_hypothesis_budget", max_examples=10)
    settings.load_profile("_quick_for_test_hypothesis_budget")
    assert examples(150) == 150
