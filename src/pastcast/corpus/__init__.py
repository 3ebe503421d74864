"""The dated corpus: cutoff-enforcing backends and the conformance check they must pass."""

from pastcast.corpus._conformance import (
    EquivalenceReport,
    LeakageError,
    LeakageReport,
    adversarial_cutoffs,
    check_as_of_equivalence,
    check_no_leakage,
)
from pastcast.corpus._embedded import EmbeddedIndex, not_visible_message
from pastcast.corpus._jsonl import DocumentFormatError, LoadReport, read_jsonl_documents
from pastcast.corpus._postgres import PostgresBackend  # needs the "postgres" extra to connect
from pastcast.corpus._protocol import CorpusBackend, DocumentNotVisible, SearchHit
from pastcast.corpus._tokenize import STOPWORDS, tokenize
from pastcast.corpus._wcep import WcepReport, day_timestamp, read_wcep

__all__ = [
    "STOPWORDS",
    "CorpusBackend",
    "DocumentFormatError",
    "DocumentNotVisible",
    "EmbeddedIndex",
    "EquivalenceReport",
    "LeakageError",
    "LeakageReport",
    "LoadReport",
    "PostgresBackend",
    "SearchHit",
    "WcepReport",
    "adversarial_cutoffs",
    "check_as_of_equivalence",
    "check_no_leakage",
    "day_timestamp",
    "not_visible_message",
    "read_jsonl_documents",
    "read_wcep",
    "tokenize",
]
