"""A companion rebuilt from the step file by Arrow's JSON reader (``runlog/_scan.py``) holds the
rows that reading every record gives (``step_row`` of each validated record), and a block it
cannot vouch for is read record by record, as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from _streaming import synthetic_run
from pastcast.errors import FieldError
from pastcast.runlog import _columns as columns
from pastcast.runlog import columns_path, read_step_columns
from pastcast.runlog._companion import rows_table


def _record_way(log: Path) -> pa.Table:
    """The rows as every record read and validated gives them."""
    rows, _ = columns._records(log.read_bytes(), 0, 0, log, None)
    return rows_table(rows)


def _rebuilt(log: Path) -> pa.Table:
    shutil.rmtree(columns_path(log), ignore_errors=True)
    return read_step_columns(log).table


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("scan") / "run.jsonl", steps=100)


def test_the_scanned_companion_equals_the_record_way(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _record_way(generated)
    with monkeypatch.context() as m:  # every block read by the scan, none record by record

        def refuse(*_: object) -> None:
            raise AssertionError("a block of a log the writer wrote was read record by record")

        m.setattr(columns, "_records", refuse)
        scanned = _rebuilt(generated)
    assert scanned.num_rows == expected.num_rows >= 100
    for name in expected.column_names:
        assert scanned.column(name).equals(expected.column(name)), name
    assert read_step_columns(generated).table.equals(scanned)  # the parts written, read back


def _edited(source: Path, target: Path, edit: dict[int, object]) -> Path:
    """A copy of the log with lines replaced (a dict: the record as JSON; bytes: as they are)."""
    target.mkdir()
    shutil.copy(source.with_suffix(".header.json"), target / "run.header.json")
    lines = source.read_bytes().splitlines(keepends=True)
    for i, value in edit.items():
        lines[i] = value if isinstance(value, bytes) else json.dumps(value).encode() + b"\n"
    (target / "run.jsonl").write_bytes(b"".join(lines))
    return target / "run.jsonl"


def test_what_the_scan_cannot_vouch_for_is_read_as_records(generated: Path, tmp_path: Path) -> None:
    lines = generated.read_bytes().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["forecast"]["probs"] = [{"label": "Yes", "p": 3.0}, {"label": "No", "p": 1.0}]
    del second["attempt"]  # a log written before the field: the record's default fills it
    log = _edited(generated, tmp_path / "a", {0: first, 1: second, 2: b"\n", 3: b"  \n"})
    expected = _record_way(log)
    assert _rebuilt(log).equals(expected)
    assert expected.column("probs")[0].as_py() == [
        {"label": "Yes", "p": 0.75},
        {"label": "No", "p": 0.25},
    ]  # scaled by the record, which the scan leaves to it
    assert expected.column("attempt")[1].as_py() == 1


def test_a_line_that_is_not_a_record_is_named(generated: Path, tmp_path: Path) -> None:
    record = json.loads(generated.read_bytes().splitlines()[4])
    record["forecast"]["probs"] = [{"label": "Yes", "p": 0.5}, {"label": "Yes", "p": 0.5}]
    log = _edited(generated, tmp_path / "b", {4: record})
    with pytest.raises(FieldError, match=r"run\.jsonl:5: .*duplicate label"):
        _rebuilt(log)
