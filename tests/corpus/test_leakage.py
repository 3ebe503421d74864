"""Every registered corpus backend, opened through ``open_backend`` as a user would open it, runs
the conformance checks: over a hundred thousand leakage probes (searches for the exact titles,
ids and words of future documents, reads of future ids, counts, at cutoffs on month boundaries,
midnights, one microsecond either side of document timestamps, and random instants), the as-of
equivalence with a backend of the past alone, and the thread and author look-ups.

The cases come from ``backends.names()``: a backend registered without a fixture here fails
(``test_a_backend_without_a_fixture_fails``) unless it is listed in ``SKIPPED`` with a reason.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from corpus_synth import HashEmbedder, make_docs, with_threads

from pastcast.corpus import (
    LeakageReport,
    OpenedCorpus,
    ThreadedBackend,
    backends,
    check_as_of_equivalence,
    check_no_leakage,
    check_search_filters,
    check_thread_lookups,
    open_backend,
)
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.postgres import PostgresBackend
from pastcast.records import Document
from pastcast.registry import Entry


def corpus() -> list[Document]:
    docs = make_docs(240, seed=21, span_days=130)
    rng = random.Random(21)
    for i in range(0, len(docs), 11):  # some documents exactly on a month boundary
        boundary = datetime(2024, 2 + rng.randrange(4), 1, tzinfo=UTC)
        docs[i] = docs[i].model_copy(update={"timestamp": boundary})
    return with_threads(docs, seed=21)


DOCS = corpus()
Opener = Callable[[Sequence[Document]], OpenedCorpus]
_names = itertools.count()


class Env:
    """What a fixture factory may use: fresh folders and, for databases, the test server."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._tmp = request.getfixturevalue("tmp_path_factory")

    def index_dir(self, docs: Sequence[Document]) -> str:
        path = Path(self._tmp.mktemp("index")) / "ix"
        EmbeddedIndex.build(docs, path)
        return str(path)

    def pg_url(self) -> str:
        url: str = self._request.getfixturevalue("pg_url")  # skips without the extra
        return url

    def dask_address(self) -> str:
        address: str = self._request.getfixturevalue("dask_address")  # skips without it
        return address


def _embedded(retrieval: str, **options: Any) -> Callable[[Env], Opener]:
    def make(env: Env) -> Opener:
        return lambda docs: open_backend(env.index_dir(docs), retrieval, **options)

    return make


def _postgres(retrieval: str) -> Callable[[Env], Opener]:
    def make(env: Env) -> Opener:
        url = env.pg_url()

        def open_(docs: Sequence[Document]) -> OpenedCorpus:
            schema = f"conf_{next(_names)}"
            embedder = None if retrieval == "bm25" else HashEmbedder()
            PostgresBackend.build(docs, url, schema=schema, embedder=embedder).close()
            return open_backend(f"{url}?schema={schema}", retrieval)

        return open_

    return make


def _sharded(make: Env) -> Opener:
    host = make.dask_address().removeprefix("tcp://")
    return lambda docs: open_backend(f"dask://{host}?index={make.index_dir(docs)}&shards=3")


# Per registered backend, its variants: options that change how it searches (a full scan or
# 8-bit candidates; BM25, dense or hybrid in a database).
VARIANTS: dict[str, dict[str, Callable[[Env], Opener]]] = {
    "bm25": {"bm25": _embedded("bm25")},
    "dense": {
        "dense": _embedded("dense", embedder="hash-64", quantized_min=None),
        "dense-8bit": _embedded("dense", embedder="hash-64", quantized_min=1),  # every month
        # approximate: lists trained on the past (from the first month on, one probed: far
        # from exact)
        "dense-ivf": _embedded("dense", embedder="hash-64", nprobe=1, ivf_min=1),
    },
    "hybrid": {
        "hybrid": _embedded("hybrid", embedder="hash-64", quantized_min=None),
        "hybrid-8bit": _embedded("hybrid", embedder="hash-64", quantized_min=1),
        "hybrid-ivf": _embedded("hybrid", embedder="hash-64", nprobe=1, ivf_min=1),
    },
    "postgres": {
        "postgres": _postgres("bm25"),
        "postgres-dense": _postgres("dense"),
        "postgres-hybrid": _postgres("hybrid"),
    },
    "sharded": {"sharded": _sharded},  # three month shards on a loopback Dask cluster
}
# A registered backend that cannot be tested here, with the reason (none today).
SKIPPED: dict[str, str] = {}
# check_no_leakage makes about seven probes (searches, reads, counts) per round: over 100,000
# for each backend; the dense and hybrid database variants share the database code that the
# BM25 variant already probes that often, and add only the vector ranking.
# The sharded corpus's searches are the embedded index's, scored per shard, and cost round trips
# to the workers: fewer rounds (some 2,800 probes) cover its own code, the fan-out and merge.
ROUNDS = {"postgres-dense": 1_500, "postgres-hybrid": 1_500, "sharded": 400}
DEFAULT_ROUNDS = 14_500


# Backends that serve no thread look-ups (the thread tools are then not offered), with why.
WITHOUT_THREADS = {"sharded": "a thread spans months, so its look-ups are not sharded"}


def cases() -> list[Any]:
    return [
        pytest.param(name, variant, id=variant)
        for name in backends.names()
        for variant in VARIANTS.get(name, {name: None})
    ]


