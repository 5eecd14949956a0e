from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.diagnostics import drain_warnings
from hermes_core.host import refresh_plugins
from hermes_core.logging import reset_logging

from fake_dists import site_dir  # noqa: F401  (fixture)
from locations import REAL_SESSIONS, SUPPORT

pytest_plugins = ["hermes_core.testing"]

# pytest rewrites the asserts of test files only: a helper's assert (the validators, page
# readers, session builders) shows its operands on failure too. Those imported above are done.
pytest.register_assert_rewrite(*(p.stem for p in sorted(SUPPORT.glob("*.py")) if p.stem not in sys.modules))


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reads the developer's ~/.hermes or inherits plugin switches from the shell."""
    home = tmp_path_factory.mktemp("default-home")
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in (
        "HERMES_DISABLE_PLUGINS", "HERMES_STRICT_PLUGINS", "HERMES_TRACE_HOOKS",
        "HERMES_LOAD_PLUGINS", "HERMES_TIMEZONE", "HERMES_ENVIRONMENT_HINT",
        "HERMES_EPHEMERAL_SYSTEM_PROMPT", "TERMINAL_ENV", "TERMINAL_CWD",
    ):
        monkeypatch.delenv(var, raising=False)
    # CLI invocations configure logging for the process, and warnings recorded outside a
    # build's collector accumulate in the test thread's context: start each test clean.
    drain_warnings()
    # Session.open shares one host per process: a test that registers plugins on a session's
    # host must not hand them to the next test.
    refresh_plugins()
    yield
    reset_logging()
    drain_warnings()


@pytest.fixture
def real_sessions_dir() -> Path:
    """The real-sessions folder; the test is skipped when it is not there."""
    if not REAL_SESSIONS.is_dir():
        pytest.skip(f"no real sessions at {REAL_SESSIONS}")
    return REAL_SESSIONS


# ``--hypothesis-profile=soak``: the opt-in long run of the fuzz suites (test_fuzz_session.py
# takes max(its default, the profile's) examples).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("soak", max_examples=20_000, deadline=None)
