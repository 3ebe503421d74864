"""The columnar companion of a run log: equal to the step file, never trusted when it is stale,
truncated, foreign or edited (rebuilt, with a note), and the scores read from it equal those of
the full records to the last bit."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import blake3
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pastcast.agents import agent_spec
from pastcast.app import open_dataset, read_runs, runs_frame, score_runs
from pastcast.app._reading import _p_column
from pastcast.reports import Runs, scorecard
from pastcast.runlog import (
    RunLogWriter,
    StepColumns,
    columns_path,
    read_run_log,
    read_step_columns,
)
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import table_from_columns, table_from_records


@pytest.fixture(scope="module")
def rich_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of the embedded world with baselines, the market reference and both settings:
    forecasts of many values, market beliefs, two roles."""
    out = tmp_path_factory.mktemp("columns-run") / "run.jsonl"
    config = RunConfig(
        agents=(
            agent_spec("uniform"),
            agent_spec("base-rate"),
            agent_spec("market"),
            agent_spec("base-rate", setting="memory_on"),
        ),
        max_events=12,
    )
    run_benchmark(open_dataset("world"), None, config, out, progress=False)
    return out


def _copy(log: Path, to: Path) -> Path:
    """A copy of the run log with its companion, read once: a copied part is another file than
    the one the companion recorded writing, so the first read rebuilds it (and says so)."""
    to.mkdir(parents=True, exist_ok=True)
    for p in log.parent.iterdir():
        if p.name.startswith(log.stem + "."):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, to / p.name)
    copy = to / log.name
    assert any("copied since" in n for n in read_step_columns(copy).notes)
    assert read_step_columns(copy).notes == ()
    return copy


def _rows_of_records(log: Path) -> list[dict[str, object]]:
    """What the companion must hold: every record read in full, its span found in the file."""
    data = log.read_bytes()
    rows, pos = [], 0
    for step in read_run_log(log).steps:
        end = data.index(b"\n", pos)
        rows.append((step, pos, end - pos))
        pos = end + 1
    from pastcast.runlog._companion import rows_table, step_row  # the row rule, under test

    return rows_table([step_row(s, o, n) for s, o, n in rows]).to_pylist()


