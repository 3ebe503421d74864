"""The fast paths of search give what the plain ones give: snippets found without a regular
expression per query, the compiled kernel against the numpy scorer, thread-safe scratch space,
and hits built from the hit columns against hits built from the stored documents."""

from __future__ import annotations

import os
import pickle
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from corpus_synth import WORDS, make_docs, with_threads
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.corpus import SearchFilter, tokenize
from pastcast.corpus._protocol import SearchHit, known_valid_hit
from pastcast.corpus._text import (
    _first_match,
    _first_match_by_word,
    text_snippet,
    tokenize_utf8,
)
from pastcast.corpus.embedded import EmbeddedIndex, _bm25
from pastcast.corpus.embedded._arrays import load_arrays
from pastcast.corpus.embedded._kernel import _hash_at
from pastcast.corpus.embedded._maps import DocMaps
from pastcast.npyfiles import prefetch_rows
from pastcast.records import Document

# ASCII words and punctuation, accents, a ligature, sharp s, full-width letters, underscores
PIECES = ["Gaza", "gaza", "ceasefire", "Ceasefire", "élan", "Élan", "ﬁre", "Straße", "strasse"]
PIECES += ["ＡＢＣ", "abc", "x_y", "_", "42", "–", " ", " ", ", ", ".", "-", "İstanbul", "ǅ"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=30),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=4),
)
def test_first_match_equals_the_word_by_word_scan(pieces: list[str], query: list[str]) -> None:
    text = "".join(pieces)
    terms = list(dict.fromkeys(tokenize(" ".join(query))))
    assert _first_match(text, terms) == _first_match_by_word(text, terms)


ASCII_WORDS = ["gaza", "Gaza", "GAZA", "x_y", "_", "42", "a1", "fire", "firewall", "ceasefire"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(ASCII_WORDS) | st.text(" ,.-_'\t\n!a1Z", max_size=3), max_size=25),
    st.lists(st.sampled_from(ASCII_WORDS), min_size=1, max_size=4),
)
def test_first_match_in_ascii_text_equals_the_word_by_word_scan(
    pieces: list[str], query: list[str]
) -> None:
    text = "".join(pieces)
    terms = list(dict.fromkeys(tokenize(" ".join(query))))
    assert _first_match(text, terms) == _first_match_by_word(text, terms)


def test_kernel_equals_the_numpy_scorer_bit_for_bit() -> None:
    docs = make_docs(600, seed=11, span_days=20)
    index = EmbeddedIndex.in_memory(docs)
    rng = random.Random(4)
    checked = 0
    for _ in range(200):
        terms = index.query_terms(" ".join(rng.choices(WORDS, k=rng.randint(1, 5))))
        n = rng.randint(1, len(index))
        k = rng.choice((1, 3, 10, 1000))
        got, want = index.score(terms, n, k), index.naive_score(terms, n, k)
        assert got[0].tolist() == want[0].tolist()
        assert got[1].tolist() == want[1].tolist()  # == on floats: bit for bit
        checked += bool(len(got[0]))
    assert checked > 150


def test_the_kernel_compiles_uncached_where_numba_finds_no_cache_folder() -> None:
    # a read-only install run by a user with no writable home: numba's locators find no folder
    # (here: only the locator of zipped modules allowed) and would refuse ``cache=True``
    code = "import pastcast.corpus.embedded._kernel as k; print(k._CACHE)"
    env = os.environ | {"NUMBA_CACHE_LOCATOR_CLASSES": "ZipCacheLocator"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "False"), run.stderr[-500:]


def test_the_kernel_loads_without_linear_algebra_and_numba_still_finds_blas() -> None:
    # a fresh process: the kernel's first call loads numba's compiler without scipy's linear
    # algebra; numba's own BLAS probe then answers as it would have, and np.dot still compiles
    code = """if True:
        import importlib.util, sys
        import numba, numpy as np
        from pastcast.corpus.embedded._kernel import _hash_at
        assert _hash_at(np.arange(4, dtype=np.uint64), np.uint64(2)) == 2
        loaded = "scipy.linalg" in sys.modules
        from numba.np import arraymath
        dot = numba.njit(lambda a, b: np.dot(a, b))
        blas = importlib.util.find_spec("scipy") is not None
        print(loaded, bool(arraymath._HAVE_BLAS) == blas, dot(np.ones(3), np.ones(3)) == 3.0)
    """
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (run.returncode, run.stdout.split()) == (0, ["False", "True", "True"]), run.stderr


