"""The PostgreSQL + pgvector backend (docs/postgres.md) and a local server for tests and
benchmarks. Needs the ``postgres`` extra to connect."""

from pastcast.corpus.postgres._backend import PostgresBackend
from pastcast.corpus.postgres._server import local_postgres

__all__ = ["PostgresBackend", "local_postgres"]
