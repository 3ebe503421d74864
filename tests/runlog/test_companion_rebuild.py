"""A companion rebuilt from the step file holds the rows the writer wrote as it appended (one
rule, ``step_row`` of each step as ``scan`` or the full record reads it), and a hand-edited
line, an older record and a log of an older schema read as their records do."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import blake3
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field, model_validator

from _streaming import synthetic_run
from pastcast.errors import FieldError
from pastcast.runlog import (
    RunLogWriter,
    Scores,
    StepRecord,
    _columns,
    columns_path,
    read_run_log,
    read_step_columns,
    records_table,
)
from pastcast.runlog._companion import PartInfo, part_info, rows_table, step_row
from pastcast.runlog._scan import _struct, scan


def _rebuilt(log: Path) -> pa.Table:
    shutil.rmtree(columns_path(log), ignore_errors=True)
    return read_step_columns(log).table


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("rebuild") / "run.jsonl", steps=100)


def _hashed_as_the_step_file(log: Path, paths: tuple[Path, ...]) -> None:
    """The parts' segments follow each other from byte 0 to the file's end, each with the
    BLAKE3 digest of its bytes and its lines' count, computed here from the file itself."""
    data = log.read_bytes()
    infos = [part_info(p) for p in paths]
    assert all(isinstance(i, PartInfo) for i in infos), infos
    segments = [s for i in infos if isinstance(i, PartInfo) for s in i.segments]
    assert [s.start for s in segments] == [0, *(s.end for s in segments[:-1])]
    assert segments[-1].end == len(data)
    for s in segments:
        assert s.blake3 == blake3.blake3(data[s.start : s.end]).hexdigest()
        assert s.lines == s.rows == data[s.start : s.end].count(b"\n")


def test_the_rebuilt_companion_equals_the_one_the_writer_wrote(generated: Path) -> None:
    written = read_step_columns(generated)
    assert written.parts and not written.tail_rows  # read from the writer's parts
    _hashed_as_the_step_file(generated, written.parts)
    rebuilt = _rebuilt(generated)
    assert rebuilt.num_rows == written.table.num_rows >= 100
    for name in written.table.column_names:
        assert rebuilt.column(name).equals(written.table.column(name)), name
    again = read_step_columns(generated)
    assert again.table.equals(rebuilt)  # the parts written, read back
    _hashed_as_the_step_file(generated, again.parts)


