"""The code version recorded in run logs: package version plus the git commit when available."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


@cache
def code_version() -> str:
    try:
        pkg = version("pastcast")
    except PackageNotFoundError:
        pkg = "0+unknown"
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return f"{pkg}+g{commit}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return pkg
