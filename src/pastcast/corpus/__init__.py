"""The dated corpus: cutoff-enforcing backends and the conformance check they must pass."""

from pastcast.corpus._ccnews import CCNewsReport, WarcMissing, ccnews_pages, read_ccnews
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
from pastcast.corpus._dumps import ZstdMissing
from pastcast.corpus._embedded import EmbeddedIndex, not_visible_message
from pastcast.corpus._jsonl import DocumentFormatError, LoadReport, read_jsonl_documents
from pastcast.corpus._parquet import (
    ARTICLE_COLUMNS,
    ArticleTableError,
    ArticleTableReport,
    read_article_table,
)
from pastcast.corpus._postgres import (  # needs the "postgres" extra to connect
    PostgresBackend,
    redact_url,
)
from pastcast.corpus._protocol import (
    CorpusBackend,
    DocumentNotVisible,
    SearchHit,
    ThreadedBackend,
)
from pastcast.corpus._reddit import RedditFilters, RedditReport, read_reddit
from pastcast.corpus._tokenize import STOPWORDS, tokenize
from pastcast.corpus._wcep import WcepReport, day_timestamp, read_wcep

__all__ = [
    "ARTICLE_COLUMNS",
    "RRF_K",
    "STOPWORDS",
    "ArticleTableError",
    "ArticleTableReport",
    "CCNewsReport",
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
    "RedditFilters",
    "RedditReport",
    "SearchHit",
    "ThreadedBackend",
    "WarcMissing",
    "WcepReport",
    "ZstdMissing",
    "adversarial_cutoffs",
    "canonical_url",
    "ccnews_pages",
    "check_as_of_equivalence",
    "check_no_leakage",
    "choose_timestamp",
    "clean_pages",
    "day_timestamp",
    "not_visible_message",
    "quality_problem",
    "read_article_table",
    "read_ccnews",
    "read_jsonl_documents",
    "read_reddit",
    "read_wcep",
    "redact_url",
    "tokenize",
]
