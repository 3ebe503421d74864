"""The PostgreSQL backend against a real server: the same conformance and as-of checks as the
embedded index, result-for-result equality with it, partition pruning, and dense search."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from corpus_synth import START, WORDS, make_docs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pastcast.corpus import DocumentNotVisible, SearchFilter, check_no_leakage
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus._text import tokenize
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.postgres import PostgresBackend
from pastcast.corpus.postgres._sql import (
    AUTHOR_SQL,
    COUNT_SQL,
    DESCENDANTS_SQL,
    HITS_SQL,
    MONTH_DF_SQL,
    MONTH_LENGTHS_SQL,
    READ_SQL,
    THREAD_SQL,
    filter_sql,
    score_sql,
    vector_sql,
)
from pastcast.records import Document

_schemas = itertools.count()


@pytest.fixture(scope="module")
def pg(pg_url: str, docs: list[Document]) -> Iterator[PostgresBackend]:
    with PostgresBackend.build(docs, pg_url, schema="corpus_main") as backend:
        yield backend


@pytest.fixture(scope="module")
def embedded(docs: list[Document]) -> EmbeddedIndex:
    return EmbeddedIndex.in_memory(docs)


def _queries(docs: Sequence[Document], rng: random.Random, n: int) -> list[str]:
    out = [d.title for d in rng.sample(list(docs), n)]
    out += [" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(n)]
    return out + ["", "the of and", "unknownword", "election election ELECTION"]


def test_same_results_as_the_embedded_index(
    pg: PostgresBackend, embedded: EmbeddedIndex, docs: list[Document]
) -> None:
    """Ids, order and scores (==, bit for bit) at adversarial and random cutoffs."""
    rng = random.Random(3)
    cutoffs = rng.sample(adversarial_cutoffs(docs), 40)
    cutoffs += [START + timedelta(seconds=rng.randrange(70 * 86400)) for _ in range(20)]
    cutoffs += [START - timedelta(days=1), START + timedelta(days=400)]
    queries = _queries(docs, rng, 8)
    compared = 0
    for cutoff in cutoffs:
        assert pg.count_before(cutoff) == embedded.count_before(cutoff)
        for q in queries:
            k = rng.choice([1, 5, 10, 50])
            got = pg.search(q, as_of=cutoff, k=k)
            want = embedded.search(q, as_of=cutoff, k=k)
            assert [(h.id, h.score, h.timestamp, h.title) for h in got] == [
                (h.id, h.score, h.timestamp, h.title) for h in want
            ], (q, cutoff)
            assert [h.snippet for h in got] == [h.snippet for h in want]
            compared += bool(want)
    assert compared > 300  # most comparisons are of non-empty rankings


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    offset=st.integers(min_value=-86400, max_value=62 * 86400),
    words=st.lists(st.sampled_from(WORDS + ["the", "nothing"]), min_size=1, max_size=5),
    k=st.integers(min_value=1, max_value=30),
)
def test_property_matches_embedded(
    pg: PostgresBackend, embedded: EmbeddedIndex, offset: int, words: list[str], k: int
) -> None:
    cutoff = START + timedelta(seconds=offset)
    query = " ".join(words)
    got = [(h.id, h.score) for h in pg.search(query, as_of=cutoff, k=k)]
    assert got == [(h.id, h.score) for h in embedded.search(query, as_of=cutoff, k=k)]


# The leakage probes (over 100,000), the as-of equivalence and the thread look-ups run for this
# backend through the registry, with every other backend: see test_leakage.py.


def test_whole_corpus_statistics_would_differ(pg: PostgresBackend, docs: list[Document]) -> None:
    """Guard against a vacuous equivalence test: statistics over all documents change scores."""
    cutoff = START + timedelta(days=20)
    future_blind = EmbeddedIndex.in_memory(docs)  # holds everything, filters nothing by stats
    big = datetime(2100, 1, 1, tzinfo=UTC)
    whole = {h.id: h.score for h in future_blind.search("election storm", as_of=big, k=300)}
    hits = pg.search("election storm", as_of=cutoff, k=20)
    assert hits and any(whole[h.id] != h.score for h in hits)


def test_read_checks_the_cutoff(pg: PostgresBackend, docs: list[Document]) -> None:
    doc = max(docs, key=lambda d: d.timestamp)
    assert pg.read(doc.id, as_of=doc.timestamp + timedelta(microseconds=1)) == doc
    with pytest.raises(DocumentNotVisible) as future:
        pg.read(doc.id, as_of=doc.timestamp)
    with pytest.raises(DocumentNotVisible) as unknown:
        pg.read("no-such-id", as_of=doc.timestamp)
    assert str(future.value).replace(repr(doc.id), "ID") == str(unknown.value).replace(
        repr("no-such-id"), "ID"
    )


def _partitions(plan: str) -> set[str]:
    return set(re.findall(r"\b(?:documents|postings)_(\d{4}_\d{2})\b", plan))


@pytest.mark.parametrize(
    "cutoff", [datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 3, 9, 12, 0, tzinfo=UTC)]
)
def test_plans_skip_partitions_after_the_cutoff(pg: PostgresBackend, cutoff: datetime) -> None:
    """EXPLAIN of every statement: only the months up to the cutoff's are scanned."""
    allowed = {
        f"{y}_{m:02d}"
        for y, m in [(2024, 1), (2024, 2), (2024, 3)]
        if (y, m) <= (cutoff.year, cutoff.month)
    }
    if cutoff.day == 1 and cutoff.hour == 0:
        allowed.discard(
            f"{cutoff:%Y_%m}"
        )  # a month that starts at the cutoff holds nothing visible
    params = {"as_of": cutoff, "id": "doc-00001", "terms": ["election"], "ords": [1, 2], "k": 5}
    params |= {"key": "thread-1", "limit": 5}
    params |= {"t0": "election", "idf0": 1.0, "k1": 1.2, "k1p1": 2.2, "b": 0.75}
    params |= {"one_minus_b": 0.25, "avgdl": 10.0}
    statements = (COUNT_SQL, READ_SQL, HITS_SQL, score_sql(1))
    # a search with the whole filter block, and the reply walk, prune the same way
    conditions, filter_params = filter_sql(
        SearchFilter(doc_type="comment", source="politics", author="a", since=START)
    )
    params |= filter_params
    for statement in (
        *statements,
        THREAD_SQL,
        AUTHOR_SQL,
        DESCENDANTS_SQL,
        score_sql(1, conditions),
    ):
        scanned = _partitions(pg.explain(statement, params))
        assert scanned and scanned <= allowed, (statement, scanned)
    assert len(_partitions(pg.explain(COUNT_SQL, {"as_of": datetime(2030, 1, 1, tzinfo=UTC)}))) >= 3
    # The per-month statistics scan rows of the cutoff's own month only.
    params["month"] = datetime(cutoff.year, cutoff.month, 1, tzinfo=UTC)
    for statement in (MONTH_LENGTHS_SQL, MONTH_DF_SQL):
        scanned = _partitions(pg.explain(statement, params))
        assert scanned == ({f"{cutoff:%Y_%m}"} if cutoff.day > 1 else set()), statement


