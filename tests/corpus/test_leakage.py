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


# check_no_leakage makes about seven probes (searches, reads, counts) per round
ROUNDS = 14_500
MODES = ["bm25", "dense", "hybrid", "dense-8bit", "hybrid-8bit"]


def backend_for(mode: str, index: EmbeddedIndex) -> Any:
    if mode == "bm25":
        return index
    dense = DenseIndex(
        index,
        HashEmbedder(),
        quantized_min=1 if mode.endswith("8bit") else None,  # 1: every month in 8 bits
    )
    if mode.endswith("8bit"):
        assert dense._quantized is not None and len(dense._quantized.months) == 6
    return HybridIndex(dense) if mode.startswith("hybrid") else dense


@pytest.mark.parametrize("mode", MODES)
def test_over_a_hundred_thousand_probes_per_backend(mode: str) -> None:
    docs = corpus()
    index = EmbeddedIndex.in_memory(docs)
    assert len(index.partition_bounds) == 6  # Jan 30 + 130 days: January to June
    report = check_no_leakage(
        backend_for(mode, index), docs, n_probes=ROUNDS, seed=MODES.index(mode)
    )
    assert report.violations == 0 and report.hits_checked > ROUNDS
    assert probes(report) >= 100_000
