"""Isolation tests: the sandbox is needed for the agent processes (skipped with the reason where
it cannot be established); the tool server's own tests need nothing."""

from __future__ import annotations

import shutil
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
    """The sandbox, for isolated agents that bind this checkout and its environment: from any
    checkout, a folder closed to others included (the sandbox binds a readable mirror)."""


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder the sandbox's user can read (pytest's own are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="pastcast-isolation-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)
