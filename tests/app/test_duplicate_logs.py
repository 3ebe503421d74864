"""Every forecast counted once: a run log given twice, a copy of it beside it, or a step line
repeated inside it is read once, with a note saying so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from pastcast.app import read_runs
from pastcast.cli import app
from pastcast.runlog import header_path, read_run_log

runner = CliRunner()


def _score(*logs: Path) -> tuple[int, str]:
    res = runner.invoke(app, ["score", *map(str, logs), "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["n_forecasts"], res.stderr


def _copy(log: Path, folder: Path) -> Path:
    folder.mkdir()
    shutil.copy(log, folder / log.name)
    shutil.copy(header_path(log), header_path(folder / log.name))
    return folder / log.name


def test_the_same_log_given_twice_counts_each_forecast_once(world_run: Path) -> None:
    once, _ = _score(world_run)
    twice, notes = _score(world_run, world_run)
    assert twice == once == len(read_run_log(world_run).steps)
    assert "the same run log" in notes and "read once" in notes


def test_another_name_of_the_same_file_is_read_once(world_run: Path, tmp_path: Path) -> None:
    link = tmp_path / "run.jsonl"
    link.symlink_to(world_run)
    header_path(link).symlink_to(header_path(world_run))
    read = read_runs([world_run, link])
    assert len(read.runs) == len(read_run_log(world_run).steps)
    assert len(read.logs) == 1 and "the same run log" in read.notes[0]


def test_a_copy_beside_the_log_counts_each_forecast_once(world_run: Path, tmp_path: Path) -> None:
    copy = _copy(world_run, tmp_path / "copy")
    once, _ = _score(world_run)
    both, notes = _score(world_run, copy)
    assert both == once
    assert f"{copy}: a copy of run" in notes and "counted once" in notes


def test_a_copy_that_ran_further_adds_only_its_new_steps(world_run: Path, tmp_path: Path) -> None:
    lines = world_run.read_text(encoding="utf-8").splitlines(keepends=True)
    short = _copy(world_run, tmp_path / "short")
    short.write_text("".join(lines[:2]), encoding="utf-8")
    read = read_runs([short, world_run])
    assert len(read.runs) == len(lines)
    assert f"its {len(lines) - 2} other step(s) added" in read.notes[0]


def test_a_repeated_step_line_counts_once(world_run: Path, tmp_path: Path) -> None:
    log = _copy(world_run, tmp_path / "repeated")
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join([*lines, lines[0], lines[1]]), encoding="utf-8")
    n, notes = _score(log)
    assert n == len(lines)
    assert "2 step line(s) repeat a step already in the log" in notes
    read = read_runs([log])
    assert len(read.runs) == len(lines) and "counted once" in read.notes[0]
