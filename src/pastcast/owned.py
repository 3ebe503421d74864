"""Directories pastcast makes carry a marker file, and only such a directory is ever replaced or
written into; a file pastcast writes where the user names one never replaces anything.

An index, a dataset or the embedded world's own index is written to a temporary sibling with
the marker (``.pastcast-made``: which kind of directory it is) and renamed into place. Replacing
an existing path is allowed only when it is an empty directory or a directory whose marker
names the same kind: never a user's folder, a file, or an index some other command built. A
folder a command writes its files into (a report, a demo, a simulation) is claimed the same way
(``claim_dir``). A single file named by the user (a tool server's episode record) is written
only where nothing is (``write_new_file``). What pastcast keeps for itself between commands
(distilled models, judgements, measured cutoffs) lives under one cache folder (``cache_root``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from pastcast import safejson

__all__ = [
    "MARKER",
    "cache_root",
    "check_makeable",
    "check_new_file",
    "check_replaceable",
    "claim_dir",
    "made_kind",
    "mark",
    "write_new_file",
]

MARKER = ".pastcast-made"


def cache_root() -> Path:
    """pastcast's cache folder: ``$PASTCAST_CACHE_DIR``, else ``$XDG_CACHE_HOME/pastcast``, else
    ``~/.cache/pastcast``."""
    own = os.environ.get("PASTCAST_CACHE_DIR")
    if own:
        return Path(own)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pastcast"


def mark(directory: Path, kind: str) -> None:
    """Record that pastcast made ``directory`` as a ``kind`` (``index``, ``dataset``, ...)."""
    text = json.dumps({"made_by": "pastcast", "kind": kind}) + "\n"
    (Path(directory) / MARKER).write_text(text, encoding="utf-8")


def made_kind(directory: Path) -> str | None:
    """The kind pastcast made ``directory`` as, or None (no marker, or not a directory)."""
    try:
        data = safejson.loads((Path(directory) / MARKER).read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("made_by") == "pastcast":
        kind = data.get("kind")
        return kind if isinstance(kind, str) else None
    return None


def check_replaceable(target: Path, kind: str) -> None:
    """Return if ``target`` may be replaced by a new ``kind``: it is absent, an empty directory,
    or a directory pastcast made as a ``kind``. Otherwise ``FileExistsError`` (one line)."""
    target = Path(target)
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        raise FileExistsError(f"{target}: exists and is not a directory; not replacing it")
    found = made_kind(target)
    if found == kind:
        return
    if found is None:
        if not any(target.iterdir()):
            return  # an empty folder: nothing to lose
        raise FileExistsError(
            f"{target}: exists and was not made by pastcast (no {MARKER} marker); not replacing it"
        )
    raise FileExistsError(f"{target}: holds a pastcast {found}, not a {kind}; not replacing it")


def claim_dir(directory: Path, kind: str) -> Path:
    """Make ``directory`` the folder a command writes its ``kind`` of output into: made and
    marked if absent or empty, taken as it is if pastcast made it as a ``kind``. Otherwise
    ``FileExistsError`` (one line): a folder pastcast did not make or made for something else,
    or something there that is not a folder. Other ``OSError``s are the file system's."""
    directory = Path(directory)
    if directory.is_dir():
        found = made_kind(directory)
        if found != kind and any(directory.iterdir()):
            what = "was not made by pastcast" if found is None else f"holds a pastcast {found}"
            raise FileExistsError(f"{directory}: {what}; not writing {kind} output into it")
    elif directory.exists() or directory.is_symlink():
        raise FileExistsError(f"{directory}: exists and is not a folder")
    directory.mkdir(parents=True, exist_ok=True)
    mark(directory, kind)
    return directory


def check_makeable(path: Path) -> Path:
    """The nearest folder above ``path`` that exists, where the folders missing in between can
    be made when ``path`` is written: checked without making any, so a command refused later
    leaves none behind. ``NotADirectoryError`` (one line) when something there is not a
    folder."""
    above = Path(path).parent
    while not (above.exists() or above.is_symlink()):
        above = above.parent
    if not above.is_dir():
        raise NotADirectoryError(f"{path}: cannot make its folder ({above} is not a folder)")
    return above


def check_new_file(path: Path) -> None:
    """Return if nothing is at ``path`` (not even a link to nothing) and a file can be made in
    its folder (made when the file is written), before any work is done; ``FileExistsError``
    (one line) when something is there, the file system's ``OSError`` when its folder cannot be
    made or written."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        raise FileExistsError(f"{path}: exists; not replacing it (name a new file)")
    probe = _aside(check_makeable(path) / path.name)
    probe.touch(exist_ok=False)  # a read-only folder is found now, not after the work
    probe.unlink()


def _aside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.new")


def write_new_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` only if nothing is there: written complete beside it, fsynced,
    then linked into place, so nothing that appeared meanwhile is replaced and the file is never
    seen half-written. If something did appear, ``FileExistsError`` names the file beside it
    that keeps ``data``; on any other failure nothing is left behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = _aside(path)
    try:
        with aside.open("xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(aside, path)  # fails if anything is at path, a link to nothing included
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: create exclusively instead
            with path.open("xb") as fh:
                fh.write(aside.read_bytes())
                fh.flush()
                os.fsync(fh.fileno())
    except FileExistsError:
        if path.exists() or path.is_symlink():
            raise FileExistsError(
                f"{path}: appeared while pastcast was working; not replacing it (kept in {aside})"
            ) from None
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            aside.unlink()
        raise
    aside.unlink()
