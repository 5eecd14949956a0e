"""A real browser for the HTML report's tests: Debian's chromium driven by Playwright.

Playwright's own browser download is never used (``playwright install`` fetches a build from a
host the project cannot reach): ``executable_path`` points at the system chromium that
``.ci/run`` installs. Without chromium or playwright the tests skip locally and fail under
``CI=true`` (``redis_support.missing``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from redis_support import missing

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    missing("chromium is not installed (apt-get install -y chromium)")


@contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium (Playwright ``Browser``), closed on exit."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (the test extra)")
    executable = chromium_path()
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


class PageWatch:
    """A page that records console errors, page errors and every request that is not a
    ``file:`` or ``data:`` URL (each is aborted: the report must open offline)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.network: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            self.network.append(url)
            route.abort()
