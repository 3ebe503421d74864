"""Daily market values reconstructed from the git history of a ForecastBench datasets clone: in
each nightly version of the resolution sets an unresolved market question carries the market's
value of the day before (docs/datasets.md, "Daily series from the nightly history"). Git is
driven as a subprocess: ``git log --raw`` lists each version's blob and one long-lived ``git
cat-file --batch`` streams them, so memory holds one version plus the series.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pastcast.errors import FieldError

RESOLUTION_SETS = "datasets/resolution_sets"
"""Where the upstream repository keeps its resolution sets."""


@dataclass
class NightlyHistory:
    """Values by (source, id) and day, and counts of what was read."""

    values: dict[tuple[str, str], dict[date, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    counts: Counter[str] = field(default_factory=Counter)


def _git(clone: Path, *args: str) -> list[str]:
    return ["git", "-C", str(clone), *args]


_LOG = ("log", "--reverse", "--root", "--no-renames", "--no-abbrev", "--raw", "--diff-filter=AM")
"""Every commit that added or changed a file, oldest first, with the files' blob ids."""


def _versions(clone: Path) -> list[tuple[str, str, str]]:
    """(commit, path, blob) of every added or modified resolution set, oldest first."""
    try:
        out = subprocess.run(
            _git(clone, *_LOG, "--format=commit %H", "--", RESOLUTION_SETS),
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise FieldError("", f"{clone}: cannot run git ({exc})") from None
    if out.returncode != 0:
        first = (out.stderr.strip().splitlines() or ["git log failed"])[0]
        raise FieldError("", f"{clone}: not a readable git clone ({first})")
    versions: list[tuple[str, str, str]] = []
    commit = ""
    for line in out.stdout.splitlines():
        if line.startswith("commit "):
            commit = line[7:].strip()
        elif line.startswith(":"):
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) >= 4 and path.endswith("_resolution_set.json"):
                versions.append((commit, path, parts[3]))
    return versions


def _blobs(clone: Path, shas: list[str]) -> Iterator[bytes]:
    """The content of each blob, in order, from one ``git cat-file --batch`` process."""
    proc = subprocess.Popen(
        _git(clone, "cat-file", "--batch"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for sha in shas:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise FieldError("", f"{clone}: blob {sha}: missing from the clone")
            body = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            yield body
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()


def _rows(body: bytes) -> list[dict[str, Any]] | None:
    try:
        obj = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    rows = obj.get("resolutions") if isinstance(obj, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else None


def read_nightly_history(clone: str | Path, sources: tuple[str, ...]) -> NightlyHistory:
    """Daily values of the unresolved rows of ``sources`` in every version of the resolution sets.

    A version that is not valid JSON is skipped and counted ("unreadable versions"); a row
    without a usable date or a probability is ignored.
    """
    root = Path(clone)
    if not root.is_dir():
        raise FieldError("", f"{root}: no such folder")
    if shutil.which("git") is None:
        raise FieldError("", f"{root}: reading its history needs git on the PATH")
    versions = _versions(root)
    if not versions:
        raise FieldError(
            "", f"{root}: no committed version of {RESOLUTION_SETS}/*_resolution_set.json"
        )
    history = NightlyHistory()
    blobs = list(dict.fromkeys(sha for _, _, sha in versions))  # a blob is read once
    for body in _blobs(root, blobs):
        rows = _rows(body)
        if rows is None:
            history.counts["unreadable versions"] += 1
            continue
        history.counts["versions read"] += 1
        for row in rows:
            if row.get("resolved") is not False or row.get("source") not in sources:
                continue
            qid, when, value = row.get("id"), row.get("resolution_date"), row.get("resolved_to")
            if not isinstance(qid, str) or not isinstance(when, str):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            try:
                day = date.fromisoformat(when[:10])
            except ValueError:
                continue
            if 0.0 <= value <= 1.0:
                history.values[(str(row["source"]), qid)][day].append(float(value))
    history.counts["questions with values"] = len(history.values)
    return history
