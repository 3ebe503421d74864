"""The month-sharded corpus on a loopback LocalCluster of three workers: the same ids, scores,
order and ties as the single index at adversarial cutoffs, a fan-out to the admitted shards
only, reads routed to the owning shard, and opening by spec through the registry."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from corpus_synth import WORDS, make_docs

from pastcast.corpus import DocumentNotVisible, SearchFilter, open_backend
from pastcast.corpus._conformance import adversarial_cutoffs
from pastcast.corpus.embedded import EmbeddedIndex, index_months
from pastcast.corpus.sharded import ShardedCorpus
from pastcast.corpus.sharded._sharded import parse_spec, plan_shards
from pastcast.errors import FieldError
from pastcast.records import Document

TICK = timedelta(microseconds=1)
TWIN = datetime(2024, 3, 14, 12, 0, tzinfo=UTC)


def corpus() -> list[Document]:
    """Five months of documents, some on month boundaries, some sharing one instant with
    equal texts (equal scores: ties by id across shards), and a term only in the last month."""
    docs = make_docs(500, seed=31, span_days=140)
    for i in range(0, 60, 6):
        at = datetime(2024, 3 + i % 3, 1, tzinfo=UTC)
        docs[i] = docs[i].model_copy(update={"timestamp": at})
    for i in range(8):
        docs.append(
            Document(id=f"twin-{7 - i}", timestamp=TWIN, title="twin", text="storm merger twin")
        )
    last = max(d.timestamp for d in docs)
    docs.append(Document(id="only-late", timestamp=last, title="zebra", text="zebra zebra"))
    return docs


DOCS = corpus()
QUERIES = ["election", "storm merger twin", "w1 w2 w3", "zebra", "tariff ceasefire", ""]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = Path(tmp_path_factory.mktemp("sharded")) / "ix"
    EmbeddedIndex.build(DOCS, path)
    return path


@pytest.fixture(scope="module")
def single(index_dir: Path) -> EmbeddedIndex:
    return EmbeddedIndex.open(index_dir)


@pytest.fixture(scope="module")
def sharded(dask_address: str, index_dir: Path) -> Iterator[ShardedCorpus]:
    spec = f"dask://{dask_address.removeprefix('tcp://')}?index={index_dir}&shards=3"
    backend = open_backend(spec)
    assert isinstance(backend, ShardedCorpus)
    yield backend
    backend.close()


def cutoffs() -> list[datetime]:
    months = [datetime(2024, m, 1, tzinfo=UTC) for m in range(1, 8)]
    out = [c + d for c in months for d in (-TICK, timedelta(0), TICK)]
    out += [TWIN - TICK, TWIN, TWIN + TICK]
    return out + random.Random(4).sample(adversarial_cutoffs(DOCS), 15)


def test_the_shards_cover_the_months_in_order(sharded: ShardedCorpus, index_dir: Path) -> None:
    months = [m.name for m in index_months(index_dir)]
    assert len(months) >= 5 and len(sharded.shards) == 3
    assert [m.name for s in sharded.shards for m in s.months] == months
    assert len(sharded) == len(DOCS)
    workers = {s.server._address for s in sharded.shards}
    assert len(workers) == 3 and all(w.startswith("tcp://127.0.0.1:") for w in workers)


def test_same_results_as_the_single_index(sharded: ShardedCorpus, single: EmbeddedIndex) -> None:
    rng = random.Random(9)
    compared = 0
    for cutoff in cutoffs():
        assert sharded.count_before(cutoff) == single.count_before(cutoff)
        for query in [*QUERIES, rng.choice(DOCS).title, " ".join(rng.choices(WORDS, k=3))]:
            k = rng.choice([1, 3, 10, 40])
            got = sharded.search(query, as_of=cutoff, k=k)
            want = single.search(query, as_of=cutoff, k=k)
            assert got == want, (query, cutoff, k)
            assert all(h.timestamp < cutoff for h in got)
            compared += bool(want)
    assert compared > 150


def test_ties_across_shards_fall_to_the_lower_id(
    sharded: ShardedCorpus, single: EmbeddedIndex
) -> None:
    hits = sharded.search("twin", as_of=TWIN + TICK, k=5)
    assert [h.id for h in hits] == [f"twin-{i}" for i in range(5)]
    assert sharded.search("twin", as_of=TWIN, k=5) == single.search("twin", as_of=TWIN, k=5) == []


def test_filters_narrow_before_ranking(sharded: ShardedCorpus, single: EmbeddedIndex) -> None:
    since = datetime(2024, 3, 1, tzinfo=UTC)
    for cutoff in (since, since + TICK, datetime(2024, 6, 1, tzinfo=UTC)):
        flt = SearchFilter(since=since)
        got = sharded.search("election storm", as_of=cutoff, k=10, filters=flt)
        assert got == single.search("election storm", as_of=cutoff, k=10, filters=flt)


def test_a_query_asks_only_the_admitted_shards(sharded: ShardedCorpus) -> None:
    first, second = sharded.shards[0], sharded.shards[1]
    before = [s.get("statistics", 0) for s in sharded.shard_calls()]
    sharded.calls.clear()
    assert sharded.search("election", as_of=first.first, k=5) == []  # nothing before it
    assert sharded.calls == {}
    sharded.search("election", as_of=second.first, k=5)  # only the first shard is admitted
    assert set(sharded.calls) == {0}
    sharded.calls.clear()
    sharded.search("election", as_of=second.first + TICK, k=5)
    assert set(sharded.calls) == {0, 1}
    after = [s.get("statistics", 0) for s in sharded.shard_calls()]
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 1, 0]  # as the shards saw


def test_reads_go_to_the_owning_shard_and_check_the_cutoff(sharded: ShardedCorpus) -> None:
    late = sharded.shards[2]
    doc = next(d for d in DOCS if d.timestamp > late.first)
    sharded.read(doc.id, as_of=doc.timestamp + TICK)  # the digests are fetched once
    sharded.calls.clear()
    assert sharded.read(doc.id, as_of=doc.timestamp + TICK) == doc
    assert sharded.calls == {2: 1}
    with pytest.raises(DocumentNotVisible) as future:
        sharded.read(doc.id, as_of=doc.timestamp)
    with pytest.raises(DocumentNotVisible) as unknown:
        sharded.read("no-such-id", as_of=doc.timestamp)
    assert str(future.value).replace(repr(doc.id), "ID") == str(unknown.value).replace(
        repr("no-such-id"), "ID"
    )
    sharded.calls.clear()
    with pytest.raises(DocumentNotVisible):
        sharded.read(doc.id, as_of=late.first)  # the owning shard is not admitted: not asked
    assert sharded.calls == {}


def test_identity_names_what_served_the_corpus(
    sharded: ShardedCorpus, single: EmbeddedIndex
) -> None:
    got, want = sharded.identity(), single.identity()
    assert got.content_sha256 == want.content_sha256 and got.doc_count == want.doc_count
    assert got.backend == "sharded" and got.spec.startswith("dask://127.0.0.1:")
    assert got.options["served_by"] == "dask" and len(got.options["shards"]) == 3  # type: ignore[arg-type]


def test_a_second_opener_uses_the_same_shards(
    dask_address: str, index_dir: Path, sharded: ShardedCorpus
) -> None:
    spec = f"dask://{dask_address.removeprefix('tcp://')}?index={index_dir}&shards=3"
    with ShardedCorpus.connect(spec) as again:
        assert [s.server.key for s in again.shards] == [s.server.key for s in sharded.shards]


def test_plan_balances_documents_over_contiguous_months(index_dir: Path) -> None:
    months = index_months(index_dir)
    for count in range(1, len(months) + 3):
        plan = plan_shards(months, count)
        assert [m for shard in plan for m in shard] == months
        assert len(plan) == min(count, len(months)) and all(plan)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("dask://127.0.0.1:1", "give the index directory"),
        ("dask://127.0.0.1:1?index=/x&shards=0", "positive whole number"),
        ("dask://127.0.0.1:1?index=/x&nprobe=3", "unknown parameter 'nprobe'"),
        ("dask://?index=/x", "no scheduler address"),
    ],
)
def test_bad_specs_are_one_line(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_spec(spec)
    with pytest.raises(FieldError, match=message):
        open_backend(spec)


def test_only_bm25(dask_address: str, index_dir: Path) -> None:
    spec = f"dask://{dask_address.removeprefix('tcp://')}?index={index_dir}"
    with pytest.raises(FieldError, match="bm25 only"):
        open_backend(spec, "dense")


def test_small_corpus_fewer_months_than_workers(dask_address: str, tmp_path: Path) -> None:
    docs = make_docs(30, seed=2, span_days=20)  # two months
    EmbeddedIndex.build(docs, tmp_path / "ix")
    spec = f"dask://{dask_address.removeprefix('tcp://')}?index={tmp_path / 'ix'}"
    with ShardedCorpus.connect(spec) as small:
        assert len(small.shards) == len(index_months(tmp_path / "ix")) <= 2
        single = EmbeddedIndex.open(tmp_path / "ix")
        for cutoff in adversarial_cutoffs(docs)[:20]:
            assert small.search("election w1", as_of=cutoff, k=5) == single.search(
                "election w1", as_of=cutoff, k=5
            )
        small.release()
