"""Appends to the embedded index: after any appends the index equals one built from scratch over
all the documents (files, content hash, searches and as-of statistics at adversarial cutoffs),
passes the conformance checks, refuses or skips repeated ids, reindexes only the months it
touches, never shows an open reader a half-written append, and survives a kill mid-append."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from corpus_synth import make_docs, with_threads
from typer.testing import CliRunner

from pastcast.app import append_corpus, build_corpus
from pastcast.cli import app
from pastcast.corpus import check_as_of_equivalence, check_no_leakage, check_thread_lookups
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus.embedded import EmbeddedIndex, shard_statistics
from pastcast.corpus.embedded import _partitioned as partitioned
from pastcast.errors import FieldError
from pastcast.records import Document

SRC = str(Path(__file__).resolve().parents[2] / "src")
US = timedelta(microseconds=1)
QUERIES = ("election", "w1 w2 storm", "tariff merger w7", "appended w3")
runner = CliRunner()


def _tree_digest(index_dir: Path) -> str:
    """Every file of an index (path and bytes), but the build report (it holds times)."""
    digest = hashlib.sha256()
    for f in sorted(p for p in index_dir.rglob("*") if p.is_file()):
        rel = f.relative_to(index_dir).as_posix()
        if rel == "build_report.json":
            continue
        digest.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def _base() -> list[Document]:
    """About five months (2024-01-30 .. 2024-06): several months to leave untouched."""
    return with_threads(make_docs(400, seed=5, span_days=150), seed=5)


def _doc(i: int, ts: datetime, **kw: Any) -> Document:
    text = kw.pop("text", "appended w3 election storm")
    return Document(id=f"new-{i:03d}", timestamp=ts, title=f"appended {i}", text=text, **kw)


def _batch(base: Sequence[Document]) -> list[Document]:
    """Adversarial new documents: at a month's first and last instant, sharing an instant with an
    indexed document (ids before and after it), in the last indexed month, in new months."""
    shared = next(
        d for d in sorted(base, key=lambda d: (d.timestamp, d.id)) if d.timestamp.month == 3
    )
    last = max(d.timestamp for d in base)
    march = datetime(2024, 3, 1, tzinfo=UTC)
    return [
        _doc(0, march),  # first instant of an indexed month
        _doc(1, datetime(2024, 4, 1, tzinfo=UTC) - US),  # last instant of March
        Document(id="a-before", timestamp=shared.timestamp, title="w1", text="w1 w2 storm"),
        Document(id="zz-after", timestamp=shared.timestamp, title="w2", text="w1 w2 storm"),
        _doc(2, last),  # the newest instant, in the newest month
        _doc(3, last + timedelta(days=40), thread_id="thread-1", author="author-2"),  # new month
        _doc(4, datetime(2024, 9, 1, tzinfo=UTC), text="tariff merger"),
        _doc(5, datetime(2024, 10, 1, tzinfo=UTC) - US),
    ]


def _cutoffs(everything: Sequence[Document], appended: Sequence[Document]) -> list[datetime]:
    cutoffs = adversarial_cutoffs(everything)
    for d in appended:  # at, just before and just after each appended document
        cutoffs += [d.timestamp - US, d.timestamp, d.timestamp + US]
        month = d.timestamp.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        cutoffs += [month, month - US, month + US]
    return sorted(set(cutoffs))


def _assert_same(got: EmbeddedIndex, want: EmbeddedIndex, cutoffs: Sequence[datetime]) -> None:
    assert got.manifest == want.manifest
    assert got.identity().content_sha256 == want.identity().content_sha256
    far = datetime(2100, 1, 1, tzinfo=UTC)
    for i in range(len(want)):
        assert got.read_ordinal(i) == want.read_ordinal(i)
    for d in (want.read_ordinal(i) for i in range(0, len(want), 7)):
        assert got.read(d.id, as_of=far) == d
    for cutoff in cutoffs:
        assert got.count_before(cutoff) == want.count_before(cutoff), cutoff
        for q in QUERIES:
            assert got.search(q, as_of=cutoff, k=12) == want.search(q, as_of=cutoff, k=12), (
                q,
                cutoff,
            )
            terms = got.query_terms(q)
            assert shard_statistics(got, terms, cutoff) == shard_statistics(want, terms, cutoff)


@pytest.mark.parametrize("workers", [1, 2])
def test_appends_equal_a_build_from_scratch(tmp_path: Path, workers: int) -> None:
    base = _base()
    batch = _batch(base)
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    before = {p.name: (p / "manifest.json").stat().st_ino for p in (index_dir / "parts").iterdir()}
    # two appends: one into indexed months and one new month, then the rest
    first = EmbeddedIndex.append(batch[:4], index_dir, workers=workers)
    report = first.build_report
    assert report is not None and report.partitions_kept == len(before) - 1  # only March
    after = {p.name: (p / "manifest.json").stat().st_ino for p in (index_dir / "parts").iterdir()}
    assert {m for m in before if after[m] != before[m]} == {"2024-03"}
    appended = EmbeddedIndex.append(iter(batch[4:]), index_dir, workers=workers)

    scratch_dir = tmp_path / "scratch"
    scratch = EmbeddedIndex.build(base + batch, scratch_dir, workers=1)
    assert _tree_digest(index_dir) == _tree_digest(scratch_dir)
    _assert_same(appended, scratch, _cutoffs(base + batch, batch))
    reopened = EmbeddedIndex.open(index_dir)
    _assert_same(reopened, scratch, _cutoffs(base + batch, batch)[::5])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_appends_to_months_cut_into_ranges_equal_a_build_from_scratch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pastcast.corpus.embedded import _ranges

    monkeypatch.setattr(_ranges, "PARTITION_DOCS", 30)
    base, index_dir = _base(), tmp_path / "index"
    batch = _batch(base)
    EmbeddedIndex.build(base, index_dir, workers=1)  # in memory; the append spools
    assert sum("." in p["name"] for p in EmbeddedIndex.open(index_dir).manifest["partitions"]) > 5
    appended = EmbeddedIndex.append(iter(batch), index_dir, workers=1)
    scratch = EmbeddedIndex.build(base + batch, tmp_path / "scratch", workers=1)
    assert _tree_digest(index_dir) == _tree_digest(tmp_path / "scratch")
    _assert_same(appended, scratch, _cutoffs(base + batch, batch)[::3])


def test_an_appended_index_passes_the_conformance_checks(tmp_path: Path) -> None:
    base = _base()
    batch = _batch(base)
    everything = base + batch
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    appended = EmbeddedIndex.append(batch, index_dir, workers=1)
    leak = check_no_leakage(appended, everything, n_probes=150, seed=3)
    assert leak.violations == 0, leak

    def factory(docs: Sequence[Document]) -> EmbeddedIndex:
        # the whole corpus is the appended index; each prefix one built from scratch
        return appended if len(docs) == len(everything) else EmbeddedIndex.in_memory(docs)

    cutoffs = _cutoffs(everything, batch)[::3]
    equivalence = check_as_of_equivalence(factory, everything, cutoffs=cutoffs, seed=3)
    assert equivalence.violations == 0, equivalence
    threads = check_thread_lookups(appended, everything, n_probes=120, seed=3)
    assert threads.violations == 0, threads


def test_repeated_ids_are_refused_naming_the_id_or_skipped(tmp_path: Path) -> None:
    base = _base()
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    digest = _tree_digest(index_dir)
    taken = base[17].model_copy(update={"text": "other text", "timestamp": base[0].timestamp})
    fresh = _doc(1, datetime(2024, 9, 2, tzinfo=UTC))
    with pytest.raises(ValueError, match=f"duplicate document id {taken.id!r}"):
        EmbeddedIndex.append([fresh, taken], index_dir)
    with pytest.raises(ValueError, match="duplicate document id 'new-001'"):
        EmbeddedIndex.append([fresh, fresh.model_copy(update={"title": "again"})], index_dir)
    assert _tree_digest(index_dir) == digest  # nothing changed
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    skipped = EmbeddedIndex.append([fresh, taken, fresh], index_dir, duplicates="skip")
    assert len(skipped) == len(base) + 1
    report = skipped.build_report
    assert report is not None and report.removed == {"duplicate id (skipped)": 2}
    scratch_dir = tmp_path / "scratch"
    EmbeddedIndex.build([*base, fresh], scratch_dir, workers=1)
    assert _tree_digest(index_dir) == _tree_digest(scratch_dir)
    with pytest.raises(ValueError, match="duplicates"):
        EmbeddedIndex.append([fresh], index_dir, duplicates="merge")  # type: ignore[arg-type]


def test_an_open_reader_keeps_the_index_it_opened(tmp_path: Path) -> None:
    base = _base()
    batch = _batch(base)
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    # Opened before the append, but nothing read yet: no vocabulary or map loaded.
    old = EmbeddedIndex.open(index_dir)
    appended = EmbeddedIndex.append(batch, index_dir, workers=1)
    reference = EmbeddedIndex.in_memory(base)
    cutoffs = _cutoffs(base, batch)[::2]
    for cutoff in cutoffs:
        assert old.count_before(cutoff) == reference.count_before(cutoff)
        for q in QUERIES:
            assert old.search(q, as_of=cutoff, k=12) == reference.search(q, as_of=cutoff, k=12)
    threads = check_thread_lookups(old, base, n_probes=60, seed=1)
    assert threads.violations == 0, threads
    assert old.identity().content_sha256 == reference.identity().content_sha256
    assert old.identity().doc_count == len(base)
    assert len(appended) == len(base) + len(batch)


def test_a_failed_append_leaves_the_index_and_its_readers_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _base()
    batch = _batch(base)
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    digest = _tree_digest(index_dir)
    old = EmbeddedIndex.open(index_dir)

    def crash(*args: object, **kw: object) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(partitioned, "merge_partition_maps", crash)  # after the partitions
    with pytest.raises(RuntimeError, match="power cut"):
        EmbeddedIndex.append(batch, index_dir, workers=1)
    monkeypatch.undo()
    assert _tree_digest(index_dir) == digest
    late = datetime(2100, 1, 1, tzinfo=UTC)
    assert old.count_before(late) == len(base)
    assert EmbeddedIndex.open(index_dir).search("storm", as_of=late) == old.search(
        "storm", as_of=late
    )
    EmbeddedIndex.append(batch, index_dir, workers=1)  # and the next one completes
    EmbeddedIndex.build(base + batch, tmp_path / "scratch", workers=1)
    assert _tree_digest(index_dir) == _tree_digest(tmp_path / "scratch")


_SLOW_APPEND = """
import sys, time
from pastcast.corpus.embedded import _partitioned as part
real = part.save_arrays
def slow(*args, **kw):  # an append slow enough to be killed between two partitions
    real(*args, **kw)
    open(sys.argv[3], "a").write("saved\\n")
    time.sleep(30)