def _same_json(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def test_the_writer_leaves_a_companion_equal_to_the_step_file(rich_run: Path) -> None:
    cols = read_step_columns(rich_run, update=False)
    assert cols.notes == ()
    assert cols.parts and cols.tail_rows == 0  # the writer covered every record
    assert cols.table.to_pylist() == _rows_of_records(rich_run)
    spans = zip(cols.table["offset"].to_pylist(), cols.table["length"].to_pylist(), strict=True)
    assert list(cols.records(spans)) == list(read_run_log(rich_run).steps)


def test_columnar_scores_equal_full_record_scores_bit_for_bit(rich_run: Path) -> None:
    records = read_run_log(rich_run)
    full = Runs.from_logs([records])  # the records held in memory
    columns = read_runs([rich_run])
    a, b = table_from_records(records.steps), columns.runs.base_table
    for name in ("brier", "accuracy", "p_truth", "market_truth", "market_brier"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.view(np.uint64).tolist() == y.view(np.uint64).tolist(), name
    for name in ("step", "rollout", "usable", "n_labels", "truth_first"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    assert {c: (k.tolist(), tuple(n)) for c, (k, n) in a.keys.items()} == {
        c: (k.tolist(), tuple(n)) for c, (k, n) in b.keys.items()
    }
    whole = table_from_columns(columns.runs.logs[0].table)
    assert whole.keys["agent"][1] == b.keys["agent"][1]
    assert np.isfinite(a.market_brier).any() and len(set(a.brier.tolist())) > 3
    for by in (("agent", "setting"), ("event",), ("agent", "kind", "step"), ("model", "role")):
        card = scorecard(full, by, bootstrap=200, seed=3)
        scored = score_runs([rich_run], by=by, bootstrap=200, seed=3)
        assert _same_json(scored.card.as_dict(), card.as_dict()), by
    data = open_dataset("world")
    with_data = score_runs([rich_run], by=("horizon",), dataset=data, bootstrap=100)
    assert _same_json(
        with_data.card.as_dict(),
        scorecard(Runs.from_logs([records], data), ("horizon",), bootstrap=100).as_dict(),
    )


def test_a_log_given_twice_and_a_copy_count_each_step_once(rich_run: Path, tmp_path: Path) -> None:
    copy = _copy(rich_run, tmp_path / "copy")
    read = read_runs([rich_run, rich_run, copy])
    assert len(read.notes) == 2 and "the same run log" in read.notes[0]
    assert f"a copy of run {read_run_log(rich_run).header.run_id}" in read.notes[1]
    assert len(read.runs) == len(read_run_log(rich_run).steps)


def test_the_frame_returns_the_same_rows_as_the_records(rich_run: Path) -> None:
    frame = runs_frame([rich_run], dataset="world").collect()
    p_columns = [c for c in frame.columns if c.startswith(("p_", "market_p_"))]
    assert frame.drop(
        *p_columns,
        "log",
        "title",
        "event_kind",
        "event_category",
        "source",
        "open_time",
        "close_time",
        "resolved_at_dataset",
    ).to_dicts() == _rows_of_records(rich_run)
    titles = {e.id: e.title for e in open_dataset("world").events}
    assert frame["title"].to_list() == [titles[e] for e in frame["event_id"].to_list()]
    pandas = runs_frame(rich_run, backend="pandas")
    assert len(pandas) == frame.height and set(pandas["log"]) == {str(rich_run)}


def test_the_frame_has_a_column_per_outcome_probability(rich_run: Path) -> None:
    frame = runs_frame(rich_run).collect()
    rows = _rows_of_records(rich_run)
    assert {"p_yes", "p_no", "market_p_yes", "market_p_no"} <= set(frame.columns)
    assert frame["p_yes"].count() > 0 and frame["market_p_yes"].count() > 0
    for row, got in zip(rows, frame.to_dicts(), strict=True):
        for pairs, prefix in ((row["probs"], "p_"), (row["market_probs"], "market_p_")):
            given = {_p_column(d["label"]): d["p"] for d in pairs or []}
            for label in row["labels"]:
                name = _p_column(label)
                assert got[prefix + name[2:]] == given.get(name), (prefix, label)
        others = {c for c in frame.columns if c.startswith("p_")} - {
            _p_column(lb) for lb in row["labels"]
        }
        assert all(got[c] is None for c in others)
    assert _p_column("Deirel Vuani") == "p_deirel_vuani" and _p_column("50%+") == "p_50"


def _part(log: Path) -> Path:
    parts = sorted(columns_path(log).glob("part-*.parquet"))
    assert parts
    return parts[0]


def _check_rebuilt(log: Path, words: str) -> None:
    cols = read_step_columns(log)
    assert cols.notes and all("columnar companion" in n for n in cols.notes), cols.notes
    assert any(words in n for n in cols.notes), cols.notes
    assert cols.table.to_pylist() == _rows_of_records(log)
    again = read_step_columns(log)  # rebuilt: trusted from now on, and equal
    assert again.notes == () and again.table.to_pylist() == cols.table.to_pylist()


def test_a_truncated_companion_part_is_rebuilt(rich_run: Path, tmp_path: Path) -> None:
    log = _copy(rich_run, tmp_path)
    part = _part(log)
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    _check_rebuilt(log, "unreadable")


def test_a_stale_companion_of_a_longer_step_file_is_rebuilt(rich_run: Path, tmp_path: Path) -> None:
    log = _copy(rich_run, tmp_path)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[: len(lines) // 2]))  # the step file cut, the parts kept
    _check_rebuilt(log, "past the step file")


def test_a_stale_companion_of_a_rewritten_step_file_is_rebuilt(
    rich_run: Path, tmp_path: Path
) -> None:
    log = _copy(rich_run, tmp_path)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))  # same length, other order
    _check_rebuilt(log, "differ")


def test_a_hand_edited_step_file_is_never_read_through_its_old_companion(
    rich_run: Path, tmp_path: Path
) -> None:
    log = _copy(rich_run, tmp_path)
    read_step_columns(log)  # checked once: the next read may skip hashing
    data = bytearray(log.read_bytes())
    at = data.index(b'"p":0.') + 6
    data[at] = ord("1") if data[at] != ord("1") else ord("2")  # one digit of a probability
    log.write_bytes(bytes(data))
    _check_rebuilt(log, "edited")


def test_a_foreign_companion_is_rebuilt(rich_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "run.jsonl"
    config = RunConfig(agents=(agent_spec("uniform"),), max_events=2)
    run_benchmark(open_dataset("world"), None, config, other, progress=False)
    log = _copy(rich_run, tmp_path / "mine")
    shutil.rmtree(columns_path(log))
    shutil.copytree(columns_path(other), columns_path(log))
    _check_rebuilt(log, "another run header")


def test_a_hand_edited_companion_is_rebuilt(rich_run: Path, tmp_path: Path) -> None:
    log = _copy(rich_run, tmp_path)
    part = _part(log)
    table = pq.read_table(part)
    wrong = [not u for u in table["usable"].to_pylist()]
    at = table.schema.get_field_index("usable")
    pq.write_table(table.set_column(at, "usable", pa.array(wrong)), part)  # metadata kept
    _check_rebuilt(log, "not the file the companion recorded")


def test_a_companion_of_the_earlier_format_is_rebuilt(rich_run: Path, tmp_path: Path) -> None:
    # as the previous release wrote it: format version 5, each segment's bytes hashed by SHA-256
    log = _copy(rich_run, tmp_path)
    part = _part(log)
    data = log.read_bytes()
    table = pq.read_table(part)
    meta = json.loads(table.schema.metadata[b"pastcast.columns"])
    assert meta["version"] == 6
    meta["version"] = 5
    for segment in meta["segments"]:
        covered = data[segment["start"] : segment["end"]]
        segment["sha256"] = hashlib.sha256(covered).hexdigest()
        assert segment.pop("blake3") == blake3.blake3(covered).hexdigest()
    pq.write_table(table.replace_schema_metadata({b"pastcast.columns": json.dumps(meta)}), part)
    _check_rebuilt(log, "not a part of companion version 6")
    again = json.loads(pq.read_schema(_part(log)).metadata[b"pastcast.columns"])
    assert again["version"] == 6 and "sha256" not in again["segments"][0]


def test_a_companion_is_not_written_while_a_writer_holds_the_log(
    rich_run: Path, tmp_path: Path
) -> None:
    log = _copy(rich_run, tmp_path)
    shutil.rmtree(columns_path(log))
    header = read_run_log(log).header
    with RunLogWriter(log, header):  # resumes: rebuilds its companion, then holds the lock
        shutil.rmtree(columns_path(log))
        cols = read_step_columns(log)
        assert cols.table.to_pylist() == _rows_of_records(log)
        assert not columns_path(log).exists()  # read from the JSONL, nothing written
    assert read_step_columns(log).parts


def test_the_table_export_from_columns_equals_the_export_from_records(
    rich_run: Path, tmp_path: Path
) -> None:
    from pastcast.app import export_runs
    from pastcast.train import export_table

    made = export_runs("table", [rich_run], tmp_path / "columns.parquet", datasets=["world"])
    held = StepColumns.held(read_run_log(rich_run))  # the records in memory
    full = export_table([held], tmp_path / "records.parquet", datasets=[open_dataset("world")])
    a, b = pq.read_table(made.out), pq.read_table(tmp_path / "records.parquet")
    assert a.equals(b) and a.num_rows == len(read_run_log(rich_run).steps)
    skip = {"created_at", "file"}
    assert {k: v for k, v in made.manifest.model_dump().items() if k not in skip} == {
        k: v for k, v in full.model_dump().items() if k not in skip
    }