@pytest.mark.parametrize("chunk", [4096, 20_000, 60_000])  # shorter than every line; a few
def test_a_rebuild_read_in_pieces_writes_parts_that_hash_as_the_step_file(
    generated: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # buffers read into in turn while another thread hashes them, and parts of a few pieces
    written = read_step_columns(generated).table
    monkeypatch.setattr(_columns, "_CHUNK", chunk)
    monkeypatch.setattr(_columns, "_REBUILD_BYTES", 300_000)
    shutil.rmtree(columns_path(generated), ignore_errors=True)
    rebuilt = read_step_columns(generated)
    assert rebuilt.table.equals(written) and not (rebuilt.tail_rows or rebuilt.truncated_tail)
    parts = [part_info(p) for p in rebuilt.parts]
    assert len(parts) > 3 and all(isinstance(p, PartInfo) for p in parts)
    assert _columns._hash_check(generated, parts) == len(parts)  # type: ignore[arg-type]
    _hashed_as_the_step_file(generated, rebuilt.parts)


_FORK_AFTER_A_REBUILD = """
import os, shutil, sys, time
from pathlib import Path
from pastcast.runlog import columns_path, read_step_columns

log = Path(sys.argv[1])
def rebuild():
    shutil.rmtree(columns_path(log), ignore_errors=True)
    return read_step_columns(log).table.num_rows

rows = rebuild()  # hashes the whole step file in this process
pid = os.fork()
if pid == 0:  # a worker forked as multiprocessing forks on Linux: it reads a log too
    os._exit(0 if rebuild() == rows else 3)
for _ in range(600):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status))
    time.sleep(0.1)
os.kill(pid, 9)
sys.exit("the forked child never finished its rebuild")
"""


def test_a_process_forked_after_a_rebuild_rebuilds_too(generated: Path, tmp_path: Path) -> None:
    # a hasher whose threads do not survive a fork would leave the child waiting forever
    log = tmp_path / "run.jsonl"
    for p in generated.parent.iterdir():
        if p.name.startswith("run.") and p.is_file():
            shutil.copy2(p, tmp_path / p.name)
    script = tmp_path / "fork.py"
    script.write_text(_FORK_AFTER_A_REBUILD)
    done = subprocess.run(
        [sys.executable, str(script), str(log)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_rebuild_reads_its_lines_with_the_collector_off_and_turns_it_back_on(
    generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = read_step_columns(generated).table
    seen: list[bool] = []
    real = _columns._records

    def probe(*args: Any) -> tuple[int, bool]:
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(_columns, "_records", probe)
    shutil.rmtree(columns_path(generated), ignore_errors=True)
    assert gc.isenabled()
    assert read_step_columns(generated).table.equals(written)
    assert seen and not any(seen) and gc.isenabled()
    monkeypatch.setattr(_columns, "_records", lambda *a: 1 / 0)  # a failing read: on again too
    shutil.rmtree(columns_path(generated), ignore_errors=True)
    with pytest.raises(ZeroDivisionError):
        read_step_columns(generated)
    assert gc.isenabled()


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


def _row(step: object, line: bytes) -> dict | None:
    return None if step is None else rows_table([step_row(step, 0, len(line))]).to_pylist()[0]


def _record_row(line: bytes) -> dict | None:
    """The row reading and validating ``line`` as a full record gives (None: refused)."""
    try:
        record = StepRecord.model_validate(json.loads(line))
    except ValueError:
        return None
    return _row(record, line)


def scan_row(line: bytes) -> dict | None:
    """The row the scan gives ``line`` (None: read as its record)."""
    return _row(scan(line), line)


def test_the_scan_reads_every_line_the_writer_wrote_as_columns(generated: Path) -> None:
    # the scan, not the full record, makes the row of every line a writer wrote
    written = read_step_columns(generated).table
    rows, pos = [], 0
    for line in generated.read_bytes().splitlines(keepends=True):
        step = scan(line)
        assert step is not None
        rows.append(step_row(step, pos, len(line) - 1))
        pos += len(line)
    assert rows_table(rows).equals(written)


def _at_cutoff(r: dict) -> None:
    r["grading"].update(market_at=r["cutoff"], market_age_days=0.0)


def _a_day_old(r: dict) -> None:
    day = datetime.fromisoformat(r["cutoff"]) - timedelta(days=1)
    r["grading"].update(market_at=day.isoformat().replace("+00:00", "Z"), market_age_days=1.0)


# each edit of line ``_N``: read as its record, it is the record's row (None) or refused with
# the error's words; the scan vouches for no line the record refuses, and for no other row
_N = 7
_EDITS = [
    (_at_cutoff, "not before the cutoff"),  # the market reference at the cutoff: leakage
    (lambda r: r["grading"].update(market_at=r["grading"]["resolved_at"]), "not before"),
    (lambda r: r["grading"].update(market_age_days=None), "does not match"),
    (lambda r: r["grading"].update(market_age_days=1.5), "does not match"),
    (lambda r: r.update(role="judge"), "role"),
    (lambda r: r.update(attempt=0), "attempt"),
    (lambda r: r["forecast"].update(confidence=1.5), "confidence"),
    (lambda r: r["episode"].update(termination="gave_up"), "termination"),
    (lambda r: r["grading"].update(market_probs=[{"label": "Yes", "p": 0.5}] * 2), "duplicate"),
    (lambda r: r["forecast"]["probs"][0].update(extra=1), "pairs"),
    (lambda r: r["episode"].update(surplus=1), "surplus"),  # a field no episode has
    (lambda r: r["episode"]["usage"].update(surplus=1), "surplus"),
    (lambda r: r["episode"]["tool_calls"][0].update(name=5), "name"),
    (lambda r: r["episode"].pop("messages") and r["episode"].pop("model_calls"), None),
    (lambda r: r["forecast"]["probs"][0].update(p=3.0), None),  # scaled as the record scales it
    (lambda r: [q.update(p=0.0) for q in r["forecast"]["probs"]], None),  # no mass: unusable
    (lambda r: r["forecast"]["probs"][0].update(p=-0.5), None),  # made unusable
    (lambda r: r.update(cutoff=r["cutoff"].replace("Z", "+00:00")), None),
    (lambda r: r["grading"].update(resolved_at="2024-06-01T02:00:00+02:00"), None),
    (lambda r: r["grading"].update(resolved_at="2024-06-01T02:00:00"), None),  # naive: UTC
    (lambda r: r["grading"].update(resolved_at="2024-02-30T00:00:00Z"), "resolved_at"),
    (lambda r: r.update(cutoff="2024-13-01T00:00:00Z"), "cutoff"),  # no such day, month
    (lambda r: r.pop("rollout"), None),  # the record's default
    (lambda r: r["episode"].pop("usage"), None),
    (lambda r: r["forecast"].pop("probs"), None),  # a default made by a factory
    (lambda r: r.update(step_index="7", attempt=2.0), None),  # numbers as the record reads them
    (lambda r: r["episode"]["usage"].update(model_calls="1e2"), "model_calls"),  # not as text
    (lambda r: r["forecast"].update(usable="true"), None),
    (lambda r: r["grading"].update(market_probs={"Yes": 0.25, "No": 0.75}), None),  # a map
    (lambda r: r["episode"].update(evidence_tally={"documents": 0}), None),
    (lambda r: r["episode"].update(notebook_problems=[{"kind": "unparseable"}]), None),
]


@pytest.mark.parametrize(("edit", "error"), _EDITS)
def test_a_line_the_scan_cannot_vouch_for_is_read_as_its_record(
    generated: Path, tmp_path: Path, edit, error: str | None
) -> None:
    record = json.loads(generated.read_bytes().splitlines()[_N - 1])
    _a_day_old(record)  # a market reference the scan vouches for
    line = json.dumps(record).encode()
    assert scan_row(line) == _record_row(line) is not None
    edit(record)
    line = json.dumps(record).encode()
    row, expected = scan_row(line), _record_row(line)
    assert row is None or row == expected  # the record's row, or none: read as the record
    edited = _edited(generated, tmp_path / "f", {_N - 1: record})
    if error is not None:
        assert row is None and expected is None
        with pytest.raises(FieldError, match=rf"run\.jsonl:{_N}: .*{error}"):
            _rebuilt(edited)
        return
    table = _rebuilt(edited)
    assert _without_spans(table).equals(_without_spans(records_table(read_run_log(edited).steps)))


def test_a_key_written_twice_is_read_as_the_record_reads_it(generated: Path) -> None:
    line = generated.read_bytes().splitlines()[_N - 1]
    for twice in (b'{"agent":"other",', b'{"cutoff":"2000-01-01T00:00:00Z",'):
        edited = line.replace(b"{", twice, 1)  # the later one counts, as for the record
        assert scan_row(edited) == _record_row(edited) is not None
    bad = b'"termination":"gave_up",'  # before the episode's own, then after it
    for edited in (line.replace(b'"wall_s":', bad + b'"wall_s":', 1),
                   line.replace(b'"stop_reason":', bad + b'"stop_reason":', 1)):  # fmt: skip
        row, expected = scan_row(edited), _record_row(edited)
        assert row is None or row == expected
    assert expected is None and row is None


def test_a_check_or_a_field_type_the_scan_does_not_know_fails_loudly() -> None:
    class Checked(Scores):
        @model_validator(mode="after")
        def _bounded(self) -> Checked:
            return self

    class Named(Scores):
        name: str = Field(min_length=1)

    class Typed(Scores):
        names: set[str]

    class Aliased(Scores):
        named: str = Field(validation_alias="name")

    for model in (Checked, Named, Typed, Aliased):
        with pytest.raises(TypeError, match="unknown to the scan"):
            _struct(model)


_VALUES = {
    "role": st.sampled_from(["agent", "reference"]),
    "setting": st.sampled_from(["memory_free", "memory_on", "no_tools"]),
    "attempt": st.integers(1, 3),
    "rollout": st.integers(0, 2),
    "category": st.text(max_size=5),
    "p": st.lists(st.floats(0.0, 1.5), min_size=2, max_size=2),
    "usable": st.booleans(),
    "confidence": st.none() | st.floats(0.0, 1.0),
    "market_s": st.none() | st.integers(-86_400 * 3, 3_600),
    "age_error": st.sampled_from([0.0, 0.0, 5e-5, 2e-4]),
    "names": st.lists(st.sampled_from(["search", "read", "python"]), max_size=4),
}


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.fixed_dictionaries(_VALUES), min_size=1, max_size=6))
def test_random_records_written_rebuild_as_the_writer_wrote_them(
    generated: Path, tmp_path_factory: pytest.TempPathFactory, drawn: list[dict]
) -> None:
    base = json.loads(generated.read_bytes().splitlines()[_N - 1])
    records = []
    for d in drawn:
        r = json.loads(json.dumps(base))
        r.update({k: d[k] for k in ("role", "setting", "attempt", "rollout", "category")})
        r["forecast"].update(usable=d["usable"], confidence=d["confidence"])
        for pair, p in zip(r["forecast"]["probs"], d["p"], strict=False):
            pair["p"] = p
        if d["market_s"] is not None:
            at = datetime.fromisoformat(r["cutoff"]) + timedelta(seconds=d["market_s"])
            age = round(-d["market_s"] / 86_400, 5) + d["age_error"]
            r["grading"].update(market_at=at.isoformat(), market_age_days=age)
        r["episode"]["tool_calls"] = [
            {**r["episode"]["tool_calls"][0], "name": n, "seq": i} for i, n in enumerate(d["names"])
        ]
        line = json.dumps(r).encode()
        row, expected = scan_row(line), _record_row(line)
        assert row is None or row == expected
        if expected is not None:
            records.append(StepRecord.model_validate(r))
    if not records:
        return
    log = tmp_path_factory.mktemp("drawn") / "run.jsonl"
    with RunLogWriter(log, read_run_log(generated).header) as writer:
        for record in records:
            writer.write(record, sync=False)
    written = read_step_columns(log).table
    assert _rebuilt(log).equals(written)