def test_the_interpolated_term_look_up_finds_what_bisection_finds() -> None:
    rng = np.random.default_rng(5)
    for size in (0, 1, 15, 16, 17, 100, 1000, 20_000):
        # spread evenly (as hashes are), then crowded at the bottom: interpolation guesses badly
        for shift in (0, 8, 40, 60):
            h = np.sort(rng.integers(0, 2**64 - 1, size, dtype=np.uint64)) >> np.uint64(shift)
            keys = rng.integers(0, 2**64 - 1, 200, dtype=np.uint64) >> np.uint64(shift)
            picked = rng.choice(h, min(size, 200)) if size else h
            near = np.concatenate([picked, picked[picked < 2**64 - 1] + np.uint64(1)])
            ends = np.array([0, 2**64 - 1], dtype=np.uint64)
            for key in np.concatenate([keys, near, ends, h[:1], h[-1:]]):
                assert _hash_at(h, key) == int(np.searchsorted(h, key)), (size, shift, key)


def test_concurrent_searches_do_not_share_scratch_space() -> None:
    docs = make_docs(800, seed=12, span_days=40)
    index = EmbeddedIndex.in_memory(docs)
    rng = random.Random(5)
    cutoff = docs[-1].timestamp + timedelta(days=1)
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(300)]
    alone = [index.search(q, as_of=cutoff, k=10) for q in queries]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda q: index.search(q, as_of=cutoff, k=10), queries))
    assert together == alone


def test_hits_from_the_hit_columns_equal_hits_from_the_stored_documents(tmp_path: Path) -> None:
    docs = make_docs(500, seed=13, span_days=90)
    docs[0] = docs[0].model_copy(update={"title": "Élan – ﬁre", "text": "Straße élan ﬁre"})
    built = EmbeddedIndex.build(docs, tmp_path / "index")
    rng = random.Random(6)
    stamps = sorted(d.timestamp for d in docs)
    compared = 0
    for _ in range(150):
        cutoff = rng.choice(stamps) + timedelta(microseconds=rng.choice((-1, 0, 1)))
        query = " ".join(rng.choices([*WORDS, "élan", "fire", "strasse"], k=rng.randint(1, 4)))
        got = built.search(query, as_of=cutoff, k=10)
        terms = built.query_terms(query)
        stored = [(built.read(hit.id, as_of=cutoff), hit.score) for hit in got]
        assert got == [
            SearchHit(
                id=d.id,
                timestamp=d.timestamp,
                title=d.title,
                score=score,
                snippet=text_snippet(d.text, terms),
            )
            for d, score in stored
        ]
        compared += bool(got)
    assert compared > 100


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_the_utf8_terms_are_the_tokenizers_terms(text: str) -> None:
    assert tokenize_utf8(text) == [t.encode() for t in tokenize(text)]
    ascii_text = text.encode("ascii", "replace").decode()
    assert tokenize_utf8(ascii_text) == [t.encode() for t in tokenize(ascii_text)]


def test_a_hit_past_the_cutoff_fails_loudly(tmp_path: Path) -> None:
    docs = make_docs(200, seed=14, span_days=30)
    built = EmbeddedIndex.build(docs, tmp_path / "index")
    cutoff = sorted(d.timestamp for d in docs)[100]
    n = built.count_before(cutoff)
    assert built.hits([(n - 1, 1.0)], "w1", cutoff)  # the last visible one is fine
    for ordinal in (n, len(built) - 1, -1):
        for filters in (None, SearchFilter()):  # from the hit columns, from the documents
            with pytest.raises(RuntimeError, match="index corrupt"):
                built.hits([(ordinal, 1.0)], "w1", cutoff, filters)


