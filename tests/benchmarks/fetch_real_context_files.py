"""Fetch the real context files listed in tests/data/real_context_files.tsv into a cache folder.

They are other people's text, so the repository keeps only where they are (repository, path,
commit) and their sha256; this script fetches each at its commit from GitHub's raw file host
into ``$HERMES_REAL_CONTEXT_FILES`` (default /tmp/hermes-real-context-files), checks the hash,
and names the file as bench_threat_scan.py expects. It needs a network, which the tests never
have: run it by hand where one exists. A file whose hash differs is reported and not kept.

Run: python tests/benchmarks/fetch_real_context_files.py
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[1] / "data" / "real_context_files.tsv"


def main() -> int:
    target = Path(os.environ.get("HERMES_REAL_CONTEXT_FILES", "/tmp/hermes-real-context-files"))
    target.mkdir(parents=True, exist_ok=True)
    failed = 0
    for line in SOURCES.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        repo, path, commit, sha = line.split("\t")
        name = f"{repo.replace('/', '__')}__{path.replace('/', '__')}"
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - fixed https host
                data = response.read()
        except OSError as exc:
            print(f"{repo} {path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        if hashlib.sha256(data).hexdigest() != sha:
            print(f"{repo} {path}: sha256 differs, not kept", file=sys.stderr)
            failed += 1
            continue
        (target / name).write_bytes(data)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
