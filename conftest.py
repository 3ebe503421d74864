"""Fixtures shared by the core's tests (tests/) and the arena's (arena/tests/). Real data lives in
../shared/data beside the checkout (present in CI)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pastcast.registry import Entry

# The tiers: which tests are slow, from their measured durations (tests/durations.json).
pytest_plugins = ["_tiers"]

REPO_ROOT = Path(__file__).resolve().parent


def _shared_data() -> Path:
    env = os.environ.get("PASTCAST_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real data folder; tests using it skip with a clear reason where it is absent."""
    path = _shared_data()
    if not (path / "README.md").is_file():
        pytest.skip(f"real data not found at {path} (set PASTCAST_SHARED_DATA to its location)")
    return path


@pytest.fixture(autouse=True)
def _registries_restored() -> Iterator[None]:
    """Every pastcast registry holds after a test what it held before: a registration made for
    one test never leaks into the next. What a module first imported during the test registered
    at its import stays (it registers only once)."""
    from pastcast.registry import all_registries

    loaded = set(sys.modules)
    saved = [(registry, registry.snapshot()) for registry in all_registries()]
    yield
    for registry, state in saved:
        now = registry.snapshot().entries
        keep = [
            e
            for name, e in now.items()
            if name not in state.entries and _module_of(e) not in loaded
        ]
        registry.restore(state)
        for entry in keep:
            registry.add(entry.name, entry.target, description=entry.described, **entry.meta)


def _module_of(entry: Entry[object]) -> str:
    """The module of an entry's factory (for one registered by reference, without importing
    it)."""
    if isinstance(entry.target, str):
        return entry.target.partition(":")[0]
    factory = entry.target
    return str(getattr(getattr(factory, "func", factory), "__module__", None) or "")
