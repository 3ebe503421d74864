"""The dashboard's index over the columnar companion: the score table kept beside each log
(``run.dashboard.npz``) is used only while it matches the log, and is rebuilt, with a note,
when the log grew, was cut or edited, the file was cut short, or it came from another run; the
pages over the companion are those of the records held in memory."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")

from fastapi.testclient import TestClient

from pastcast.dataset import Dataset
from pastcast.reports import Runs
from pastcast.reports.dashboard import RunIndex, create_app
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
    steps = list(index.records(range(len(index))))
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
    built = RunIndex.load([run_dir], data)  # scores the columns, stores the leaderboard
    loaded = RunIndex.load([run_dir], data)
    assert not built.notes and not loaded.notes
    _same_table(in_memory, built)
    _same_table(in_memory, loaded)
    reference = table_from_records(read_run_log(log).steps)
    np.testing.assert_array_equal(loaded.table.brier, reference.brier)
    urls = _urls(in_memory)
    assert len(urls) > 100
    expected = _pages(in_memory, urls)
    assert all(code == 200 for code, _ in expected.values())
    assert _pages(loaded, urls) == expected
    assert list(loaded.records(range(len(loaded)))) == list(read_run_log(log).steps)


def _lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines(keepends=True)


def test_a_log_cut_shorter_is_indexed_as_it_is_now(run_dir: Path) -> None:
    log = run_dir / "run.jsonl"
    full = RunIndex.load([run_dir])
    lines = _lines(log)
    log.write_bytes(b"".join(lines[: len(lines) // 2]))
    cut = RunIndex.load([run_dir])
    assert len(cut) == len(lines) // 2 < len(full)
    _same_table(cut, RunIndex(Runs.from_logs([read_run_log(log)])))


def test_a_log_edited_in_place_is_indexed_as_it_is_now(run_dir: Path) -> None:
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
    assert after.table.p_truth[k] != before.table.p_truth[k]
    _same_table(after, RunIndex(Runs.from_logs([read_run_log(log)])))
