"""Files written whole or not at all: a temporary file beside the target, fsynced, renamed.

A reader (or a resumed run after a crash) finds the old content or the new, never half of one.
The temporary file is in the target's folder, so the rename stays on one file system; it is
named after the target (``.run.header.json.1a2b3c4d.tmp``) and created with the permissions a
plain write would give (the umask's), not the owner-only ones of ``tempfile``. On every failure
(the writer's exception, a full disk, a rename refused) it is removed and the target is left
as it was.

A directory (an index, a dataset) is filled beside its target the same way (``atomic_directory``)
and swapped in by ``replace_directory``: the old one is moved aside, the new one renamed in, the
old one removed, so the path names one whole directory at every moment but between the two
renames.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_directory", "atomic_path", "fsync_dir", "replace_directory", "write_atomic"]

_TRIES = 100


def fsync_dir(path: str | Path) -> None:
    """Flush a folder's entries (a rename into it) to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform without directory handles: the rename is all there is
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reserve(target: Path, suffix: str) -> Path:
    """Create an empty, unused temporary file beside ``target``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TRIES):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp{suffix}")
        try:
            os.close(os.open(tmp, flags, 0o666))
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"{target}: no unused temporary name beside it")


@contextmanager
def atomic_path(target: str | Path, *, suffix: str = "") -> Iterator[Path]:
    """A temporary path to write ``target``'s new content to (an empty file that exists); when
    the block ends without an exception it is fsynced and renamed onto ``target``, otherwise it
    is removed. ``suffix`` ends the temporary name, for writers that add their own extension
    otherwise (``.npy`` for ``numpy.save``)."""
    target = Path(target)
    tmp = _reserve(target, suffix)
    try:
        yield tmp
        with tmp.open("rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def write_atomic(path: str | Path, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Replace ``path``'s content with ``data`` (text is encoded with ``encoding``) atomically;
    returns the path."""
    target = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_path(target) as tmp, tmp.open("wb") as fh:
        fh.write(payload)
    return target


def replace_directory(new: str | Path, target: str | Path) -> None:
    """Rename the directory ``new`` onto ``target``; an existing ``target`` is moved aside first
    (and put back if the rename fails) and removed after."""
    new, target = Path(new), Path(target)
    if not target.exists():
        os.replace(new, target)
    else:
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{secrets.token_hex(4)}")
        os.replace(target, old)
        try:
            os.replace(new, target)
        except BaseException:
            os.replace(old, target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(target.parent)


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """A new empty directory beside ``target`` to fill; when the block ends without an exception
    it replaces ``target`` (``replace_directory``), otherwise it is removed."""
    target = Path(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield tmp
        replace_directory(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
