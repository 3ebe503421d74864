"""Fixtures of the application-layer tests: a run log on the embedded world."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_runs import run_baselines


@pytest.fixture(scope="session")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run log on the embedded world; never modified by tests (copy it to change it)."""
    return run_baselines("world", tmp_path_factory.mktemp("world-run") / "run.jsonl")
