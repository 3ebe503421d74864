"""A companion rebuilt from the step file holds the rows the writer wrote as it appended (one
rule, ``step_row`` of each validated record), and a hand-edited line reads as its record does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from _streaming import synthetic_run
from pastcast.errors import FieldError
from pastcast.runlog import columns_path, read_step_columns


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
