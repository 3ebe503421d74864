"""PostgreSQL top-k that stops early (impact-ordered postings, threshold algorithm): the same
ids, order and scores as scoring every posting and as the embedded index, at adversarial
cutoffs, while reading only part of the postings."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from corpus_synth import WORDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pastcast.corpus import tokenize
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.postgres import PostgresBackend
from pastcast.corpus.postgres._sql import (
    CANDIDATE_SQL,
    impact_expression,
    impact_range_sql,
    impact_top_sql,
)
from pastcast.records import Document

JAN, FEB, MAR, APR = (datetime(2024, m, 1, tzinfo=UTC) for m in (1, 2, 3, 4))
TICK = timedelta(microseconds=1)
TWIN = datetime(2024, 2, 14, 12, 0, tzinfo=UTC)  # an instant several documents share


def skewed_corpus() -> list[Document]:
    """A corpus where early termination pays, with adversarial features.

    * ``common`` is in nearly every document with tf 1 (many postings, none high-scoring),
      and with a high tf in a few short documents;
    * ``late`` occurs only in March (a term present only after a February cutoff);
    * ``peak`` has all its high-tf postings in March and only tf 1 before;
    * several documents share the instant ``TWIN``, and some sit on month boundaries.
    """
    rng = random.Random(40)
    docs: list[Document] = []
    for i in range(1500):
        ts = JAN + timedelta(seconds=rng.randrange(90 * 86400))
        words = rng.choices(WORDS, k=rng.randint(5, 60)) + ["common"]
        if ts >= MAR and rng.random() < 0.2:
            words += ["late"] * rng.randint(1, 3)
        if rng.random() < 0.3:
            words += ["peak"] * (rng.randint(6, 12) if ts >= MAR else 1)
        docs.append(Document(id=f"s-{i:05d}", timestamp=ts, title=words[0], text=" ".join(words)))
    for i in range(12):  # short documents with a high tf of 'common': the true top ones
        ts = JAN + timedelta(days=3 + 7 * i)
        text = " ".join(["common"] * (3 + i % 5) + ["election"])
        docs.append(Document(id=f"top-{i:02d}", timestamp=ts, title="common", text=text))
    for i in range(6):  # equal timestamps, equal texts: equal scores, ties broken by id
        text = "common common peak storm"
        docs.append(Document(id=f"twin-{5 - i}", timestamp=TWIN, title="twin", text=text))
    for i, at in enumerate((FEB, MAR, MAR - TICK, FEB + TICK)):
        docs.append(Document(id=f"edge-{i}", timestamp=at, title="common", text="common peak"))
    return docs


DOCS = skewed_corpus()
QUERIES = [
    "common",
    "common election",
    "peak",
    "peak common",
    "late",
    "late common",
    "late peak storm",
    "common common peak",
    "election storm tariff merger",
    "w1 w2 w3 common",
    "unknownword common",
    "twin common peak storm",
]


def cutoffs() -> list[datetime]:
    """First and last instant of each month, the shared instant and either side of it, and a
    sample of document instants (each one, and a microsecond either side)."""
    out = [JAN, FEB, FEB - TICK, FEB + TICK, MAR, MAR - TICK, MAR + TICK, APR, APR - TICK]
    out += [TWIN, TWIN + TICK, TWIN - TICK, datetime(2030, 1, 1, tzinfo=UTC)]
    return out + random.Random(2).sample(adversarial_cutoffs(DOCS), 30)


@pytest.fixture(scope="module")
def pg(pg_url: str) -> Iterator[PostgresBackend]:
    with PostgresBackend.build(DOCS, pg_url, schema="topk_skewed", overwrite=True) as backend:
        backend.early_termination = True
        yield backend


@pytest.fixture(scope="module")
def embedded() -> EmbeddedIndex:
    return EmbeddedIndex.in_memory(DOCS)


def _terms(query: str) -> list[str]:
    return list(dict.fromkeys(tokenize(query)))


def test_early_results_equal_exhaustive_and_embedded(
    pg: PostgresBackend, embedded: EmbeddedIndex
) -> None:
    assert pg.meta["impact"]
    early_searches = 0
    for cutoff in cutoffs():
        for query in QUERIES:
            for k in (1, 3, 10, 25):
                got = pg.search(query, as_of=cutoff, k=k)
                work = pg.last_work
                early_searches += work is not None and not work.exhaustive
                want = embedded.search(query, as_of=cutoff, k=k)
                assert [(h.id, h.score, h.snippet) for h in got] == [
                    (h.id, h.score, h.snippet) for h in want
                ], (query, cutoff, k)
                terms = _terms(query)
                assert pg.score(terms, cutoff, k) == pg.score(terms, cutoff, k, exhaustive=True)
                assert all(h.timestamp < cutoff for h in got)
    assert early_searches > 1000  # the comparisons above were of the early path


def test_a_term_only_after_the_cutoff_and_high_postings_after_it(
    pg: PostgresBackend, embedded: EmbeddedIndex
) -> None:
    for cutoff in (MAR, MAR - TICK, FEB + TICK):
        assert pg.search("late", as_of=cutoff, k=10) == []
        hits = pg.search("peak", as_of=cutoff, k=10)
        assert hits and all(h.timestamp < cutoff for h in hits)
        assert [h.id for h in hits] == [h.id for h in embedded.search("peak", as_of=cutoff, k=10)]
    # one microsecond later the March document on the boundary and its term are visible
    assert [h.id for h in pg.search("late common", as_of=MAR + timedelta(days=5), k=3)]


def test_ties_at_a_shared_instant_fall_to_the_lower_id(pg: PostgresBackend) -> None:
    hits = pg.search("twin common peak storm", as_of=TWIN + TICK, k=50)
    twins = [h for h in hits if h.id.startswith("twin-")]
    assert [h.id for h in twins] == [f"twin-{i}" for i in range(6)]
    assert len({h.score for h in twins}) == 1
    assert not [h for h in pg.search("twin", as_of=TWIN, k=50) if h.id.startswith("twin-")]


def test_postings_are_skipped(pg: PostgresBackend) -> None:
    """The counter: an early search reads a small part of the visible postings."""
    pg.search("common", as_of=APR, k=10)
    work = pg.last_work
    assert work is not None and not work.exhaustive
    assert work.visible > 1500 and work.skipped > work.visible // 2, work
    pg.search("common", as_of=APR, k=10, filters=None)
    pg.score(["common"], APR, 10, exhaustive=True)
    assert pg.last_work is not None and pg.last_work.skipped == 0


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from([*WORDS[:12], "common", "peak", "late", "storm"]), max_size=5),
    seconds=st.integers(min_value=-86400, max_value=100 * 86400),
    k=st.integers(min_value=1, max_value=40),
)
def test_property_early_equals_exhaustive(
    pg: PostgresBackend, words: list[str], seconds: int, k: int
) -> None:
    cutoff = JAN + timedelta(seconds=seconds)
    terms = _terms(" ".join(words))
    assert pg.score(terms, cutoff, k) == pg.score(terms, cutoff, k, exhaustive=True)


def _partitions(plan: str) -> set[str]:
    return set(re.findall(r"\bpostings_(\d{4}_\d{2})\b", plan))


@pytest.mark.parametrize("cutoff", [FEB, datetime(2024, 2, 9, 12, 0, tzinfo=UTC)])
def test_early_statements_use_the_impact_index_and_prune_months(
    pg: PostgresBackend, cutoff: datetime
) -> None:
    impact = pg.meta["impact"]
    expr = impact_expression(impact["a"], impact["c"])
    params = {"as_of": cutoff, "t0": "common", "t1": "peak", "limit": 5, "x0": 0.5, "x1": 0.5}
    params |= {"ords": [1, 2], "stamps": [JAN, JAN], "terms": ["common", "peak"]}
    allowed = {"2024_01"} | ({"2024_02"} if cutoff > FEB else set())
    for statement in (impact_top_sql(expr, 2), impact_range_sql(expr, [0, 1])):
        plan = pg.explain(statement, params)
        assert "_term_expr_" in plan, plan  # the expression index serves the order
        assert _partitions(plan) <= allowed and _partitions(plan), plan
    plan = pg.explain(CANDIDATE_SQL, params)
    assert _partitions(plan) <= allowed, plan
