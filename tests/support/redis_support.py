"""A real redis-server on a free loopback port, started by the tests themselves."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

#: Seconds a starting redis-server may take to answer: only a hang guard (two shared cores).
START_GUARD = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def missing(reason: str) -> NoReturn:
    """Skip for lack of a real component; under ``CI=true`` fail instead, since a skipped suite
    is not a passing one (.ci/run installs redis-server before the tests)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Yield the URL of a fresh redis-server (no persistence); skip when there is none.

    A port found free can be taken by another process before our server binds it (other test
    runs start servers on this machine too): a server that cannot bind exits and is started
    again on another port, and the one answering must be ours (its pid), never a stranger's.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        missing("redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run does it)")
    try:
        import redis
    except ImportError:
        missing("the redis client is not installed (pip install -e '.[test]')")
    for _attempt in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(workdir), "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            if _answers_as(proc, redis.Redis.from_url(url), redis.ConnectionError):
                yield url
                return
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    missing("redis-server could not start on a free port (5 tries)")


def _answers_as(proc: subprocess.Popen[bytes], client: Any, refused: type[Exception]) -> bool:
    """Whether ``proc`` came up and is the server answering ``client`` (False: try another port)."""
    deadline = time.monotonic() + START_GUARD
    try:
        while proc.poll() is None:
            try:
                return int(client.info("server")["process_id"]) == proc.pid
            except refused:
                if time.monotonic() > deadline:
                    raise AssertionError(f"redis-server did not answer within {START_GUARD:g} s") from None
                time.sleep(0.025)
        return False  # it exited: the port was taken
    finally:
        client.close()