def test_a_hit_built_without_validation_is_the_validated_hit() -> None:
    stamp = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    fast = known_valid_hit("d-1", stamp, "Élan", 1.25, "…a snippet…")
    slow = SearchHit(id="d-1", timestamp=stamp, title="Élan", score=1.25, snippet="…a snippet…")
    assert fast == slow and slow == fast
    assert repr(fast) == repr(slow)
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_fields_set == slow.model_fields_set
    assert SearchHit.model_validate_json(fast.model_dump_json()) == fast
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert fast.model_copy(update={"score": 2.0}) == slow.model_copy(update={"score": 2.0})
    with pytest.raises(ValueError, match="frozen"):
        fast.score = 3.0  # type: ignore[misc]


def _skewed_docs(n: int, seed: int, days: int = 120, long_months: bool = False) -> list[Document]:
    """Zipf-like words plus rare ones (so whole terms can be pruned) and exact duplicates under
    other ids (ties at the k-th score); with ``long_months``, four times as many words in the
    documents of odd months (months of other average lengths)."""
    rng = random.Random(seed)
    vocab = WORDS + [f"rare{i}" for i in range(30)]
    weights = [1.0 / (i + 1) ** 1.1 for i in range(len(WORDS))] + [0.004] * 30
    docs: list[Document] = []
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(n):
        if docs and rng.random() < 0.1:
            twin = rng.choice(docs)
            docs.append(twin.model_copy(update={"id": f"twin-{i:05d}"}))
            continue
        words = rng.choices(vocab, weights, k=rng.randint(2, 30))
        when = start + timedelta(hours=rng.randrange(24 * days))
        if long_months and when.month % 2:
            words += rng.choices(vocab, weights, k=3 * len(words))
        docs.append(
            Document(
                id=f"doc-{i:05d}",
                timestamp=when,
                title=" ".join(words[:3]),
                text=" ".join(words[3:]),
            )
        )
    return docs


def _assert_pruned_equals_naive(
    index: EmbeddedIndex,
    seed: int,
    vocab: list[str],
    runs: int,
    words: int,
    low: int,
    ks: tuple[int, ...],
) -> None:
    """Random queries at random cutoffs (visible documents from ``low``): the pruned kernel's
    ranking and scores equal the naive scorer's bit for bit."""
    rng = random.Random(seed)
    for _ in range(runs):
        terms = index.query_terms(" ".join(rng.choices(vocab, k=rng.randint(1, words))))
        n = rng.randint(low, len(index))
        k = rng.choice(ks)
        got, want = index.score(terms, n, k), index.naive_score(terms, n, k)
        assert got[0].tolist() == want[0].tolist(), (terms, n, k)
        assert got[1].tolist() == want[1].tolist()  # == on floats: bit for bit


def test_the_pruned_query_kernel_equals_the_naive_scorer_bit_for_bit() -> None:
    docs = _skewed_docs(1500, seed=16)
    vocab = [*WORDS, *(f"rare{i}" for i in range(30)), "absent"]
    index = EmbeddedIndex.in_memory(docs)
    _assert_pruned_equals_naive(index, 7, vocab, 450, 5, 1, (1, 3, 10, 40))