def opener(name: str, variant: str, request: pytest.FixtureRequest) -> Opener:
    if name in SKIPPED:
        pytest.skip(f"backend {name!r}: {SKIPPED[name]}")
    make = VARIANTS.get(name, {}).get(variant)
    if make is None:
        pytest.fail(
            f"backend {name!r} is registered but has no conformance fixture: add it to VARIANTS "
            "in tests/corpus/test_leakage.py (or to SKIPPED with the reason)"
        )
    return make(Env(request))


def probes(report: LeakageReport) -> int:
    return report.searches + report.reads + report.counts


@pytest.mark.parametrize(("name", "variant"), cases())
def test_leakage_probes(name: str, variant: str, request: pytest.FixtureRequest) -> None:
    backend = opener(name, variant, request)(DOCS)
    try:
        if variant.endswith("8bit"):  # the 8-bit copies are really searched
            dense = getattr(backend, "dense", backend)
            assert dense._quantized is not None and len(dense._quantized.months) == 6
        if variant.endswith("ivf"):  # approximate from the end of the first month on
            dense = getattr(backend, "dense", backend)
            assert dense._approximate.until[0] == dense._bounds[0][1]
        rounds = ROUNDS.get(variant, DEFAULT_ROUNDS)
        seed = [c.values[1] for c in cases()].index(variant)
        report = check_no_leakage(backend, DOCS, n_probes=rounds, seed=seed)
    finally:
        backend.close()
    assert report.violations == 0, report.first_violations
    assert report.hits_checked > rounds
    if rounds == DEFAULT_ROUNDS:
        assert probes(report) >= 100_000


@pytest.mark.parametrize(("name", "variant"), cases())
def test_as_of_equivalence(name: str, variant: str, request: pytest.FixtureRequest) -> None:
    """The whole corpus queried at t == a corpus built from the documents before t only."""
    make = opener(name, variant, request)
    opened: list[OpenedCorpus] = []

    def factory(docs: Sequence[Document]) -> OpenedCorpus:
        opened.append(make(docs))
        return opened[-1]

    month = datetime(2024, 3, 1, tzinfo=UTC)
    cutoffs = [month, month - timedelta(microseconds=1), month + timedelta(microseconds=1)]
    cutoffs += random.Random(5).sample(adversarial_cutoffs(DOCS), 5)
    try:
        report = check_as_of_equivalence(factory, DOCS, cutoffs=cutoffs, seed=5)
    finally:
        for backend in opened:
            backend.close()
    assert report.violations == 0, report.first_violations
    assert report.comparisons == 80 and report.nonempty > 40


@pytest.mark.parametrize(("name", "variant"), cases())
def test_thread_lookups(name: str, variant: str, request: pytest.FixtureRequest) -> None:
    if name in WITHOUT_THREADS:
        pytest.skip(f"backend {name!r}: {WITHOUT_THREADS[name]}")
    backend = opener(name, variant, request)(DOCS)
    try:
        assert isinstance(backend, ThreadedBackend)  # the thread tools work whatever the ranking
        report = check_thread_lookups(backend, DOCS, n_probes=300, seed=6)
    finally:
        backend.close()
    assert report.violations == 0, report.first_violations
    assert report.threads == report.authors == 300 and report.returned > 1000
    assert report.walks > 250


# Hybrid fusion ranks by position in each leg, so restricting its input changes its scores; every
# other variant scores a document independently of the rest, so filtering must preserve rank.
NOT_RANK_PRESERVING = {"hybrid", "hybrid-8bit", "postgres-hybrid"}
APPROXIMATE = {"dense-ivf", "hybrid-ivf"}
FILTER_PROBES = {"postgres": 150, "postgres-dense": 100, "postgres-hybrid": 100}


@pytest.mark.parametrize(("name", "variant"), cases())
def test_search_filters(name: str, variant: str, request: pytest.FixtureRequest) -> None:
    """Filters apply before ranking, never widen the cutoff, and mean the same everywhere."""
    if variant in APPROXIMATE:
        pytest.skip(
            "approximate: its unfiltered search does not rank every visible document, which "
            "this check's counts assume (a filtered search there ranks exactly)"
        )
    backend = opener(name, variant, request)(DOCS)
    probes = FILTER_PROBES.get(variant, 400)
    try:
        report = check_search_filters(
            backend,
            DOCS,
            n_probes=probes,
            rank_preserving=variant not in NOT_RANK_PRESERVING,
            seed=7,
        )
    finally:
        backend.close()
    assert report.violations == 0, report.first_violations
    assert report.searches == probes and report.nonempty > probes // 2


def test_a_backend_without_a_fixture_fails(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """A newly registered backend becomes a case of every test above, and fails there."""

    def plugin(spec: str) -> OpenedCorpus:
        return open_backend(spec)

    monkeypatch.setitem(backends._entries, "plugin", Entry("plugin", plugin))
    assert ("plugin", "plugin") in [tuple(c.values) for c in cases()]
    with pytest.raises(pytest.fail.Exception, match="no conformance fixture"):
        opener("plugin", "plugin", request)


def test_fixtures_name_registered_backends() -> None:
    assert set(VARIANTS) | set(SKIPPED) == set(backends.names())
