"""Approximate dense search (one faiss IVF, lists trained on the past, searched through id
ranges): nothing at or after the cutoff, the same hits as an index of the past alone, recall
against the exact search, and its files kept and reused."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from corpus_synth import START, HashEmbedder, make_docs

from pastcast.corpus import check_as_of_equivalence, check_no_leakage
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

faiss = pytest.importorskip("faiss")
from pastcast.corpus.dense import DenseIndex  # noqa: E402
from pastcast.corpus.dense._approximate import ApproximateIndex  # noqa: E402
from pastcast.corpus.dense._dense import _RERANKED  # noqa: E402

_US = timedelta(microseconds=1)
FEB = START + timedelta(days=2)
APRIL = datetime(2024, 4, 1, tzinfo=UTC)


class TopicEmbedder:
    """Clustered vectors, as news stories cluster (what an IVF is for; bag-of-words hashes
    hardly do): a text's first word names its topic, the rest its own direction."""

    name = "topics-32"

    def encode(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        rows = []
        for text in texts:
            topic, *rest = text.split() or [""]
            v = _gaussian(topic) + 0.6 * _gaussian(" ".join(rest))
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


@functools.lru_cache(maxsize=10_000)
def _gaussian(text: str) -> np.ndarray:  # type: ignore[type-arg]
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
    return np.random.default_rng(seed).standard_normal(32)


def topic_docs(n: int, seed: int) -> list[Document]:
    """``make_docs``' timestamps (exact midnights, shared instants) moved to February to April,
    titled by one of 60 topics, each text unique."""
    rng = np.random.default_rng(seed)
    return [
        d.model_copy(
            update={
                "timestamp": d.timestamp + timedelta(days=2),
                "title": f"t{rng.integers(60)}",
                "text": f"{d.id} {d.text}",
            }
        )
        for d in make_docs(n, seed=seed, span_days=90)
    ]


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    return topic_docs(1500, seed=31)  # about 500 a month


@pytest.fixture(scope="module")
def index(docs: list[Document]) -> EmbeddedIndex:
    return EmbeddedIndex.in_memory(docs)


def approximate(index: EmbeddedIndex, nprobe: int) -> DenseIndex:
    """Two epochs: lists trained on February (the first month of 50 documents or more) for
    cutoffs in March, and on February and March (the rows have doubled) for April's."""
    return DenseIndex(index, TopicEmbedder(), ivf_min=50, nprobe=nprobe)  # type: ignore[arg-type]


def past_alone(docs: Sequence[Document]) -> DenseIndex:
    return approximate(EmbeddedIndex.in_memory(docs), 1)


def boundary_cutoffs(index: EmbeddedIndex) -> Iterator[datetime]:
    """Per month: the instants of its first and last documents, one microsecond either side,
    and its first midnight: where an off-by-one in the row or list ranges would show."""
    for lo, hi in index.partition_bounds:
        for o in (lo, hi - 1):
            ts = index.read_ordinal(o).timestamp
            yield from (ts - _US, ts, ts + _US)
        yield index.read_ordinal(lo).timestamp.replace(day=1, hour=0, minute=0, second=0)
    yield from (FEB + timedelta(days=d, hours=5) for d in range(0, 95, 9))


def violations(dense: DenseIndex, exhaustive: DenseIndex, exact: DenseIndex) -> list[str]:
    """At every boundary cutoff, searching with the vectors of the first documents at or after
    it and the last ones before it: a row at or after the cutoff, or an exhaustive probe that
    differs from the exact search (so a range one row too narrow shows too)."""
    index, out = dense.index, []
    for cutoff in boundary_cutoffs(index):
        n = index.count_before(cutoff)
        for o in {max(0, n - 2), max(0, n - 1), min(n, len(index) - 1), min(n + 1, len(index) - 1)}:
            q = np.asarray(dense._vectors[o : o + 1])
            for searcher in (dense, exhaustive):
                ords = [o for o, _ in searcher._ranked_vector(q, n, 5)]
                out += [f"{cutoff}: row {o} of {n} visible" for o in ords if o >= n]
            got, want = exhaustive._ranked_vector(q, n, 5), exact._ranked_vector(q, n, 5)
            if [o for o, _ in got] != [o for o, _ in want]:
                out.append(f"{cutoff}: exhaustive {got} != exact {want}")
    return out


def test_nothing_at_or_after_the_cutoff_at_month_boundaries_and_shared_instants(
    index: EmbeddedIndex,
) -> None:
    dense, exhaustive = approximate(index, 1), approximate(index, 10_000)
    assert dense._approximate is not None and len(dense._approximate.until) == 2
    found = violations(dense, exhaustive, DenseIndex(index, TopicEmbedder()))
    assert found == [], found[:5]


@pytest.mark.parametrize("shift", [1, -1], ids=["one-row-more", "one-row-less"])
def test_the_boundary_check_fails_against_a_wrong_row_range(
    index: EmbeddedIndex, shift: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    true_ranges = ApproximateIndex.ranges

    def ranges(self: ApproximateIndex, n: int) -> tuple[int, int] | None:
        seen = true_ranges(self, n)
        return None if seen is None else (seen[0], max(0, seen[1] + shift))

    monkeypatch.setattr(ApproximateIndex, "ranges", ranges)
    dense, exhaustive = approximate(index, 1), approximate(index, 10_000)
    assert violations(dense, exhaustive, DenseIndex(index, TopicEmbedder()))


def trained_parts(approx: ApproximateIndex) -> list[np.ndarray]:  # type: ignore[type-arg]
    """Per epoch, what training fitted: the centroids and the 8-bit codes' ranges."""
    return [
        np.concatenate(
            [ix.quantizer.reconstruct_n(0, ix.nlist).ravel(), faiss.vector_to_array(ix.sq.trained)]
        )
        for ix in approx.indexes
    ]


def test_each_epoch_is_trained_on_the_rows_before_its_start_alone(index: EmbeddedIndex) -> None:
    """Rows from the last epoch's start on replaced by others: every epoch's centroids and
    8-bit ranges stay the same (fitting either to later rows changes them)."""
    dense = approximate(index, 1)
    assert dense._approximate is not None
    vectors, start = np.array(dense._vectors), dense._approximate.until[-1]
    later = vectors.copy()
    later[start:] = -later[start:]
    digests = [""] * len(dense._bounds)
    other = ApproximateIndex.load_or_train(later, dense._bounds, digests, 50, None)
    assert other.until == dense._approximate.until
    for a, b in zip(trained_parts(dense._approximate), trained_parts(other), strict=True):
        np.testing.assert_array_equal(a, b)


# inside March (its lists trained on February alone), at the first instant of April (the set
# trained on February and March starts there) and inside April
CUTOFFS = [datetime(2024, m, d, 7, tzinfo=UTC) for m, d in ((3, 9), (3, 30), (4, 12), (4, 29))]
CUTOFFS += [APRIL, APRIL + _US]
QUERIES = ["t3 w1", "t17", "t42 storm", "w5 w6"]


def test_leakage_probes_and_the_past_alone(docs: list[Document], index: EmbeddedIndex) -> None:
    report = check_no_leakage(approximate(index, 2), docs, n_probes=100, seed=32)
    assert report.violations == 0 and report.hits_checked > 300
    same = check_as_of_equivalence(past_alone, docs, cutoffs=CUTOFFS, queries=QUERIES, seed=33)
    assert same.violations == 0 and same.nonempty > 20, same.first_violations


def test_the_past_alone_check_fails_when_later_lists_are_probed(
    docs: list[Document], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists trained after the cutoff change which rows are found: the equivalence check
    catches it although no row after the cutoff is returned."""
    monkeypatch.setattr(ApproximateIndex, "ranges", lambda self, n: (len(self.until) - 1, n))
    same = check_as_of_equivalence(past_alone, docs, cutoffs=CUTOFFS, queries=QUERIES, seed=33)
    assert same.violations > 0


def test_recall_against_the_exact_search(index: EmbeddedIndex) -> None:
    exact = DenseIndex(index, TopicEmbedder())
    recall = {}
    for nprobe in (1, 8):
        dense = approximate(index, nprobe)
        found = []
        for day in (40, 70, 89):
            n = index.count_before(FEB + timedelta(days=day))
            for topic in range(0, 60, 3):
                query = f"t{topic} w{day}"
                want = {o for o, _ in exact.ranked(query, n, 10)}
                found.append(len(want & {o for o, _ in dense.ranked(query, n, 10)}) / 10)
        recall[nprobe] = float(np.mean(found))
    # one list probed misses neighbours; eight find nearly all of them
    assert recall[1] < 0.9 and recall[8] >= 0.95, recall


def test_the_top_k_is_the_best_of_the_candidates_by_exact_score(index: EmbeddedIndex) -> None:
    """The candidates faiss ranks by their 8-bit estimates are ranked again by exact scores:
    the result is the best k of all of them (ties by id), each with its exact score."""
    dense = approximate(index, 8)
    assert dense._approximate is not None
    vectors = np.asarray(dense._vectors, dtype=np.float64)
    for day in (40, 70, 89):
        n = index.count_before(FEB + timedelta(days=day))
        for topic in range(60):
            q = dense.embed_query(f"t{topic} w{day}")
            ords = dense._approximate.search(q, n, 10 + _RERANKED, 8)
            assert ords is not None
            scores = (vectors[ords] * q[0].astype(np.float64)).sum(axis=1)
            best = np.lexsort((dense.index.id_rank[ords], -scores))[:10]
            want = list(zip(ords[best].tolist(), scores[best].tolist(), strict=True))
            assert dense._ranked_vector(q, n, 10) == want, (day, topic)


def test_a_cutoff_inside_the_first_trained_stretch_is_searched_exactly(
    index: EmbeddedIndex,
) -> None:
    dense, exact = approximate(index, 1), DenseIndex(index, TopicEmbedder())
    assert dense._approximate is not None
    first = dense._approximate.until[0]  # the end of February
    for n in (1, first // 2, first):
        assert dense._approximate.ranges(n) is None
        assert dense.ranked("t5 w1", n, 10) == exact.ranked("t5 w1", n, 10)
    assert dense._approximate.ranges(first + 1) == (0, first + 1)


def test_lists_are_kept_reused_and_an_earlier_layout_is_replaced(
    docs: list[Document], tmp_path: Path
) -> None:
    EmbeddedIndex.build(docs, tmp_path / "idx")
    store = tmp_path / "idx" / "ivf-topics-32"
    store.mkdir()
    (store / "0123abcd-0-1000.faiss").write_bytes(b"an earlier version's month index")
    (store / "content_sha256").write_text("an earlier version's stamp")
    first = approximate(EmbeddedIndex.open(tmp_path / "idx"), 4)
    files = sorted(p.name for p in store.iterdir())
    assert len([f for f in files if f.startswith("epoch-")]) == 2
    # each month's lists in each epoch holding it: February and March in both
    assert len([f for f in files if f.startswith("lists-")]) == 5
    assert len(files) == 7  # the earlier layout's files are gone
    stamps = {p: p.stat().st_mtime_ns for p in store.iterdir()}
    again = approximate(EmbeddedIndex.open(tmp_path / "idx"), 4)
    assert {p: p.stat().st_mtime_ns for p in store.iterdir()} == stamps  # loaded, not trained
    for cutoff in (APRIL - timedelta(days=10), APRIL + timedelta(days=40)):
        for query in ("t3 election", "t30 merger"):
            assert again.search(query, as_of=cutoff) == first.search(query, as_of=cutoff)
    # a damaged file is trained again, to the same lists
    damaged = next(p for p in store.iterdir() if p.name.startswith("epoch-"))
    np.save(damaged, np.zeros((3, 5), dtype=np.float32))
    third = approximate(EmbeddedIndex.open(tmp_path / "idx"), 4)
    cutoff = APRIL + timedelta(days=40)
    assert third.search("t3 election", as_of=cutoff) == first.search("t3 election", as_of=cutoff)


def test_later_months_never_retrain_the_earlier_epochs(
    docs: list[Document], tmp_path: Path
) -> None:
    ordered = sorted(docs, key=lambda d: d.timestamp)
    april = next(i for i, d in enumerate(ordered) if d.timestamp >= APRIL)
    EmbeddedIndex.build(ordered[:april], tmp_path / "short")
    approximate(EmbeddedIndex.open(tmp_path / "short"), 4)
    EmbeddedIndex.build(ordered, tmp_path / "long")
    kept = tmp_path / "long" / "ivf-topics-32"
    kept.mkdir()
    for p in (tmp_path / "short" / "ivf-topics-32").iterdir():
        os.link(p, kept / p.name)
    before = {p.name: p.stat().st_ino for p in kept.iterdir()}
    approximate(EmbeddedIndex.open(tmp_path / "long"), 4)
    after = {p.name: p.stat().st_ino for p in kept.iterdir()}
    # the epoch trained on February, with the lists of February and March, is reused as it
    # was; April adds the epoch trained on February and March, holding all three months
    assert before.items() <= after.items() and len(before) == 3 and len(after) == 7


def test_identity_says_approximate_only_where_lists_exist(index: EmbeddedIndex) -> None:
    options = approximate(index, 3).identity().options
    assert options["exact"] is False and options["nprobe"] == 3
    assert options["approximate_months"] == 3 and options["lists"] > 20
    small = EmbeddedIndex.in_memory(make_docs(300, seed=1))
    options = DenseIndex(small, HashEmbedder(), ivf_min=1000, nprobe=3).identity().options
    assert options["exact"] is True and options["approximate_months"] == 0