def test_month_statistics_equal_counting_every_row(
    pg: PostgresBackend, docs: list[Document]
) -> None:
    rng = random.Random(12)
    cutoffs = rng.sample(adversarial_cutoffs(docs), 40) + [START, datetime(2100, 1, 1, tzinfo=UTC)]
    terms = ["election", "storm", "w1", "w7", "unknownword"]
    counted = [(d, Counter(tokenize(f"{d.title}\n{d.text}"))) for d in docs]
    for cutoff in cutoffs:
        visible = [tf for d, tf in counted if d.timestamp < cutoff]
        df = {t: n for t in terms if (n := sum(t in tf for tf in visible))}
        want = (len(visible), sum(tf.total() for tf in visible), df)
        assert pg.statistics(terms, cutoff) == want


def test_a_schema_of_an_earlier_format_is_refused_naming_the_rebuild(pg_url: str) -> None:
    with PostgresBackend.build(make_docs(5, seed=9), pg_url, schema="format_v1") as pg:
        pg._conn.execute(
            "UPDATE format_v1.meta SET value = jsonb_set(value, '{version}', '1') "
            "WHERE key = 'corpus'"
        )
    with pytest.raises(FileNotFoundError, match=r"version 1 .*load it again with"):
        PostgresBackend.connect(pg_url, schema="format_v1")


def test_build_refuses_to_replace_without_overwrite(pg_url: str) -> None:
    docs = make_docs(20, seed=4)
    PostgresBackend.build(docs, pg_url, schema="twice").close()
    with pytest.raises(FileExistsError, match="overwrite"):
        PostgresBackend.build(docs, pg_url, schema="twice")
    with PostgresBackend.build(docs[:5], pg_url, schema="twice", overwrite=True) as again:
        assert len(again) == 5
        assert again.count_before(datetime(2100, 1, 1, tzinfo=UTC)) == 5
    with pytest.raises(FileExistsError, match="holds no corpus"):
        PostgresBackend.build(docs, pg_url, schema="public", overwrite=True)
    with pytest.raises(FileNotFoundError, match="holds no corpus"):
        PostgresBackend.connect(pg_url, schema="nothing_here")
    with pytest.raises(ValueError, match="lowercase"):
        PostgresBackend.connect(pg_url, schema="bad; drop table x")
    with pytest.raises(ValueError, match="duplicate"):
        PostgresBackend.build(docs + docs[:1], pg_url, schema="dups")


def test_unreachable_server_is_a_clear_error() -> None:
    pytest.importorskip("psycopg", reason="the 'postgres' extra is not installed")
    with pytest.raises(ConnectionError, match="cannot connect") as err:
        PostgresBackend.connect("postgresql://user:secret@127.0.0.1:1/db?connect_timeout=2")
    assert "secret" not in str(err.value)


