"""The dated corpus: cutoff-enforcing backends and the conformance check they must pass."""

from pastcast.corpus._protocol import CorpusBackend, DocumentNotVisible, SearchHit

__all__ = ["CorpusBackend", "DocumentNotVisible", "SearchHit"]
