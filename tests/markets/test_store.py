"""On-disk dataset format: round trip, atomic replace, validation errors."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markets_factories import at, binary

from pastcast.dataset import (
    Dataset,
    _store,
    content_hash,
    load_dataset,
    read_manifest,
    read_metadata,
    save_dataset,
    with_content_id,
)
from pastcast.errors import FieldError
from pastcast.records import DailyBelief, Event, Resolution, StepSpec


def _multi() -> tuple[Event, Resolution, tuple[DailyBelief, ...]]:
    ev = Event(
        id="m1",
        title="Who wins?",
        kind="multi",
        labels=("A", "B", "C"),
        open_time=at("2025-06-01"),
        close_time=at("2025-06-20"),
        tags=("x",),
        url="https://example.org/m1",
    )
    res = Resolution(event_id="m1", label="B", resolved_at=at("2025-06-20T12:00:00"))
    beliefs = (
        DailyBelief(event_id="m1", day=date(2025, 6, 2), probs={"A": 0.5, "B": 0.3, "C": 0.2}),
        DailyBelief(event_id="m1", day=date(2025, 6, 3), probs={"A": 0.6, "B": 0.4}),
    )
    return ev, res, beliefs


def _dataset() -> Dataset:
    h = binary("b1", [0.2, 0.4, 0.5, 0.7], label="Yes")
    ev, res, beliefs = _multi()
    steps = (
        StepSpec(event_id="b1", step_index=0, cutoff=at("2025-06-03")),
        StepSpec(event_id="m1", step_index=0, cutoff=at("2025-06-05")),
    )
    ds = Dataset(
        "test",
        (h.event, ev),
        {"b1": h.resolution, "m1": res},
        {"b1": h.beliefs, "m1": beliefs},
        steps,
        {"b1": "train", "m1": "eval"},
    )
    return with_content_id(ds, "test")


def test_round_trip_is_exact(tmp_path: Path) -> None:
    ds = _dataset()
    save_dataset(ds, tmp_path / "ds", metadata={"note": "x"})
    back = load_dataset(tmp_path / "ds")
    assert back.id == ds.id and back.id.startswith("test:")
    assert back.events == tuple(sorted(ds.events, key=lambda e: e.id))
    assert dict(back.resolutions) == dict(ds.resolutions)
    assert {k: tuple(v) for k, v in back.beliefs.items()} == dict(ds.beliefs)
    assert back.beliefs["m1"][1].probs == {"A": 0.6, "B": 0.4}  # missing leg stays undefined
    assert set(back.steps) == set(ds.steps)
    assert dict(back.splits) == dict(ds.splits)
    assert content_hash(back) == read_manifest(tmp_path / "ds")["content_hash"]
    assert read_metadata(tmp_path / "ds") == {"note": "x", "dataset_id": ds.id}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=12))
def test_round_trip_preserves_any_probabilities(tmp_path_factory, prices: list[float]) -> None:  # type: ignore[no-untyped-def]
    h = binary("p", prices)
    ds = Dataset("p", (h.event,), {"p": h.resolution}, {"p": h.beliefs}, ())
    out = tmp_path_factory.mktemp("ds") / "d"
    save_dataset(ds, out)
    back = load_dataset(out)
    assert [b.probs for b in back.beliefs["p"]] == [b.probs for b in h.beliefs]
    assert content_hash(back) == content_hash(ds)


@settings(max_examples=25, deadline=None)
@given(st.datetimes(datetime(1900, 1, 1), datetime(2200, 1, 1), timezones=st.just(UTC)))
def test_instants_are_read_back_to_the_microsecond(tmp_path_factory, when: datetime) -> None:  # type: ignore[no-untyped-def]
    # A cutoff one microsecond before the resolution stays before it once read back.
    later = when + timedelta(microseconds=1)
    ev = Event(id="t", title="When?", kind="binary", labels=("Yes", "No"), open_time=when,
               close_time=later)  # fmt: skip
    res = Resolution(event_id="t", label="Yes", resolved_at=later)
    step = StepSpec(event_id="t", step_index=0, cutoff=when)
    out = tmp_path_factory.mktemp("ds") / "d"
    save_dataset(Dataset("t", (ev,), {"t": res}, {}, (step,)), out)
    back = load_dataset(out)
    assert (back.events[0].open_time, back.events[0].close_time) == (when, later)
    assert back.resolutions["t"].resolved_at == later and back.steps[0].cutoff == when
    assert back.steps[0].cutoff.utcoffset() == timedelta(0)
    stored = pq.read_table(out / "steps.parquet").column("cutoff").to_pylist()
    assert back.steps[0].cutoff == stored[0]  # what pyarrow itself reads


def test_content_hash_changes_with_content() -> None:
    ds = _dataset()
    other = ds.with_steps(ds.steps[:1])
    assert content_hash(ds) != content_hash(other)


def test_content_hash_is_the_one_stored_datasets_were_given() -> None:
    # A stored dataset's id is its content hash: the same rows must hash as they always have
    # (dates, instants, floats, text beyond ASCII), whatever the code computing it.
    ds = _dataset()
    title = ds.events[1].model_copy(update={"title": "Qui gagne — « B » ?"})
    other = Dataset("test", (ds.events[0], title), ds.resolutions, ds.beliefs, ds.steps, ds.splits)
    assert content_hash(ds) == "6940339e98e42407a15f379d43cd24b687fc2546d7aa48c17e976419e2ae593a"
    assert content_hash(other) == (
        "b6221d1abb238d7cb56932820cbb887717d5810e6597c328f4fe7aa25b4297f7"
    )


def test_a_table_hashes_as_its_rows_one_line_at_a_time() -> None:
    # The hash takes a table's lines in blocks; the bytes must be those of one line at a time,
    # whatever the table's length against the block's (stored datasets were hashed so).
    def reference(rows: dict[str, list[dict[str, object]]]) -> str:
        h = hashlib.sha256()
        for name in _store._present(rows):
            h.update(f"\x00table:{name}\n".encode())
            for row in rows[name]:
                canon = {k: _store._canonical(v) for k, v in row.items()}
                h.update(json.dumps(canon, sort_keys=True, ensure_ascii=False).encode() + b"\n")
        return h.hexdigest()

    block = _store._HASH_BLOCK
    for n in (0, 1, block - 1, block, block + 1, 2 * block + 3):
        rows: dict[str, list[dict[str, object]]] = {name: [] for name in _store.TABLES}
        rows["events"] = [
            {"id": f"é{i}", "p": i / 7, "day": date(2025, 1, 1) + timedelta(days=i % 300)}
            for i in range(n)
        ]
        assert _store._hash_rows(rows) == reference(rows), n


def test_replace_is_atomic_and_failed_write_keeps_old(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    ds = _dataset()
    out = tmp_path / "ds"
    save_dataset(ds, out)
    from pastcast.dataset import _store as store

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise OSError("disk full")

    monkeypatch.setattr(store.pq, "write_table", boom)
    with pytest.raises(OSError):
        save_dataset(ds.with_steps(()), out)
    assert load_dataset(out).id == ds.id  # the old dataset is intact
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary left behind


def test_refuses_to_replace_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        save_dataset(_dataset(), tmp_path / "x")


def _rewrite(path: Path, column: str, row: int, value: object) -> None:
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[row][column] = value
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    manifest_path = path.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    import hashlib

    manifest["files"][path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest))


def test_bad_probability_names_file_row_and_field(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    _rewrite(tmp_path / "ds" / "beliefs.parquet", "prob", 3, 1.7)
    with pytest.raises(FieldError, match=r"beliefs\.parquet: row \d+: field probs"):
        load_dataset(tmp_path / "ds")


def test_bad_event_kind_names_file_row_and_field(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    _rewrite(tmp_path / "ds" / "events.parquet", "kind", 1, "ternary")
    with pytest.raises(FieldError, match=r"events\.parquet: row 1: field kind"):
        load_dataset(tmp_path / "ds")


def test_post_resolution_step_is_rejected(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    _rewrite(tmp_path / "ds" / "steps.parquet", "cutoff", 0, at("2025-07-30"))
    with pytest.raises(FieldError, match=r"steps\.parquet: row 0: field cutoff"):
        load_dataset(tmp_path / "ds")


def test_post_resolution_belief_is_rejected(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    _rewrite(tmp_path / "ds" / "beliefs.parquet", "day", 0, date(2025, 6, 1) + timedelta(days=60))
    with pytest.raises(FieldError, match=r"beliefs\.parquet.*field day"):
        load_dataset(tmp_path / "ds")


def test_corruption_and_version_are_detected(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    with (tmp_path / "ds" / "steps.parquet").open("ab") as fh:
        fh.write(b"junk")
    with pytest.raises(FieldError, match=r"steps\.parquet: sha256"):
        load_dataset(tmp_path / "ds")
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    manifest["format_version"] = 99
    (tmp_path / "ds" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(FieldError, match="format_version"):
        load_dataset(tmp_path / "ds")
    with pytest.raises(FieldError, match=r"manifest\.json: missing"):
        load_dataset(tmp_path)


def test_a_table_that_is_not_parquet_is_refused_naming_it(tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    (tmp_path / "ds" / "events.parquet").write_bytes(b"PAR1 not really")
    manifest_path = tmp_path / "ds" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["files"]["events.parquet"]  # past the checksum, to the read itself
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(FieldError, match=r"events\.parquet: not a readable Parquet file"):
        load_dataset(tmp_path / "ds")


def test_a_table_of_other_castable_types_reads_the_same(tmp_path: Path) -> None:
    # A table of the format is read without a cast; one of other types (an older writer's,
    # another tool's) still goes through it: instants in milliseconds, a narrower integer, and
    # columns in another order read back equal. A type that cannot be cast is refused.
    import pyarrow as pa

    ds = _dataset()
    save_dataset(ds, tmp_path / "ds")
    path = tmp_path / "ds" / "steps.parquet"
    table = pq.read_table(path)
    other = pa.schema([("cutoff", pa.timestamp("ms", tz="UTC")), ("step_index", pa.int32()),
                       ("event_id", pa.string())])  # fmt: skip
    pq.write_table(table.select(other.names).cast(other), path)
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    del manifest["files"]["steps.parquet"]  # past the checksum, to the read itself
    (tmp_path / "ds" / "manifest.json").write_text(json.dumps(manifest))
    assert load_dataset(tmp_path / "ds").steps == ds.steps
    pq.write_table(table.set_column(2, "cutoff", pa.array(["soon"] * len(table))), path)
    with pytest.raises(FieldError, match=r"steps\.parquet: column types do not match"):
        load_dataset(tmp_path / "ds")
