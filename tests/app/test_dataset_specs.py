"""Every command that reads a dataset takes the same specs (``specs.DATASET_SPECS``): score,
report, view (the dashboard app), export, data curate (a scripted judge), audit construction and
audit run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_runs import archive, judge, run_baselines
from specs import DATASET_SPECS, materialize
from typer.testing import CliRunner

from pastcast.app import dashboard
from pastcast.cli import app

__all__ = ["archive", "judge"]  # imported fixtures, used by name below

runner = CliRunner()


@pytest.fixture(scope="module", params=DATASET_SPECS)
def spec_and_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("spec")
    spec = materialize(request.param, root)
    return spec, run_baselines(spec, root / "run" / "run.jsonl", events=2)


def _ok(*args: str, codes: tuple[int, ...] = (0,)) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code in codes, result.output
    assert "Traceback" not in result.output
    return result.stdout


def test_score(spec_and_run: tuple[str, Path]) -> None:
    spec, log = spec_and_run
    out = json.loads(_ok("score", str(log), "--dataset", spec, "--bootstrap", "0", "--json"))
    assert out["n_forecasts"] > 0 and out["dataset"] == spec


def test_report(spec_and_run: tuple[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the report needs the reports extra")
    pytest.importorskip("jinja2", reason="the report needs the reports extra")
    spec, log = spec_and_run
    args = ["report", str(log), "--out", str(tmp_path / "r"), "--dataset", spec]
    out = json.loads(_ok(*args, "--bootstrap", "0", "--figure", "reliability", "--json"))
    assert Path(out["report"]).is_file()


def test_view(spec_and_run: tuple[str, Path]) -> None:
    pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")
    from fastapi.testclient import TestClient

    spec, log = spec_and_run
    board = dashboard([log.parent], spec)
    assert board.read.dataset is not None and len(board.index) > 0
    assert TestClient(board.app).get("/").status_code == 200


def test_export(spec_and_run: tuple[str, Path], tmp_path: Path) -> None:
    spec, log = spec_and_run
    out = tmp_path / "table.parquet"
    got = json.loads(
        _ok("export", "table", str(log), "--out", str(out), "--dataset", spec, "--json")
    )
    assert got["rows"] > 0 and all(ref["content_hash"] for ref in got["datasets"])


def test_curate(spec_and_run: tuple[str, Path], archive: Path, judge: str, tmp_path: Path) -> None:
    spec = spec_and_run[0]
    args = ["data", "curate", spec, "--corpus", str(archive), "--judge", judge]
    args += ["--out", str(tmp_path / "curated"), "--retrieval", "bm25", "--no-coverage"]
    out = json.loads(_ok(*args, "--no-balance", "--min-dates", "1", "--json", codes=(0, 1)))
    assert out["funnel"][0]["stage"] == "input" and out["judgements"] > 0


def test_audit_construction(spec_and_run: tuple[str, Path]) -> None:
    spec = spec_and_run[0]
    args = ["audit", "construction", spec, "--dataset-only", "--folds", "2", "--draws", "100"]
    out = json.loads(_ok(*args, "--json", codes=(0, 1)))
    assert out["results"][0]["schedule"]


def test_audit_run(spec_and_run: tuple[str, Path]) -> None:
    spec, log = spec_and_run
    out = json.loads(_ok("audit", "run", str(log), "--dataset", spec, "--json", codes=(0, 1)))
    assert out["steps"] > 0