def test_months_skipped_by_their_reach_leave_the_naive_ranking() -> None:
    # two years of months: once the k-th score found is above a month's reach, that month and
    # every later one in reach order are skipped, which must not drop a document that ranks
    docs = _skewed_docs(2400, seed=18, days=730)
    vocab = [*WORDS[:8], *(f"rare{i}" for i in range(30))]
    index = EmbeddedIndex.in_memory(docs)
    _assert_pruned_equals_naive(index, 8, vocab, 300, 4, len(index) // 2, (1, 2, 5, 10))


def test_months_skipped_by_their_score_peaks_leave_the_naive_ranking() -> None:
    # a term's peak in a month (its largest score over idf) is taken at the month's own average
    # length; a cutoff whose average is longer (here: the odd months' documents are four times
    # as long) scores higher, so the peak must be stretched by the ratio to bound its scores
    docs = _skewed_docs(2400, seed=19, days=730, long_months=True)
    vocab = [*WORDS[:8], *(f"rare{i}" for i in range(30))]
    index = EmbeddedIndex.in_memory(docs)
    _assert_pruned_equals_naive(index, 9, vocab, 300, 4, len(index) // 4, (1, 2, 5, 10))


def test_maps_of_an_in_memory_build_equal_the_maps_of_the_stored_lines(tmp_path: Path) -> None:
    docs = with_threads(make_docs(400, seed=17, span_days=90), seed=3)
    assert any(d.author for d in docs) and any(d.parent_id for d in docs)
    built = EmbeddedIndex.build(docs, tmp_path / "index")
    from_lines = DocMaps.from_parts(built._parts)
    for got, want in zip(built.doc_maps()._maps(), from_lines._maps(), strict=True):
        assert got.keys == want.keys
        assert got.offsets.tolist() == want.offsets.tolist()
        assert got.ords.tolist() == want.ords.tolist()
    reopened = EmbeddedIndex.open(tmp_path / "index")  # the saved maps are these
    assert [m.keys for m in reopened.doc_maps()._maps()] == [m.keys for m in from_lines._maps()]


def test_the_stored_term_directory_scores_as_an_index_of_the_past_alone(tmp_path: Path) -> None:
    # the directory (written by the merge) finds a term in every month at once; the cutoff's
    # month is cut to its visible prefix. Cutoffs on the first and last instant of a month,
    # on and around instants two documents share: each hit is before the cutoff and ranks and
    # scores as the numpy scorer ranks an index built from the documents before the cutoff only
    docs = _skewed_docs(900, seed=21, days=150)
    rng = random.Random(10)
    for i in range(0, len(docs), 7):  # on a month's first or last instant
        month = datetime(2024, 1 + rng.randrange(5), 1, tzinfo=UTC)
        edge = month if rng.random() < 0.5 else month - timedelta(microseconds=1)
        docs[i] = docs[i].model_copy(update={"timestamp": edge})
    for i in range(3, len(docs), 11):  # shares an instant with the document before
        docs[i] = docs[i].model_copy(update={"timestamp": docs[i - 1].timestamp})
    index = EmbeddedIndex.build(docs, tmp_path / "ix", workers=1)
    assert index._directory is not None  # the stored one, not one made on the first search
    stamps = sorted({d.timestamp for d in docs})
    us = timedelta(microseconds=1)
    cutoffs = {datetime(2024, m, 1, tzinfo=UTC) + d for m in range(1, 7) for d in (-us, 0 * us, us)}
    cutoffs |= {t + d for t in rng.sample(stamps, 12) + stamps[-3:] for d in (-us, 0 * us, us)}
    vocab = [*WORDS[:10], *(f"rare{i}" for i in range(30))]
    queries = [" ".join(rng.choices(vocab, k=rng.randint(1, 4))) for _ in range(25)]
    for cutoff in sorted(cutoffs):
        past = [d for d in docs if d.timestamp < cutoff]
        alone = EmbeddedIndex.in_memory(past) if past else None
        for q in queries:
            hits = index.search(q, as_of=cutoff, k=10)
            assert all(h.timestamp < cutoff for h in hits)
            want = alone.naive_score(alone.query_terms(q), len(alone), 10) if alone else ([], [])
            ids = [alone.read_ordinal(int(o)).id for o in want[0]] if alone else []
            assert [(h.id, h.score) for h in hits] == list(zip(ids, want[1], strict=True)), q


def _read_ahead_off(folder: Path) -> dict[str, set[bool]]:
    """Per file name under ``folder`` mapped by this process: whether each of its mappings
    reads only the faulting page (``rr``, ``MADV_RANDOM``, in ``/proc/self/smaps``)."""
    found: dict[str, set[bool]] = {}
    name = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if len(head) >= 6 and "-" in head[0] and head[5].startswith(str(folder)):
            name = Path(head[5]).name
        elif line.startswith("VmFlags:") and name is not None:
            found.setdefault(name, set()).add("rr" in head[1:])
            name = None
    return found


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="needs Linux's smaps")
def test_a_search_reads_the_pages_it_needs_not_the_read_ahead_around_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a device's read-ahead (8 MB on some) made a first search read whole files: 1.6 GB at 5M
    start = datetime(2024, 1, 1, tzinfo=UTC)
    docs = [  # "alpha" in all, some 1,440 a month: postings longer than a page (1,024 int32)
        Document(
            id=f"d{i}", timestamp=start + timedelta(minutes=30 * i), title="", text=t, source="s"
        )
        for i, t in enumerate(f"alpha w{i % 7} rare{i}" for i in range(4000))
    ]
    EmbeddedIndex.build(docs, tmp_path / "index")
    index = EmbeddedIndex.open(tmp_path / "index")
    asked: list[tuple[int, int, int]] = []  # (array, lo, hi)

    def prefetch(array: np.ndarray, spans: list[tuple[int, int]]) -> None:  # type: ignore[type-arg]
        asked.extend((id(array), lo, hi) for lo, hi in spans)
        prefetch_rows(array, spans)  # which refuses a range off the mapping

    monkeypatch.setattr(_bm25, "prefetch_rows", prefetch, raising=False)
    parts, query = index._parts, "alpha w1 rare5 absent"
    cutoff = datetime(2024, 2, 25, tzinfo=UTC)  # in February, the last month admitted
    # the compiled kernel's ranges, and the numpy scorer's (a filtered search)
    for search in (index.search, partial(index.search, filters=SearchFilter(source="s"))):
        asked.clear()
        assert search(query, as_of=cutoff, k=5)
        # before scoring, exactly the visible postings ranges longer than a page are asked for,
        # of the postings and their term frequencies; those within a page are left to a fault
        terms, n = index.query_terms(query), index.count_before(cutoff)
        _, ranges = _bm25._postings(parts, index._bases, terms, n, future=False)
        spans = [r for found in ranges for r in found]
        assert {hi - lo <= 1024 for _, lo, hi in spans} == {True, False}
        long = [(p, lo, hi) for p, lo, hi in spans if hi - lo > 1024]
        assert [p for p, _, _ in long] == [0, 1]  # January whole, February's visible part
        assert long[1][2] < parts[1].term_offsets[parts[1].vocab["alpha"] + 1]
        arrays = [(parts[p].post_ord, parts[p].post_tf) for p, _, _ in long]
        want = [(id(a), lo, hi) for (_, lo, hi), two in zip(long, arrays, strict=True) for a in two]
        assert sorted(asked) == sorted(want)
    searched = _read_ahead_off(tmp_path / "index")
    for name in ("term_hash.npy", "terms.bin", "hits.bin", "len_prefix.npy", "term_peak.npy"):
        assert searched[name] == {True}, name
    for name in ("docs.jsonl", "id_rank.npy", "directory_hash.npy", "directory_slot.npy"):
        assert searched[name] == {True}, name
    # the postings too: their long ranges are asked for above, and the megabytes read ahead
    # around them took a cold first search at 5M 1.1 to 1.35 s against 0.6 to 0.7 s
    # (docs/measurements/scale.md)
    for name in ("post_ord.npy", "post_tf.npy"):
        assert searched[name] == {True}, name
    # read in runs, they keep read-ahead: the timestamps whole at open, a term's documents'
    # lengths scattered over a partition's
    for name in ("timestamps.npy", "doc_len.npy"):
        assert searched[name] == {False}, name
    copy = tmp_path / "copy"  # a build's reader goes through every page: read ahead
    shutil.copytree(next((tmp_path / "index" / "parts").iterdir()), copy)
    held = load_arrays(copy)
    assert {n: v for n, v in _read_ahead_off(copy).items() if n.endswith(".npy")}
    assert set().union(*_read_ahead_off(copy).values()) == {False}
    del held
