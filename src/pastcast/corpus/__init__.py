"""The dated corpus: cutoff-enforcing backends, opened by spec through one registry, and the
conformance checks they must pass (loaded when first used). Each backend and the sources live in
their own sub-package, loaded by the registries on first use: ``embedded`` (the BM25 index),
``dense``, ``postgres``, ``sharded``, ``sources`` (document readers), ``feeds`` (live feeds)."""

from __future__ import annotations

from pastcast.corpus._filter import DocType, SearchFilter
from pastcast.corpus._identity import content_digest
from pastcast.corpus._open import (
    backends,
    is_database_url,
    one_line,
    open_backend,
    retrieval_modes,
    split_schema,
)
from pastcast.corpus._protocol import (
    CorpusBackend,
    DocumentNotVisible,
    OpenedCorpus,
    SearchHit,
    ThreadedBackend,
    corpus_identity,
)
from pastcast.corpus._text import STOPWORDS, tokenize, tokenize_utf8
from pastcast.lazy import lazy_exports
from pastcast.records import CorpusIdentity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.corpus._build_report import CorpusBuildReport
    from pastcast.corpus._conformance import (
        EquivalenceReport,
        LeakageError,
        LeakageReport,
        check_as_of_equivalence,
        check_no_leakage,
    )
    from pastcast.corpus._conformance_filters import FilterReport, check_search_filters
    from pastcast.corpus._conformance_threads import ThreadReport, check_thread_lookups

__all__ = [
    "STOPWORDS",
    "CorpusBackend",
    "CorpusBuildReport",
    "CorpusIdentity",
    "DocType",
    "DocumentNotVisible",
    "EquivalenceReport",
    "FilterReport",
    "LeakageError",
    "LeakageReport",
    "OpenedCorpus",
    "SearchFilter",
    "SearchHit",
    "ThreadReport",
    "ThreadedBackend",
    "backends",
    "check_as_of_equivalence",
    "check_no_leakage",
    "check_search_filters",
    "check_thread_lookups",
    "content_digest",
    "corpus_identity",
    "is_database_url",
    "one_line",
    "open_backend",
    "retrieval_modes",
    "split_schema",
    "tokenize",
    "tokenize_utf8",
]

__getattr__, __dir__ = lazy_exports(__name__)
