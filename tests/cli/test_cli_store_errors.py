"""Store outages and unknown session ids in the CLI: one line on stderr, exit 2 (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli

from fake_llm_servers import refused_port


def _run(home: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"HERMES_HOME": str(home)})
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [
    ("sessions", "list"), ("sessions", "show", "s1"), ("sessions", "rm", "s1"), ("history", "list"),
    ("history", "search", "s1", "anything"), ("history", "show", "s1", "m1.1"), ("history", "prune"),
])
def test_an_unreachable_redis_is_one_line_and_exit_2(tmp_path: Path, command: tuple[str, ...]) -> None:
    with refused_port() as port:
        (tmp_path / "config.yaml").write_text(
            f"session_store:\n  backend: redis\n  url: redis://user:hunter2@127.0.0.1:{port}/0\n"
        )
        code, out, err = _run(tmp_path, *command)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"127.0.0.1:{port}" in lines[0] and "hunter2" not in err  # the server, never its password


@pytest.mark.parametrize("command", [
    ("sessions", "show", "nosuch"), ("sessions", "rm", "nosuch"), ("history", "search", "nosuch", "words"),
    ("history", "show", "nosuch", "m1.1"), ("history", "prune", "--session", "nosuch"),
])
def test_an_unknown_session_id_is_exit_2_for_every_subcommand(tmp_path: Path, command: tuple[str, ...]) -> None:
    code, out, err = _run(tmp_path, *command)
    assert code == 2, (out, err)
    assert "nosuch" in err and len(err.strip().splitlines()) == 1
