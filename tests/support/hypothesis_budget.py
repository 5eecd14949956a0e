"""How many examples a bounded property test runs.

The default run keeps each property test to a count that exercises it well in a fraction of a
second to a few seconds (the whole suite must stay under 4 minutes on 2 shared cores); a profile
that asks for more than hypothesis's default (``--hypothesis-profile=soak``, registered in
``conftest.py``) raises every bounded test to its count. Use it in the decorator:

    @settings(max_examples=examples(150), deadline=None)

The count is read when the test module is imported, after pytest has loaded the profile.
"""

from __future__ import annotations

from hypothesis import settings


def examples(default: int) -> int:
    """``default``, or the loaded profile's ``max_examples`` when that profile asks for more
    examples than hypothesis's own default (a soak run)."""
    loaded = settings.default.max_examples
    return max(default, loaded) if loaded > settings.get_profile("default").max_examples else default
