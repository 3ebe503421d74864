"""Opening line-oriented dump files, plain or compressed, as text streams."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import io
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

_SUFFIXES = (".jsonl", ".json", ".ndjson", ".gz", ".zst")


class ZstdMissing(RuntimeError):
    """A ``.zst`` file was given but the ``zstandard`` package is not installed."""


@dataclass
class SkipCounter:
    """Skipped records counted by reason, with where each reason was first seen."""

    counts: Counter[str] = field(default_factory=Counter)
    first_at: dict[str, str] = field(default_factory=dict)

    def add(self, reason: str, where: str) -> None:
        self.counts[reason] += 1
        self.first_at.setdefault(reason, where)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self, what: str) -> list[str]:
        return [
            f"{what} ({reason}): {n} (first at {self.first_at[reason]})"
            for reason, n in sorted(self.counts.items())
        ]


def dump_files(path: Path) -> list[Path]:
    """``path`` itself, or the dump files of a folder in name order (submission files ``RS_*``
    before the others, so comments can take their submission's title)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or folder")
    files = [p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES)]
    if not files:
        raise FileNotFoundError(f"{path}: no dump files ({', '.join(_SUFFIXES)})")
    return sorted(files, key=lambda p: (not p.name.startswith("RS_"), p.name))


def check_readable(path: Path) -> None:
    """Fail early (before any work) when a ``.zst`` file cannot be decompressed here."""
    if path.name.endswith(".zst") and importlib.util.find_spec("zstandard") is None:
        raise ZstdMissing(
            f"{path}: reading .zst needs the 'zstandard' package (pip install zstandard), "
            f"or decompress it first (zstd -d --long=31 {path.name})"
        )


@contextmanager
def open_text(path: Path) -> Iterator[Iterator[str]]:
    """The lines of a plain, ``.gz`` or ``.zst`` file (decompressed as it is read). A compressed
    file that is cut short or damaged is a ``ValueError`` naming it, at the line it ends on."""
    check_readable(path)
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            yield _lines(fh, path, (EOFError, OSError, zlib.error))
    elif path.name.endswith(".zst"):
        zstandard = importlib.import_module("zstandard")
        # Reddit dumps are compressed with a 2 GiB window ("--long=31").
        dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
        with path.open("rb") as raw, dctx.stream_reader(raw) as reader:
            text = io.TextIOWrapper(reader, encoding="utf-8", errors="replace")
            yield _lines(text, path, (EOFError, OSError, zstandard.ZstdError))
    else:
        with path.open(encoding="utf-8", errors="replace") as fh:
            yield _lines(fh, path, (OSError,))


def _lines(stream: TextIO, path: Path, errors: tuple[type[BaseException], ...]) -> Iterator[str]:
    try:
        yield from stream
    except errors as exc:  # gzip's "Compressed file ended before the end-of-stream marker"
        raise ValueError(f"{path}: cut short or damaged ({exc})") from None
