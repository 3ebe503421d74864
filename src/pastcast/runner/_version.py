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
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        return f"{pkg}+g{out.stdout.strip()}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return pkg
