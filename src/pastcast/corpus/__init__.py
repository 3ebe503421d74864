"""The dated corpus: cutoff-enforcing backends and the conformance check they must pass."""

from pastcast.corpus._clean import (
    CleanedPage,
    CleanReport,
    Deduplicator,
    RawPage,
    canonical_url,
    choose_timestamp,
    clean_pages,
    quality_problem,
)
from pastcast.corpus._conformance import (
    EquivalenceReport,
    LeakageError,
    LeakageReport,
    adversarial_cutoffs,
    check_as_of_equivalence,
    check_no_leakage,
)
from pastcast.corpus._dense import RRF_K, DenseIndex, Embedder, HybridIndex, MiniLMEmbedder
from pastcast.corpus._embedded import EmbeddedIndex, not_visible_message
from pastcast.corpus._jsonl import DocumentFormatError, LoadReport, read_jsonl_documents
from pastcast.corpus._postgres import (
    PostgresBackend,
    redact_url,
)  # needs the "postgres" extra to connect
from pastcast.corpus._protocol import CorpusBackend, DocumentNotVisible, SearchHit
from pastcast.corpus._tokenize import STOPWORDS, tokenize
from pastcast.corpus._wcep import WcepReport, day_timestamp, read_wcep

__all__ = [
    "RRF_K",
    "STOPWORDS",
    "CleanReport",
    "CleanedPage",
    "CorpusBackend",
    "Deduplicator",
    "DenseIndex",
    "DocumentFormatError",
    "DocumentNotVisible",
    "EmbeddedIndex",
    "Embedder",
    "EquivalenceReport",
    "HybridIndex",
    "LeakageError",
    "LeakageReport",
    "LoadReport",
    "MiniLMEmbedder",
    "PostgresBackend",
    "RawPage",
    "SearchHit",
    "WcepReport",
    "adversarial_cutoffs",
    "canonical_url",
    "check_as_of_equivalence",
    "check_no_leakage",
    "choose_timestamp",
    "clean_pages",
    "day_timestamp",
    "not_visible_message",
    "quality_problem",
    "read_jsonl_documents",
    "read_wcep",
    "redact_url",
    "tokenize",
]
