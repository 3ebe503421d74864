"""Fixtures of the application-layer tests: the specs every entry point is tested with
(``specs.py``), made once per session, and a run log on the embedded world."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_runs import run_baselines
from specs import Made, make_specs


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    return make_specs(tmp_path_factory.mktemp("specs"))


@pytest.fixture(scope="session")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run log on the embedded world; never modified by tests (copy it to change it)."""
    return run_baselines("world", tmp_path_factory.mktemp("world-run") / "run.jsonl")
