"""Over a hundred thousand leakage probes across the BM25, dense and hybrid backends (dense by a
full scan and by 8-bit candidates), on a corpus spanning several month partitions: searches for
the exact titles and words of future documents (which name what happened), reads of future ids,
counts, at cutoffs on month boundaries, midnights, one microsecond either side of document
timestamps, and random instants."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
from corpus_synth import make_docs

from pastcast.corpus import EmbeddedIndex, LeakageReport, check_no_leakage
from pastcast.records import Document

faiss = pytest.importorskip("faiss")
from test_dense import HashEmbedder  # noqa: E402

from pastcast.corpus import DenseIndex, HybridIndex  # noqa: E402


def corpus() -> list[Document]:
    docs = make_docs(240, seed=21, span_days=130)
    rng = random.Random(21)
    for i in range(0, len(docs), 11):  # some documents exactly on a month boundary
        boundary = datetime(2024, 2 + rng.randrange(4), 1, tzinfo=UTC)
        docs[i] = docs[i].model_copy(update={"timestamp": boundary})
    return docs


def probes(report: LeakageReport) -> int:
    return report.searches + report.reads + report.counts


def test_over_a_hundred_thousand_probes_across_backends() -> None:
    docs = corpus()
    index = EmbeddedIndex.in_memory(docs)
    assert len(index.partition_bounds) == 6  # Jan 30 + 130 days: January to June
    dense = DenseIndex(index, HashEmbedder(), quantized_min=None)
    quantized = DenseIndex(index, HashEmbedder(), quantized_min=1)  # every month in 8 bits
    assert quantized._quantized is not None and len(quantized._quantized.months) == 6
    backends: list[tuple[Any, int]] = [
        (index, 10_000),
        (dense, 3_000),
        (HybridIndex(dense), 3_000),
        (quantized, 3_000),
        (HybridIndex(quantized), 3_000),
    ]
    total = 0
    for seed, (backend, n_probes) in enumerate(backends):
        report = check_no_leakage(backend, docs, n_probes=n_probes, seed=seed)
        assert report.violations == 0 and report.hits_checked > n_probes
        total += probes(report)
    assert total >= 100_000
