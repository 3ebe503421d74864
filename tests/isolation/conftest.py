"""Isolation tests: the sandbox is needed for the agent processes (skipped with the reason where
it cannot be established); the tool server's own tests need nothing."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def sandbox() -> None:
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        pytest.skip(f"no isolating sandbox here: {why}")


@pytest.fixture(scope="session")
def bindable_environment(sandbox: None) -> None:
    """The sandbox, and this checkout and its virtual environment readable by the sandbox's
    user: isolated agents bind them (an external agent with the standard library does not)."""
    closed = _closed_to_others(Path(__file__).resolve().parents[2], Path(sys.prefix).resolve())
    if closed is not None and os.getuid() == 0:
        pytest.skip(
            f"{closed} is closed to other users (mode {stat.S_IMODE(closed.stat().st_mode):o}): "
            "the sandbox's uid 65534 cannot read this checkout or its virtual environment, "
            "which isolated agents bind (docs/isolation.md); clone into a readable folder"
        )


def _closed_to_others(*places: Path) -> Path | None:
    """The first folder at or above ``places`` that other users cannot enter, if any."""
    for place in places:
        for folder in (place, *place.parents):
            if not folder.stat().st_mode & stat.S_IXOTH:
                return folder
    return None


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder the sandbox's user can read (pytest's own are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="pastcast-isolation-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)
