"""Readable copies of binds that the sandbox's user cannot reach: started by root, bubblewrap
resolves binds as the unprivileged user, so a source inside a folder closed to others is mirrored
once per process (hard links where possible, else copies) into a folder readable by all and
writable by root only, and bound at its original path. Mirrors are snapshots taken at first use
and removed when the process exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

_mirrors: dict[str, str] = {}
_lock = threading.Lock()


def open_to_others(path: str) -> bool:
    """Whether ``path`` itself grants others read (and, a folder, search) access."""
    mode = os.stat(path).st_mode
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def reachable_by_others(path: str) -> bool:
    """Whether every folder above ``path`` lets others through."""
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in Path(os.path.realpath(path)).parents)


def _link_or_copy(source: str, dest: str) -> None:
    try:
        os.link(source, dest)
    except OSError:  # another file system, or links refused: a copy
        shutil.copy2(source, dest)


def reachable_source(source: str) -> str:
    """``source`` when others can reach it, else the path of its readable mirror."""
    real = os.path.realpath(source)
    if reachable_by_others(real):
        return real
    with _lock:
        mirror = _mirrors.get(real)
        if mirror is not None and os.path.exists(mirror):
            return mirror
        top = tempfile.mkdtemp(prefix="pastcast-sandbox-mirror-")
        atexit.register(shutil.rmtree, top, True)
        os.chmod(top, 0o755)
        mirror = os.path.join(top, os.path.basename(real) or "root")
        if os.path.isdir(real):
            shutil.copytree(real, mirror, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(real, mirror)
        _mirrors[real] = mirror
        return mirror