# -- dense -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vectors(docs: list[Document]) -> dict[str, list[float]]:
    rng = np.random.default_rng(0)
    return {d.id: rng.standard_normal(8).astype(np.float32).tolist() for d in docs}


def test_exact_vector_search(
    pg_url: str,
    docs: list[Document],
    vectors: dict[str, list[float]],
) -> None:
    """Exact inner-product ranking over the past only; equal to a corpus of the past alone."""
    rng = np.random.default_rng(1)
    by_id = {d.id: d for d in docs}
    cutoffs = random.Random(2).sample(adversarial_cutoffs(docs), 4)
    with PostgresBackend.build(docs, pg_url, schema="dense_all", embeddings=vectors) as full:
        plan = full.explain(
            vector_sql(), {"q": "[" + ",".join(["0"] * 8) + "]", "as_of": cutoffs[0], "k": 5}
        )
        assert "hnsw" not in plan  # exact: no approximate index walk
        for i, cutoff in enumerate(cutoffs):
            q = rng.standard_normal(8).astype(np.float32)
            past = [d for d in docs if d.timestamp < cutoff]
            hits = full.search_vector(q, as_of=cutoff, k=10)
            brute = sorted(past, key=lambda d: (-float(np.dot(np.float64(vectors[d.id]), q)), d.id))
            assert [h.id for h in hits] == [d.id for d in brute[:10]]
            for h in hits:
                assert h.score == pytest.approx(
                    float(np.dot(np.float64(vectors[h.id]), q)), rel=1e-5
                )
                assert by_id[h.id].timestamp < cutoff
            with PostgresBackend.build(
                past, pg_url, schema=f"dense_{i}", embeddings={d.id: vectors[d.id] for d in past}
            ) as part:
                assert [(h.id, h.score) for h in part.search_vector(q, as_of=cutoff, k=10)] == [
                    (h.id, h.score) for h in hits
                ]
            approx = full.search_vector(q, as_of=cutoff, k=10, exact=False)
            assert all(by_id[h.id].timestamp < cutoff for h in approx)


def test_vector_search_needs_embeddings(pg: PostgresBackend) -> None:
    with pytest.raises(ValueError, match="without embeddings"):
        pg.search_vector([0.0] * 8, as_of=START, k=3)


def test_leaky_postgres_is_caught(pg: PostgresBackend, docs: list[Document]) -> None:
    """The conformance check is not vacuous here: a read with a late cutoff is caught."""

    class Inclusive:
        def search(self, query: str, *, as_of: datetime, k: int = 10) -> list:  # type: ignore[type-arg]
            return pg.search(query, as_of=as_of, k=k)

        def read(self, doc_id: str, *, as_of: datetime) -> Document:
            return pg.read(doc_id, as_of=as_of + timedelta(days=3))

        def count_before(self, as_of: datetime) -> int:
            return pg.count_before(as_of)

    report = check_no_leakage(Inclusive(), docs, n_probes=200, seed=3)
    assert report.violations > 0
    assert all("future document was returned" in v for v in report.first_violations)


def test_agents_search_a_database_by_text_with_filters_and_walk_its_threads(pg_url: str) -> None:
    """The toolbox an agent uses, over a database corpus opened for dense retrieval: the query
    text is embedded here with the corpus's model, the filter block and the cutoff are applied
    in SQL, and the reply walks run in SQL too."""
    from corpus_synth import HashEmbedder, with_threads

    from pastcast.corpus import open_backend
    from pastcast.env import EnvConfig, Toolbox

    docs = with_threads(make_docs(120, seed=41), seed=41)
    PostgresBackend.build(docs, pg_url, schema="agent_dense", embedder=HashEmbedder()).close()
    backend = open_backend(f"{pg_url}?schema=agent_dense", "dense")
    cutoff = START + timedelta(days=40)
    try:
        tools = Toolbox(backend, cutoff, EnvConfig())
        hits = tools.call("search", {"query": "election ceasefire", "doc_type": "comment"})
        visible = {d.id: d for d in docs if d.timestamp < cutoff}
        assert hits and all(visible[h["id"]].parent_id for h in hits)
        author = visible[hits[0]["id"]].author or "author-0"
        mine = tools.call("search", {"query": "election", "author": author, "top_k": 20})
        assert mine and {visible[h["id"]].author for h in mine} == {author}
        reply = next(h["id"] for h in hits)
        chain = tools.call("ancestors", {"doc_id": reply})
        assert chain and all(visible[c["id"]].timestamp < cutoff for c in chain)
        assert chain[-1]["id"] == visible[reply].parent_id
        below = tools.call("descendants", {"doc_id": chain[0]["id"]})
        assert reply in {d["id"] for d in below}
        assert all(d["id"] in visible for d in below)
    finally:
        backend.close()
