"""Fixtures of the hardening suite: a full disk and a read-only one (small tmpfs mounts, where
this process may mount them)."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def _tmpfs(where: Path, why_not: str) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted at ``where`` (made), unmounted after; skipped with ``why_not``
    where this process may not mount one."""
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(why_not)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (where this process may mount one), already full."""
    why_not = "cannot mount a tmpfs here (needs root); the monkeypatched full disk stands in"
    with _tmpfs(tmp_path / "disk", why_not) as where:
        fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"x" * 4096):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield where


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs holding one folder, ``inside`` (permissions do not stop root)."""
    with _tmpfs(tmp_path / "ro", "cannot mount a tmpfs here (needs root)") as where:
        (where / "inside").mkdir()
        remount = ["mount", "-o", "remount,ro", str(where)]
        if subprocess.run(remount, capture_output=True, check=False).returncode != 0:
            pytest.skip("cannot remount the tmpfs read-only here")
        yield where
