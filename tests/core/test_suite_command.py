"""The README's test command runs on pytest-xdist workers: what that needs is declared."""

from __future__ import annotations

import shlex
import tomllib

from locations import ROOT


def _readme_pytest_args() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "&& python -m pytest" in line)
    return shlex.split(line.split("python -m pytest", 1)[1])


def test_workers_in_the_command_come_with_xdist_in_the_test_extra_and_whole_files_per_worker() -> None:
    args = _readme_pytest_args()
    assert "-n" in args, args  # the suite's 4-minute budget on 2 cores counts on both cores
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extra = project["project"]["optional-dependencies"]["test"]
    assert any(req.startswith("pytest-xdist") for req in extra), extra
    # Each file on one worker, in order: module fixtures start once, module state is shared.
    addopts = shlex.split(project["tool"]["pytest"]["ini_options"]["addopts"])
    assert addopts[addopts.index("--dist") + 1] == "loadfile", addopts
