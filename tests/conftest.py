"""Shared fixtures. Real data lives in ../shared/data beside the checkout (present in CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


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
