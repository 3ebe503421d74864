"""The streamed, parallel, resumable build of the embedded index: a build killed part-way resumes
to the same files, equals the in-memory index at adversarial cutoffs, keeps its memory bounded as
the corpus grows, finds repeated ids across months, and reports malformed rows where they are."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from corpus_synth import make_docs, with_threads

from pastcast.app import build_corpus
from pastcast.corpus import CorpusBuildReport, DocumentNotVisible, check_thread_lookups
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_jsonl_documents
from pastcast.errors import FieldError
from pastcast.records import Document

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _docs(n: int, months: int, seed: int = 0) -> list[Document]:
    """``n`` documents over about ``months`` months, with threads; some share an instant and
    some sit exactly on a month's first instant."""
    docs = make_docs(n, seed, span_days=30 * months)
    for i in range(0, n, 23):  # pairs of documents at one instant: the second shares the first's
        if i + 1 < n:
            docs[i + 1] = docs[i + 1].model_copy(update={"timestamp": docs[i].timestamp})
    for i in range(5, n, 41):
        ts = docs[i].timestamp
        docs[i] = docs[i].model_copy(
            update={"timestamp": datetime(ts.year, ts.month, 1, tzinfo=UTC)}
        )
    return with_threads(docs, seed)


def _write_jsonl(docs: list[Document], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for d in docs:
            row = d.model_dump(mode="json", exclude_none=True)
            row["timestamp"] = d.timestamp.isoformat().replace("+00:00", "Z")
            fh.write(json.dumps(row) + "\n")
    return path


def _tree_digest(index_dir: Path) -> str:
    """Every file of an index (path and bytes), but the build report (it holds times)."""
    digest = hashlib.sha256()
    for f in sorted(p for p in index_dir.rglob("*") if p.is_file()):
        rel = f.relative_to(index_dir).as_posix()
        if rel == "build_report.json":
            continue
        digest.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


_SLOW_BUILD = """
import sys, time
from pastcast.corpus.embedded import _partitioned as part
real = part.save_arrays
def slow(*args, **kw):  # a build slow enough to be killed between two partitions
    real(*args, **kw)
    time.sleep(0.4)
part.save_arrays = slow
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_jsonl_documents
EmbeddedIndex.build(read_jsonl_documents(sys.argv[1]), sys.argv[2], workers=1)
"""


def _complete_partitions(parts: Path) -> int:
    """Partitions written whole: a partition is filled in a hidden sibling folder (which holds
    its manifest just before the rename), so those are not counted."""
    return sum(1 for m in parts.glob("*/manifest.json") if not m.parent.name.startswith("."))


def test_a_killed_build_resumes_and_yields_the_same_index(tmp_path: Path) -> None:
    docs = _docs(1200, months=12, seed=3)
    source = _write_jsonl(docs, tmp_path / "docs.jsonl")
    out = tmp_path / "index"
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BUILD, str(source), str(out)], env=env)
    parts = tmp_path / ".index.building" / "parts"
    deadline = time.monotonic() + 600  # a loaded machine starts processes slowly
    try:
        while _complete_partitions(parts) < 3:
            assert proc.poll() is None, "the build ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    written = _complete_partitions(parts)
    assert not out.exists() and 3 <= written < 12

    resumed = EmbeddedIndex.build(read_jsonl_documents(source), out, workers=2)
    report = resumed.build_report
    assert report is not None
    assert report.partitions_reused == written
    assert f"reused {written} of {report.partitions} partitions" in " ".join(report.lines())

    fresh_dir = tmp_path / "fresh"
    fresh = EmbeddedIndex.build(read_jsonl_documents(source), fresh_dir, workers=1)
    assert fresh.build_report is not None and fresh.build_report.partitions_reused == 0
    assert resumed.manifest["content_sha256"] == fresh.manifest["content_sha256"]
    assert _tree_digest(out) == _tree_digest(fresh_dir)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_streamed_build_equals_the_in_memory_index(tmp_path: Path, workers: int) -> None:
    docs = _docs(900, months=5, seed=7)
    streamed = EmbeddedIndex.build(iter(docs), tmp_path / "index", workers=workers)
    memory = EmbeddedIndex.in_memory(docs)
    assert streamed.manifest["content_sha256"] == memory.manifest["content_sha256"]
    cutoffs = adversarial_cutoffs(docs[:60])
    stamps = sorted({d.timestamp for d in docs})
    for ts in stamps[:: max(1, len(stamps) // 20)]:
        month = ts.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        cutoffs += [month, month - timedelta(microseconds=1), ts, ts + timedelta(microseconds=1)]
    shared = [t for t in stamps if sum(d.timestamp == t for d in docs[:200]) > 1]
    assert shared  # two documents at one instant: cut just before and just after them
    cutoffs += [shared[0], shared[0] + timedelta(microseconds=1)]
    for cutoff in cutoffs:
        assert streamed.count_before(cutoff) == memory.count_before(cutoff)
        for q in ("election", "w1 w2 storm", "tariff merger w7"):
            got = streamed.search(q, as_of=cutoff, k=15)
            assert got == memory.search(q, as_of=cutoff, k=15), (q, cutoff)
    # reads by id bisect the ids in order: every id, an unknown one, a future one
    ordered = sorted(docs, key=lambda d: (d.timestamp, d.id))
    late = datetime(2100, 1, 1, tzinfo=UTC)
    for d in ordered[::37]:
        assert streamed.read(d.id, as_of=late) == d
    with pytest.raises(DocumentNotVisible):
        streamed.read("doc-none", as_of=late)
    with pytest.raises(DocumentNotVisible):
        streamed.read(ordered[-1].id, as_of=ordered[-1].timestamp)
    # the thread maps merged from the months' own maps
    reopened = EmbeddedIndex.open(tmp_path / "index")
    check_thread_lookups(reopened, docs, n_probes=60, raise_on_violation=True)


def test_a_repeated_id_in_two_months_is_an_error(tmp_path: Path) -> None:
    docs = make_docs(50, 1, span_days=90)
    early = min(docs, key=lambda d: d.timestamp)
    copy = early.model_copy(update={"timestamp": early.timestamp + timedelta(days=60)})
    with pytest.raises(ValueError, match=f"duplicate document id {early.id!r}"):
        EmbeddedIndex.build(iter([*docs, copy]), tmp_path / "index", workers=1)
    assert not (tmp_path / "index").exists()


def test_a_malformed_source_row_names_its_file_line_and_field(tmp_path: Path) -> None:
    docs = make_docs(5, 2)
    source = _write_jsonl(docs, tmp_path / "docs.jsonl")
    lines = source.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["timestamp"] = "yesterday"
    lines[2] = json.dumps(bad)
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(FieldError) as err:
        build_corpus(f"jsonl:{source}", out=tmp_path / "index")
    assert err.value.field == "documents"
    assert f"{source}:3: field timestamp" in str(err.value)
    # leniently the row is left out, and the stored report counts it by reason
    built = build_corpus(f"jsonl:{source}", out=tmp_path / "index", lenient=True, workers=1)
    assert built.indexed == 4 and built.build is not None
    stored = CorpusBuildReport.load(tmp_path / "index")
    assert stored == built.build
    assert sum(stored.removed.values()) == 1
    assert all(r.startswith("malformed: field timestamp") for r in stored.removed)
    assert stored.documents == 4 and stored.workers == 1 and stored.peak_rss_bytes > 0


_MEASURE = """
import resource, sys
from datetime import UTC, datetime, timedelta
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

def docs(n, months):
    start = datetime(2020, 1, 1, tzinfo=UTC)
    step = timedelta(days=30 * months) / n
    for i in range(n):
        words = " ".join(f"w{(i * 7 + j * 13) % 5000}" for j in range(30))
        yield Document(id=f"d{i:08d}", timestamp=start + i * step, title=f"t{i % 97}", text=words)

per_month = int(sys.argv[1])
EmbeddedIndex.build(docs(per_month, 1), sys.argv[2] + "-warm", workers=1)  # imports, buffers
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
months = int(sys.argv[3])
EmbeddedIndex.build(docs(per_month * months, months), sys.argv[2], workers=1)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
"""


def _growth_kib(tmp_path: Path, per_month: int, months: int) -> int:
    out = tmp_path / f"index-{months}"
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(per_month), str(out), str(months)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return int(done.stdout.split()[-1])


def test_peak_memory_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    """Four times the documents (over four times the months, as a corpus grows) must not take
    four times the memory: what a build holds is bounded by a month, not the corpus. An index
    holding every id or document at once grows by about 1 KiB a document, 60 MiB here."""
    small = _growth_kib(tmp_path, 2000, 8)
    large = _growth_kib(tmp_path, 2000, 32)
    assert large < 2 * max(small, 10_000), (small, large)


def test_the_merged_maps_equal_the_maps_of_all_documents(tmp_path: Path) -> None:
    from pastcast.corpus.embedded._maps import FIELDS, DocMaps

    docs = _docs(700, months=6, seed=5)
    index = EmbeddedIndex.build(iter(docs), tmp_path / "index", workers=1)
    sha = str(index.manifest["content_sha256"])
    merged = DocMaps.load(tmp_path / "index", sha)
    assert merged is not None
    ordered = sorted(docs, key=lambda d: (d.timestamp, d.id))
    for got, field in zip(merged._maps(), FIELDS.values(), strict=True):
        want: dict[str, list[int]] = {}  # grouped one document at a time
        for ordinal, doc in enumerate(ordered):
            if getattr(doc, field):
                want.setdefault(getattr(doc, field), []).append(ordinal)
        assert got.keys == sorted(want)
        assert [got.ordinals(k).tolist() for k in got.keys] == [want[k] for k in sorted(want)]


@pytest.mark.parametrize("workers", [1, 2])
def test_sub_month_partitions_keep_the_as_of_guarantees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """A month larger than a partition's bound is cut into ranges in (timestamp, id) order:
    at a range's first and last instant, and between documents of one instant that two ranges
    share, the spooled build sees what the in-memory index and an index of only the documents
    before the cutoff see; its corpus digest stays that of the months."""
    from pastcast.corpus import check_as_of_equivalence
    from pastcast.corpus.embedded import _ranges

    monkeypatch.setattr(_ranges, "PARTITION_DOCS", 40)
    docs = _docs(260, months=2, seed=11)
    instant = docs[30].timestamp  # 50 documents at one instant: more than one range holds them
    docs = [
        d.model_copy(update={"timestamp": instant}) if 30 <= i < 80 else d
        for i, d in enumerate(docs)
    ]
    built = EmbeddedIndex.build(iter(docs), tmp_path / "index", workers=workers)
    memory = EmbeddedIndex.in_memory(docs)
    assert built.manifest["content_sha256"] == memory.manifest["content_sha256"]
    parts = built.manifest["partitions"]
    assert all(p["doc_count"] <= 40 for p in parts)
    assert sum("." in p["name"] for p in parts) > 4
    edges = itertools.pairwise(parts)
    shared = [a for a, b in edges if a["last_timestamp"] == b["first_timestamp"]]
    assert shared  # a cut between two documents of one instant
    cutoffs = [instant, instant + timedelta(microseconds=1), instant - timedelta(microseconds=1)]
    for p in parts:
        for edge in (p["first_timestamp"], p["last_timestamp"]):
            ts = datetime.fromisoformat(edge)
            cutoffs += [ts, ts + timedelta(microseconds=1)]
    for cutoff in cutoffs:
        assert built.count_before(cutoff) == memory.count_before(cutoff)
        for q in ("election", "w1 w2 storm", "tariff merger w7"):
            assert built.search(q, as_of=cutoff, k=15) == memory.search(q, as_of=cutoff, k=15)
    ordered = sorted(docs, key=lambda d: (d.timestamp, d.id))
    late = datetime(2100, 1, 1, tzinfo=UTC)
    assert [built.read(d.id, as_of=late) for d in ordered[::7]] == ordered[::7]
    check_thread_lookups(
        EmbeddedIndex.open(tmp_path / "index"), docs, n_probes=40, raise_on_violation=True
    )
    count = iter(range(1000))

    def factory(subset: list[Document]) -> EmbeddedIndex:
        return EmbeddedIndex.build(iter(subset), tmp_path / f"sub-{next(count)}", workers=1)

    report = check_as_of_equivalence(factory, docs, cutoffs=cutoffs[:6], seed=2)
    assert report.violations == 0 and report.nonempty > 0, report.first_violations
