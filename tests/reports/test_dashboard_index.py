"""The dashboard's index over the columnar companion: the score table kept beside each log
(``run.dashboard.npz``) is used only while it matches the log, and is rebuilt, with a note,
when the log grew, was cut or edited, the file was cut short, or it came from another run; the
pages over the companion are those of the records held in memory."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")

from fastapi.testclient import TestClient

from pastcast.app import dashboard
from pastcast.dataset import Dataset
from pastcast.reports import Runs
from pastcast.reports.dashboard import RunIndex, create_app, index_path
from pastcast.runlog import header_path, read_run_log
from pastcast.scoring import table_from_records


@pytest.fixture
def run_dir(recorded_log: Path, tmp_path: Path) -> Path:
    """A copy of the recorded run, free to edit."""
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(recorded_log, out / recorded_log.name)
    shutil.copy(header_path(recorded_log), header_path(out / recorded_log.name))
    return out


def _urls(index: RunIndex) -> list[str]:
    steps = list(index.steps)
    groups = sorted({(s.agent, s.setting) for s in steps})
    run = steps[0].run_id
    urls = ["/", "/?page=2", "/?setting=memory_on", "/?category=science", "/compare"]
    urls += [f"/forecasts?agent={a}&setting={s}" for a, s in groups]
    urls += [f"/event/{e}" for e in sorted({s.event_id for s in steps})]
    urls += [f"/step/{i}" for i in range(len(steps))]
    a, b = groups[0], groups[-1]
    urls += [f"/compare?a={a[0]}@{a[1]}@{run}&b={b[0]}@{b[1]}@{run}"]
    return urls


def _pages(index: RunIndex, urls: list[str]) -> dict[str, tuple[int, str]]:
    client = TestClient(create_app(index))
    out = {}
    for url in urls:
        res = client.get(url)
        out[url] = (res.status_code, res.text)
    return out


def _same_table(a: RunIndex, b: RunIndex) -> None:
    for name in ("step", "rollout", "usable", "brier", "p_truth", "market_truth"):
        np.testing.assert_array_equal(getattr(a.table, name), getattr(b.table, name))
    for column, (codes, names) in a.table.keys.items():
        np.testing.assert_array_equal(codes, b.table.keys[column][0])
        assert tuple(names) == tuple(b.table.keys[column][1])


@pytest.mark.parametrize("with_dataset", [False, True])
def test_pages_over_the_companion_are_those_of_the_records_in_memory(
    run_dir: Path, dataset: Dataset, with_dataset: bool
) -> None:
    data = dataset if with_dataset else None
    log = run_dir / "run.jsonl"
    in_memory = RunIndex(Runs.from_logs([read_run_log(log)], data))
    built = RunIndex.load([run_dir], data)  # scores the columns and stores the table
    assert index_path(log).is_file() and not built.notes
    loaded = RunIndex.load([run_dir], data)  # the stored table
    assert not loaded.notes
    _same_table(in_memory, built)
    _same_table(in_memory, loaded)
    reference = table_from_records(read_run_log(log).steps)
    np.testing.assert_array_equal(loaded.table.brier, reference.brier)
    urls = _urls(in_memory)
    assert len(urls) > 100
    expected = _pages(in_memory, urls)
    assert all(code == 200 for code, _ in expected.values())
    assert _pages(loaded, urls) == expected
    assert list(loaded.steps) == list(read_run_log(log).steps)


def _lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines(keepends=True)


def test_a_log_cut_shorter_makes_the_stored_index_stale(run_dir: Path) -> None:
    log = run_dir / "run.jsonl"
    full = RunIndex.load([run_dir])
    lines = _lines(log)
    log.write_bytes(b"".join(lines[: len(lines) // 2]))
    cut = RunIndex.load([run_dir])
    assert len(cut) == len(lines) // 2 < len(full)
    assert any("dashboard index run.dashboard.npz" in n and "stale" in n for n in cut.notes)
    assert not RunIndex.load([run_dir]).notes  # rebuilt: current now
    _same_table(cut, RunIndex(Runs.from_logs([read_run_log(log)])))


def test_a_log_edited_in_place_makes_the_stored_index_stale(run_dir: Path) -> None:
    """An edit that keeps every offset (one digit of a probability) still changes the index:
    the companion's parts hash the bytes they cover."""
    log = run_dir / "run.jsonl"
    before = RunIndex.load([run_dir])
    lines = _lines(log)
    found = re.compile(rb'("probs":\[\{"label":"[^"]*","p":0\.)(\d)')
    k, m = next((k, m) for k, line in enumerate(lines) if (m := found.search(line)))
    digit = b"%d" % ((int(m.group(2)) + 5) % 10)
    new = lines[k][: m.start(2)] + digit + lines[k][m.end(2) :]
    assert len(new) == len(lines[k])  # the same offsets
    lines[k] = new
    log.write_bytes(b"".join(lines))
    after = RunIndex.load([run_dir])
    assert any("stale" in n for n in after.notes)
    assert after.table.p_truth[k] != before.table.p_truth[k]
    _same_table(after, RunIndex(Runs.from_logs([read_run_log(log)])))


def test_a_stored_index_cut_short_is_rebuilt(run_dir: Path) -> None:
    log = run_dir / "run.jsonl"
    first = RunIndex.load([run_dir])
    stored = index_path(log)
    data = stored.read_bytes()
    stored.write_bytes(data[: len(data) // 2])
    again = RunIndex.load([run_dir])
    assert any("unreadable" in n and "rebuilt" in n for n in again.notes)
    _same_table(first, again)
    assert stored.stat().st_size == len(data)


def test_an_index_copied_from_another_run_is_foreign(run_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    hp = header_path(other / "run.jsonl")
    header = json.loads(hp.read_text())
    header["run_id"] = "another-run"
    hp.write_text(json.dumps(header))
    RunIndex.load([other])  # stores the other run's index
    RunIndex.load([run_dir])
    shutil.copy(index_path(other / "run.jsonl"), index_path(run_dir / "run.jsonl"))
    got = RunIndex.load([run_dir])
    assert any("foreign" in n for n in got.notes)
    assert {s.run_id for s in got.steps} == {read_run_log(run_dir / "run.jsonl").header.run_id}


def test_the_app_says_a_rebuilt_index_in_its_notes(run_dir: Path) -> None:
    log = run_dir / "run.jsonl"
    dashboard([run_dir])
    index_path(log).write_bytes(b"not an index")
    board = dashboard([run_dir])
    assert any("dashboard index" in n for n in board.notes)
    assert not dashboard([run_dir]).notes
