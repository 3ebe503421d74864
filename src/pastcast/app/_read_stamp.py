"""What a corpus build reads, as a ``ReadStamp``: a build cut short after its read phase skips
it when run again on the same input with the same options (``corpus.embedded._read_reuse``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pastcast import __version__
from pastcast.app._plans import CorpusBuildPlan
from pastcast.corpus.embedded import ReadStamp
from pastcast.corpus.sources import SideFile, SourceRun

__all__ = ["read_stamp"]

# The plan's fields that decide which documents are spooled, and how.
_READ_FIELDS = (
    "source",
    "lenient",
    "since",
    "until",
    "include_flagged",
    "allow_source",
    "allow_sources_file",
    "quality",
    "require_dates",
)


def _fingerprint(path: Path) -> list[tuple[str, int, int]]:
    """Every file under ``path`` (or ``path`` itself): name, size, modification time (ns)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = []
    for f in files:
        st = f.stat()
        out.append(
            (f.relative_to(path).as_posix() if f != path else "", st.st_size, st.st_mtime_ns)
        )
    return out


def read_stamp(
    plan: CorpusBuildPlan, path: str, allowed: list[str], run: SourceRun
) -> ReadStamp | None:
    """The stamp of ``run``, read from ``path`` as ``plan`` says (``allowed``: its allow-list,
    the file's names included); None where the input is not files on disk (nothing to
    fingerprint: the read phase always runs). A restore replaces ``run``'s report and side
    files with those the read phase kept."""
    source = Path(path)
    if not source.exists():
        return None
    what = plan.model_dump(mode="json", include=set(_READ_FIELDS))
    what.update(allowed=allowed, files=_fingerprint(source), version=__version__)
    key = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def save(folder: Path) -> dict[str, Any]:
        for side in run.side_files:
            side.handle.close()  # complete now: every document is read
            shutil.copyfile(side.path, folder / side.name)
        return {
            "skipped": run.skipped(),
            "lines": run.report_lines(),
            "side": [[side.name, side.what] for side in run.side_files],
        }

    def restore(folder: Path, saved: dict[str, Any]) -> None:
        run.discard()  # this run's side files, empty: the read ones come back instead
        sides = []
        for name, what in saved["side"]:
            fd, copy = tempfile.mkstemp(prefix=".pastcast-", suffix=f".{name}")
            os.close(fd)
            shutil.copyfile(folder / name, copy)
            sides.append(SideFile(name, Path(copy), open(copy, "a", encoding="utf-8"), what))  # noqa: SIM115
        skipped, lines = dict(saved["skipped"]), list(saved["lines"])
        run.side_files, run.skipped, run.report_lines = tuple(sides), lambda: skipped, lambda: lines

    return ReadStamp(key, save, restore)
