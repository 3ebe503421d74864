"""`pastcast report` reads a log's step columns, not its records: the report of a recorded run
(the real runner's) and of a synthetic run written from their columns, with only the notebooks
the evidence figures count streamed by offset one record at a time, is byte for byte the report
written from every full record held in memory (``write_html_report`` of ``Runs.from_logs``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the report needs the reports extra")
pytest.importorskip("jinja2", reason="the report needs the reports extra")

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.app import report_runs
from pastcast.dataset import Dataset
from pastcast.reports import Runs
from pastcast.reports.figures import FIGURES
from pastcast.reports.html import write_html_report
from pastcast.runlog import read_run_log

FILES = ("tables.md", "tables.tex", "scorecard.json")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("synthetic") / "run.jsonl", 300)


@pytest.fixture
def reproducible() -> Iterator[None]:
    """Figures drawn the same twice: SVG without the date it was drawn and with ids from a
    fixed salt, not random ones."""
    import matplotlib

    with pytest.MonkeyPatch.context() as mp, matplotlib.rc_context({"svg.hashsalt": "pastcast"}):
        mp.setenv("SOURCE_DATE_EPOCH", "0")
        yield


def _files(out: Path) -> dict[str, bytes]:
    figures = sorted(f"figures/{p.name}" for p in (out / "figures").iterdir())
    return {name: (out / name).read_bytes() for name in (*FILES, *figures)}


def _notebook_steps(log: Path) -> int:
    """Records the evidence index reads: memory-on agents' steps after the first."""
    steps = read_run_log(log).steps
    return sum(s.setting == "memory_on" and s.role == "agent" and s.step_index >= 1 for s in steps)


def _same_reports(
    log: Path, dataset: Dataset | None, out: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> dict[str, bytes]:
    write_html_report(Runs.from_logs([read_run_log(log)], dataset), out / "records", **kw)
    with records_streamed(monkeypatch) as seen:
        report_runs([log], out / "columns", dataset=dataset, **kw)
    # no whole log read as records; only the notebooks counted, one or two at a time
    assert seen.parsed == _notebook_steps(log) > 0 and seen.max_live <= MAX_LIVE, seen
    records, columns = _files(out / "records"), _files(out / "columns")
    assert records.keys() == columns.keys()
    for name, blob in records.items():
        assert columns[name] == blob, name
    return columns


def test_the_report_of_a_recorded_run_from_columns_is_the_report_of_its_records(
    recorded_log: Path,
    dataset: Dataset,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reproducible: None,
) -> None:
    files = _same_reports(
        recorded_log,
        dataset,
        tmp_path,
        monkeypatch,
        bootstrap=200,
        lookback=(0.25, 0.5, 0.75, 1.0),
        events=("ev-rocket", "ev-mayor"),
    )
    drawn = {name.split("/")[1].rsplit(".", 1)[0] for name in files if name.endswith(".svg")}
    assert drawn == set(FIGURES.names())  # the recorded run has what every figure needs


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")  # one capture gain
def test_the_report_of_a_synthetic_run_from_columns_is_the_report_of_its_records(
    synthetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reproducible: None
) -> None:
    by = ("agent", "evidence", "stop")  # the agent's own label and stop reason: columns too
    files = _same_reports(synthetic, None, tmp_path, monkeypatch, bootstrap=100, by=by)
    assert {"figures/evidence.svg", "figures/memory-cost.svg"} <= files.keys()
    assert b"Unusable forecasts by reason" in files["tables.md"]
