"""A companion rebuilt from the step file holds the rows the writer wrote as it appended (one
rule, ``step_row`` of each record's JSON), and a hand-edited line, an older record and a log of
an older schema read as their records do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from _streaming import synthetic_run
from pastcast.errors import FieldError
from pastcast.runlog import columns_path, read_run_log, read_step_columns, records_table


def _rebuilt(log: Path) -> pa.Table:
    shutil.rmtree(columns_path(log), ignore_errors=True)
    return read_step_columns(log).table


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("rebuild") / "run.jsonl", steps=100)


def test_the_rebuilt_companion_equals_the_one_the_writer_wrote(generated: Path) -> None:
    written = read_step_columns(generated)
    assert written.parts and not written.tail_rows  # read from the writer's parts
    rebuilt = _rebuilt(generated)
    assert rebuilt.num_rows == written.table.num_rows >= 100
    for name in written.table.column_names:
        assert rebuilt.column(name).equals(written.table.column(name)), name
    assert read_step_columns(generated).table.equals(rebuilt)  # the parts written, read back


V2 = Path(__file__).parent / "fixtures" / "run_v2.jsonl"


def _edited(source: Path, target: Path, edit: dict[int, object]) -> Path:
    """A copy of the log with lines replaced (a dict: the record as JSON; bytes: as they are)."""
    target.mkdir()
    shutil.copy(source.with_suffix(".header.json"), target / "run.header.json")
    lines = source.read_bytes().splitlines(keepends=True)
    for i, value in edit.items():
        lines[i] = value if isinstance(value, bytes) else json.dumps(value).encode() + b"\n"
    (target / "run.jsonl").write_bytes(b"".join(lines))
    return target / "run.jsonl"


def test_edited_lines_read_as_their_records(generated: Path, tmp_path: Path) -> None:
    lines = generated.read_bytes().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["forecast"]["probs"] = [{"label": "Yes", "p": 3.0}, {"label": "No", "p": 1.0}]
    del second["attempt"]  # a log written before the field: the record's default fills it
    log = _edited(generated, tmp_path / "a", {0: first, 1: second, 2: b"\n", 3: b"  \n"})
    expected = _rebuilt(log)
    assert expected.num_rows == len(lines) - 2  # the two blank lines hold no record
    assert expected.column("probs")[0].as_py() == [
        {"label": "Yes", "p": 0.75},
        {"label": "No", "p": 0.25},
    ]  # scaled, as the record scales it
    assert expected.column("attempt")[1].as_py() == 1


def test_a_line_that_is_not_a_record_is_named(generated: Path, tmp_path: Path) -> None:
    record = json.loads(generated.read_bytes().splitlines()[4])
    record["forecast"]["probs"] = [{"label": "Yes", "p": 0.5}, {"label": "Yes", "p": 0.5}]
    log = _edited(generated, tmp_path / "b", {4: record})
    with pytest.raises(FieldError, match=r"run\.jsonl:5: .*duplicate label"):
        _rebuilt(log)


def _without_spans(table: pa.Table) -> pa.Table:
    return table.drop_columns(["offset", "length"])


def test_older_records_and_values_a_row_cannot_read_as_written_read_as_their_records(
    generated: Path, tmp_path: Path
) -> None:
    lines = generated.read_bytes().splitlines()
    old = [json.loads(lines[i]) for i in range(5)]
    del old[0]["episode"]["stop_reason"], old[0]["category"]  # written before the fields
    del old[1]["episode"]["tool_calls"], old[1]["episode"]["usage"]
    old[2]["scores"]["log_loss"] = "Infinity"  # how a record's JSON writes a float not finite
    old[3]["grading"]["market_probs"] = {"Yes": 0.25, "No": 0.75}  # a map, read as pairs
    old[4]["step_index"] = "7"  # a number as text: read as the record reads it
    log = _edited(generated, tmp_path / "c", dict(enumerate(old)))
    table = _rebuilt(log)
    expected = records_table(read_run_log(log).steps)
    assert _without_spans(table).equals(_without_spans(expected))
    assert table.column("log_loss")[2].as_py() == float("inf")
    assert table.column("market_probs")[3].as_py()[0] == {"label": "Yes", "p": 0.25}
    assert table.column("tool_calls")[1].as_py() == 0
    assert table.column("step_index")[4].as_py() == 7


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["episode"]["tool_calls"][0].update(name=5),  # a column's value, not text
        lambda r: r["episode"]["model_calls"][0].pop("model"),
        lambda r: r["forecast"].update(confidence=2.5),  # outside what a forecast allows
        lambda r: r.update(surplus=1),  # a field no record has
    ],
)
def test_a_line_a_row_cannot_vouch_for_is_named(generated: Path, tmp_path: Path, edit) -> None:
    lines = generated.read_bytes().splitlines()
    n = next(i for i, line in enumerate(lines) if json.loads(line)["episode"]["tool_calls"])
    record = json.loads(lines[n])
    edit(record)
    with pytest.raises(FieldError, match=rf"run\.jsonl:{n + 1}: "):
        _rebuilt(_edited(generated, tmp_path / "e", {n: record}))


def test_a_log_of_an_older_schema_rebuilds_as_its_records_read(tmp_path: Path) -> None:
    shutil.copy(V2, tmp_path / "run.jsonl")
    shutil.copy(V2.with_suffix(".header.json"), tmp_path / "run.header.json")
    table = _rebuilt(tmp_path / "run.jsonl")
    expected = records_table(read_run_log(tmp_path / "run.jsonl").steps)
    assert table.num_rows == expected.num_rows > 0
    assert _without_spans(table).equals(_without_spans(expected))
    assert table.column("notebook_carried").to_pylist() != [False] * table.num_rows
