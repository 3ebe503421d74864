"""Small text inputs named on the command line (plans, filter files, allow-lists), read safely.

A path may name anything: opening a FIFO for reading waits for a writer forever, and a device
never ends. ``read_text_file`` opens without blocking, refuses what is not a regular file
(``NotRegularFile``, an ``OSError`` that the readers' existing one-line errors already cover)
and only then reads.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["package_toml", "read_text_file"]


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a folder, not a file."""


def read_text_file(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of the regular file ``path``; ``NotRegularFile`` for anything else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise NotRegularFile(errno.EINVAL, kind, str(path))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "r", encoding=encoding) as f:
            fd = -1  # closed by the file object from here on
            return f.read()
    finally:
        if fd >= 0:
            os.close(fd)


def package_toml(package: str, name: str) -> dict[str, Any]:
    """The TOML data file ``name`` shipped inside ``package`` (presets, word lists, vendors'
    tables), read as UTF-8 whatever the machine's locale."""
    import tomllib
    from importlib import resources

    return tomllib.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
