"""Directories pastcast makes carry a marker file, and only such a directory is ever replaced.

An index, a dataset or the embedded world's own index is written to a temporary sibling with
the marker (``.pastcast-made``: which kind of directory it is) and renamed into place. Replacing
an existing path is allowed only when it is an empty directory or a directory whose marker
names the same kind: never a user's folder, a file, or an index some other command built.
"""

from __future__ import annotations

import json
from pathlib import Path

from pastcast import safejson

__all__ = ["MARKER", "check_replaceable", "made_kind", "mark"]

MARKER = ".pastcast-made"


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
