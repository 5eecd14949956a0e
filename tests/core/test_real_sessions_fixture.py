"""The real-sessions folder is found from the main checkout and from a worktree alike."""

from pathlib import Path

import pytest

from locations import find_real_sessions


def test_found_beside_the_checkout_or_an_ancestor(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "real-sessions"
    shared.mkdir(parents=True)
    main, worktree = tmp_path / "main", tmp_path / "wt" / "cleanup"
    assert find_real_sessions(main, None) == shared
    assert find_real_sessions(worktree, None) == shared
    assert find_real_sessions(worktree, str(tmp_path / "elsewhere")) == tmp_path / "elsewhere"


def test_absent_points_beside_the_checkout(tmp_path: Path) -> None:
    if any((folder / "shared" / "real-sessions").is_dir() for folder in tmp_path.parents):
        pytest.skip("this machine keeps a shared/real-sessions above the temporary folder")
    assert find_real_sessions(tmp_path / "a" / "repo", None) == tmp_path / "a" / "shared" / "real-sessions"
