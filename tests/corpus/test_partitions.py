"""Month partitions: exact equality with the unpartitioned index, the naive baseline, indexes
of earlier versions refused, and a resumable build without duplicates."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corpus_synth import WORDS, make_docs

from pastcast.corpus import check_as_of_equivalence
from pastcast.corpus.embedded import EmbeddedIndex, index_months
from pastcast.corpus.embedded import _partitioned as partitioned
from pastcast.corpus.embedded._arrays import IndexArrays, build_arrays, save_arrays
from pastcast.records import Document


def legacy_score(a: IndexArrays, terms: list[str], n: int, k: int) -> list[tuple[int, float]]:
    """The unpartitioned index's scoring, kept verbatim as the reference."""
    if n <= 0 or k <= 0:
        return []
    avgdl = int(a.len_prefix[n]) / n
    scores = np.zeros(n, dtype=np.float64)
    touched = []
    for term in terms:
        tid = a.vocab.get(term)
        if tid is None:
            continue
        lo, hi = int(a.term_offsets[tid]), int(a.term_offsets[tid + 1])
        df = int(np.searchsorted(a.post_ord[lo:hi], n, side="left"))
        if df == 0:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        ords = np.asarray(a.post_ord[lo : lo + df])
        tf = a.post_tf[lo : lo + df].astype(np.float64)
        norm = 1.2 * (1.0 - 0.75 + 0.75 * (a.doc_len[ords] / avgdl))
        scores[ords] += idf * (tf * 2.2) / (tf + norm)
        touched.append(ords)
    if not touched:
        return []
    cand = np.unique(np.concatenate(touched))
    order = np.lexsort((a.id_rank[cand], -scores[cand]))[:k]
    return [(int(cand[i]), float(scores[cand[i]])) for i in order]


def spread_docs(n: int, seed: int) -> list[Document]:
    """Documents over ~5 months, several on month boundaries (exact midnights)."""
    docs = make_docs(n, seed, span_days=150)
    rng = random.Random(seed)
    for i in range(0, n, 17):
        month = datetime(2024, 2 + rng.randrange(4), 1, tzinfo=UTC)
        docs[i] = docs[i].model_copy(update={"timestamp": month})
    return docs


def test_partitioned_equals_the_unpartitioned_index() -> None:
    docs = spread_docs(400, seed=2)
    part = EmbeddedIndex.in_memory(docs)
    assert len(part.partition_bounds) >= 5
    legacy = build_arrays(docs)
    rng = random.Random(3)
    stamps = sorted(d.timestamp for d in docs)
    cutoffs = [stamps[0], stamps[-1] + timedelta(1), datetime(2024, 3, 1, tzinfo=UTC)]
    cutoffs += [
        rng.choice(stamps) + timedelta(microseconds=rng.choice((-1, 0, 1))) for _ in range(40)
    ]
    compared = 0
    for cutoff in cutoffs:
        n = part.count_before(cutoff)
        for _ in range(10):
            terms = part.query_terms(" ".join(rng.choices([*WORDS, "absent"], k=rng.randint(1, 4))))
            k = rng.choice((1, 5, 10, 50))
            ours = part.score(terms, n, k)
            got = list(zip(ours[0].tolist(), ours[1].tolist(), strict=True))
            assert got == legacy_score(legacy, terms, n, k)
            naive = part.naive_score(terms, n, k)
            assert naive[0].tolist() == ours[0].tolist() and naive[1].tolist() == ours[1].tolist()
            compared += 1
    assert compared == 430


def test_as_of_equivalence_across_month_boundaries() -> None:
    docs = spread_docs(300, seed=5)
    cutoffs = [datetime(2024, m, 1, tzinfo=UTC) for m in range(2, 7)]
    cutoffs += [c + timedelta(microseconds=d) for c in cutoffs for d in (-1, 1)]

    def factory(subset: Sequence[Document]) -> EmbeddedIndex:
        return EmbeddedIndex.in_memory(subset)

    report = check_as_of_equivalence(factory, docs, cutoffs=cutoffs, seed=1)
    assert report.comparisons == len(cutoffs) * report.queries
    assert report.violations == 0 and report.nonempty > 0, report.first_violations


def test_indexes_an_earlier_version_wrote_are_refused_naming_the_folder(tmp_path: Path) -> None:
    docs = spread_docs(120, seed=8)
    save_arrays(build_arrays(docs), tmp_path / "single")  # the single-partition layout
    EmbeddedIndex.build(docs, tmp_path / "monthly", workers=1)
    part = next((tmp_path / "monthly" / "parts").iterdir()) / "manifest.json"
    manifest = json.loads(part.read_text())
    part.write_text(json.dumps({**manifest, "version": 3}))  # before score peaks
    calls: list[tuple[Path, Callable[[Path], object]]] = [
        (tmp_path / name, call)
        for name in ("single", "monthly")
        for call in (EmbeddedIndex.open, lambda folder: EmbeddedIndex.append([], folder))
    ]
    calls.append((tmp_path / "single", index_months))
    for folder, call in calls:
        with pytest.raises(ValueError, match="build the index again") as err:
            call(folder)
        assert str(folder) in str(err.value)


def test_titles_and_texts_from_the_hit_columns_equal_the_documents(tmp_path: Path) -> None:
    docs = [
        d.model_copy(update={"title": f"Ünïcode «{i}» ✓" if i % 3 else "", "text": d.text + " é"})
        for i, d in enumerate(spread_docs(150, seed=9))
    ]
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    for i in range(len(index)):
        doc = index.read_ordinal(i)
        assert index.read_title_text(i) == (doc.title, doc.text)


class Crash(RuntimeError):
    pass


def test_an_interrupted_build_resumes_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = spread_docs(300, seed=11)
    out = tmp_path / "index"
    real_save = partitioned.save_arrays
    written: list[str] = []

    def crashing_save(arrays: IndexArrays, folder: Path, *rest: Any) -> None:
        if len(written) == 3:
            raise Crash("power cut")
        real_save(arrays, folder, *rest)
        written.append(folder.name)

    monkeypatch.setattr(partitioned, "save_arrays", crashing_save)
    with pytest.raises(Crash):
        EmbeddedIndex.build(docs, out)
    assert not out.exists() and len(written) == 3

    # A crash while reading the input (after some documents) leaves the partitions alone too.
    def failing_source() -> object:
        yield from docs[:50]
        raise Crash("source went away")

    with pytest.raises(Crash):
        EmbeddedIndex.build(failing_source(), out)  # type: ignore[arg-type]
    # Resume: the same documents, in another order; the three complete months are reused.
    written.clear()
    monkeypatch.setattr(
        partitioned,
        "save_arrays",
        lambda a, f, *rest: (real_save(a, f, *rest), written.append(f.name)),
    )
    resumed = EmbeddedIndex.build(list(reversed(docs)), out)
    months = sorted({partitioned.month_of(d) for d in docs})
    assert sorted(written) == months[3:]
    assert len(resumed) == len(docs)
    ids = [resumed.read_ordinal(i).id for i in range(len(resumed))]
    assert sorted(ids) == sorted(d.id for d in docs)
    fresh = EmbeddedIndex.in_memory(docs)
    assert resumed.manifest["content_sha256"] == fresh.manifest["content_sha256"]
    cutoff = datetime(2030, 1, 1, tzinfo=UTC)
    for q in ("election", "w1 w2 storm"):
        assert resumed.search(q, as_of=cutoff, k=30) == fresh.search(q, as_of=cutoff, k=30)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [p["name"] for p in manifest["partitions"]] == months
    assert sum(p["doc_count"] for p in manifest["partitions"]) == len(docs)
