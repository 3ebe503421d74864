"""A build cut short after its read phase skips it when run again on the same input, and only
then; the months indexed by Dask workers give the one-machine index, file for file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_scale_build import _docs, _tree_digest, _write_jsonl

from _dask_cluster import local_cluster
from pastcast.app import build_corpus
from pastcast.corpus import CorpusBuildReport
from pastcast.corpus.embedded import _partitioned as part


class _Stopped(RuntimeError):
    pass


def _stop_after(monkeypatch: pytest.MonkeyPatch, months: int) -> None:
    """The next build stops (as if killed) after indexing ``months`` months."""
    real = part._index_month
    done: list[bool] = []

    def index(*args: Any) -> bool:
        if len(done) == months:
            raise _Stopped("stopped")
        done.append(real(*args))
        return done[-1]

    monkeypatch.setattr(part, "_index_month", index)


def _no_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def fill(*args: Any) -> None:
        raise AssertionError("the source was read again")

    monkeypatch.setattr(part, "_fill", fill)


def _build(source: Path, out: Path, **fields: Any) -> tuple[CorpusBuildReport, tuple[str, ...]]:
    built = build_corpus(f"jsonl:{source}", out=str(out), workers=1, **fields)
    assert built.build is not None
    return built.build, built.lines()


def test_a_build_stopped_after_its_read_phase_skips_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _docs(600, months=8, seed=5)
    source = _write_jsonl(docs, tmp_path / "docs.jsonl")
    out = tmp_path / "index"
    _stop_after(monkeypatch, 3)
    with pytest.raises(_Stopped):
        _build(source, out)
    assert (tmp_path / ".index.building" / "spool" / "read.json").is_file()

    monkeypatch.undo()
    _no_read(monkeypatch)
    report, lines = _build(source, out)
    assert report.read_reused == len(docs) and report.partitions_reused == 3
    assert (
        f"resumed: read phase reused ({len(docs)} documents spooled), "
        f"reused 3 of {report.partitions} partitions"
    ) in " ".join(lines)

    monkeypatch.undo()
    fresh, fresh_lines = _build(source, tmp_path / "fresh")
    assert fresh.read_reused == 0 and fresh.partitions_reused == 0
    assert _tree_digest(out) == _tree_digest(tmp_path / "fresh")  # dating.json included
    assert (report.removed, report.notes) == (fresh.removed, fresh.notes)
    assert lines[2:] == tuple(x.replace("/fresh/", "/index/") for x in fresh_lines[1:])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("change", ["document", "option"])
def test_a_changed_source_or_option_reads_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    docs = _docs(300, months=5, seed=6)
    source = _write_jsonl(docs, tmp_path / "docs.jsonl")
    out = tmp_path / "index"
    _stop_after(monkeypatch, 2)
    with pytest.raises(_Stopped):
        _build(source, out)
    monkeypatch.undo()

    fields: dict[str, Any] = {}
    if change == "document":  # one document's text, same size: its mtime tells
        rows = source.read_text().splitlines()
        row = json.loads(rows[7])
        row["text"] = row["text"][::-1]
        rows[7] = json.dumps(row)
        source.write_text("\n".join(rows) + "\n")
    else:
        fields = {"require_dates": "metadata"}
    report, _ = _build(source, out, **fields)
    assert report.read_reused == 0
    fresh, _ = _build(source, tmp_path / "fresh", **fields)
    assert _tree_digest(out) == _tree_digest(tmp_path / "fresh")
    assert report.documents == fresh.documents


@pytest.fixture
def two_workers() -> Iterator[str]:
    with local_cluster(2, 1) as cluster:
        yield str(cluster.scheduler_address)


def test_months_indexed_on_dask_give_the_one_machine_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_workers: str
) -> None:
    source = _write_jsonl(_docs(900, months=9, seed=7), tmp_path / "docs.jsonl")
    local, _ = _build(source, tmp_path / "local")
    # stopped part-way on one machine, resumed on the cluster: the same resume rule
    _stop_after(monkeypatch, 3)
    with pytest.raises(_Stopped):
        _build(source, tmp_path / "dask")
    monkeypatch.undo()
    monkeypatch.setattr(part, "_process_pool", None)  # no local process indexes a month
    on_dask, _ = _build(source, tmp_path / "dask", scheduler=two_workers)
    assert on_dask.read_reused == 900 and on_dask.partitions_reused == 3
    assert on_dask.partitions == local.partitions > 3
    assert _tree_digest(tmp_path / "dask") == _tree_digest(tmp_path / "local")
    manifests = [
        json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("local", "dask")
    ]
    assert manifests[0]["content_sha256"] == manifests[1]["content_sha256"]
