"""Fixtures for the corpus tests."""

from __future__ import annotations

import pytest
from corpus_synth import make_docs
from pg_server import pg_url  # noqa: F401  (one PostgreSQL server for the whole session)

from _dask_cluster import dask_address  # noqa: F401  (one Dask cluster for the whole session)
from pastcast.records import Document


@pytest.fixture(scope="session")
def docs() -> list[Document]:
    return make_docs(300)
