"""Fixtures of the report and dashboard tests: one recorded run (written by the real runner),
its dataset, and the scoring tests' record builders on the path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring"))

from recorded_run import record_run, report_dataset

from pastcast.dataset import Dataset


@pytest.fixture(scope="session")
def recorded_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The step file of the recorded run (see ``recorded_run``); never modified by tests."""
    return record_run(tmp_path_factory.mktemp("recorded") / "run.jsonl")


@pytest.fixture(scope="session")
def dataset() -> Dataset:
    return report_dataset()