part.save_arrays = slow
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_jsonl_documents
EmbeddedIndex.append(read_jsonl_documents(sys.argv[1]), sys.argv[2], workers=1)
"""


def _write_jsonl(docs: Sequence[Document], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for d in docs:
            row = d.model_dump(mode="json", exclude_none=True)
            row["timestamp"] = d.timestamp.isoformat().replace("+00:00", "Z")
            fh.write(json.dumps(row) + "\n")
    return path


def test_a_killed_append_leaves_the_old_index_and_the_next_append_completes(
    tmp_path: Path,
) -> None:
    base = _base()
    batch = _batch(base)
    index_dir = tmp_path / "index"
    EmbeddedIndex.build(base, index_dir, workers=1)
    digest = _tree_digest(index_dir)
    source = _write_jsonl(batch, tmp_path / "new.jsonl")
    marker = tmp_path / "saved.txt"
    env = {**os.environ, "PYTHONPATH": SRC}
    args = [sys.executable, "-c", _SLOW_APPEND, str(source), str(index_dir), str(marker)]
    proc = subprocess.Popen(args, env=env)
    deadline = time.monotonic() + 600  # a loaded machine starts processes slowly
    try:
        while not marker.exists():
            assert proc.poll() is None, "the append ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [".index.appending"]
    assert _tree_digest(index_dir) == digest
    assert len(EmbeddedIndex.open(index_dir)) == len(base)
    EmbeddedIndex.append(batch, index_dir, workers=1)
    EmbeddedIndex.build(base + batch, tmp_path / "scratch", workers=1)
    assert _tree_digest(index_dir) == _tree_digest(tmp_path / "scratch")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def _rows(tmp_path: Path, name: str, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_append_corpus_reads_the_source_as_a_build_does(tmp_path: Path) -> None:
    first = _rows(
        tmp_path,
        "a.jsonl",
        [
            {"id": "a1", "timestamp": "2020-01-18T12:00:00Z", "title": "Talks", "text": "Talks."},
            {"id": "a2", "timestamp": "2020-02-03T00:00:00Z", "title": "Storm", "text": "Rain."},
        ],
    )
    second = _rows(
        tmp_path,
        "b.jsonl",
        [
            {"id": "b1", "timestamp": "2020-01-19T00:00:00Z", "title": "More", "text": "Talks go."},
            {  # flagged by the content screen, as in a build
                "id": "b2",
                "timestamp": "2020-01-18T12:00:00Z",
                "title": "War in Afghanistan (2001–2021)",
                "text": "A convoy was attacked.",
                "dated_by": "crawled",
            },
            {
                "id": "b3",
                "timestamp": "2020-03-01T00:00:00Z",
                "title": "Q",
                "text": "x",
                "dated_by": "crawled",
            },
        ],
    )
    index_dir = tmp_path / "index"
    build_corpus(f"jsonl:{first}", out=index_dir, workers=1)
    result = append_corpus(index_dir, f"jsonl:{second}", workers=1)
    assert result.indexed == 2 and result.build is not None
    assert "content screen: 1 documents removed (title_later_period 1)" in result.report
    assert result.build.partitions_kept == 1  # February untouched
    both = _rows(
        tmp_path, "both.jsonl", [*map(json.loads, first.read_text().splitlines())]
    )  # the scratch build reads both files' rows
    with both.open("a") as fh:
        fh.write(second.read_text())
    build_corpus(f"jsonl:{both}", out=tmp_path / "scratch", workers=1)
    assert _tree_digest(index_dir) == _tree_digest(tmp_path / "scratch")  # dating.json too
    dating = json.loads((index_dir / "dating.json").read_text())
    assert dating["dated_by"] == {"crawled": 1, "unrecorded": 3}
    with pytest.raises(FieldError) as err:
        append_corpus(index_dir, f"jsonl:{second}")
    assert err.value.field == "documents" and "'b1'" in str(err.value)
    with pytest.raises(FieldError) as err:
        append_corpus(tmp_path / "nowhere", f"jsonl:{second}")
    assert err.value.field == "index"
    with pytest.raises(FieldError) as err:
        append_corpus(index_dir, f"jsonl:{second}", require_dates="published")
    assert err.value.field == "require_dates"
    again = append_corpus(index_dir, f"jsonl:{second}", duplicates="skip")
    assert again.indexed == 0 and len(EmbeddedIndex.open(index_dir)) == 4
    digest = _tree_digest(index_dir)
    with pytest.raises(FieldError, match="no documents to append") as err:  # as a build refuses
        append_corpus(index_dir, f"jsonl:{second}", allow_source=["nowhere.example"])
    assert err.value.field == "source" and _tree_digest(index_dir) == digest


def test_the_append_command(tmp_path: Path) -> None:
    first = _rows(
        tmp_path,
        "a.jsonl",
        [{"id": "a1", "timestamp": "2020-01-18T12:00:00Z", "title": "Talks", "text": "Talks."}],
    )
    second = _rows(
        tmp_path,
        "b.jsonl",
        [{"id": "b1", "timestamp": "2020-05-01T00:00:00Z", "title": "Storm", "text": "Rain."}],
    )
    index_dir = tmp_path / "index"
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{first}", "--out", str(index_dir)]).exit_code
        == 0
    )
    result = runner.invoke(app, ["corpus", "append", f"jsonl:{second}", "--index", str(index_dir)])
    assert result.exit_code == 0, result.output
    assert "appended 1 documents" in result.output
    assert len(EmbeddedIndex.open(index_dir)) == 2
    result = runner.invoke(app, ["corpus", "append", f"jsonl:{second}", "--index", str(index_dir)])
    assert result.exit_code == 2 and "'b1'" in result.output
    args = ["corpus", "append", f"jsonl:{second}", "--index", str(index_dir), "--skip-duplicates"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "appended 0 documents" in result.output


def test_corpus_feed_appends_what_it_fetched_to_an_index(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    feeds = tmp_path / "feeds.toml"
    feeds.write_text('[[feed]]\nname = "drop"\nfolder = "drop"\n')
    spool, index_dir = tmp_path / "spool", tmp_path / "index"
    rows = [
        {"id": "d1", "timestamp": "2026-05-30T00:00:00Z", "title": "T", "text": "dropped"},
        {"id": "d2", "timestamp": "2026-06-02T00:00:00Z", "title": "U", "text": "storm"},
    ]
    args = [
        "corpus",
        "feed",
        str(feeds),
        "--spool",
        str(spool),
        "--once",
        "--index",
        str(index_dir),
    ]
    (drop / "a.jsonl").write_text(json.dumps(rows[0]) + "\n")
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "indexed 1 documents" in result.output and len(EmbeddedIndex.open(index_dir)) == 1
    (drop / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "indexed 1 documents" in result.output
    assert len(EmbeddedIndex.open(index_dir)) == 2
    result = runner.invoke(app, args)  # nothing new: the index is left alone
    assert result.exit_code == 0 and "indexed" not in result.output
    built = build_corpus(f"feed:{spool}", out=tmp_path / "scratch", workers=1)
    assert built.indexed == 2
    assert _tree_digest(index_dir) == _tree_digest(tmp_path / "scratch")
