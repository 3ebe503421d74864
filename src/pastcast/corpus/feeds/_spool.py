"""Appending to a feed spool, crash-safe and idempotent, and the per-feed fetch state
(docs/corpus.md, "Live feeds": the spool)."""

from __future__ import annotations

import fcntl
import json
import mmap
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pastcast import safejson
from pastcast.atomic import fsync_dir, write_atomic
from pastcast.corpus.sources import FeedItem, read_feed_spool

STATE_NAME = "state.json"
LOCK_NAME = ".lock"


class SpoolBusy(RuntimeError):
    """Another process is writing to the spool."""


@dataclass
class Known:
    """What the spool holds of one item (one feed's key): its versions' digests."""

    first_seen: datetime
    digests: set[str] = field(default_factory=set)
    versions: int = 0


@dataclass(frozen=True)
class FeedState:
    etag: str | None = None
    last_modified: str | None = None


def _cut_partial_tail(path: Path) -> None:
    """Drop a last line without its newline (an append a crash cut short)."""
    with path.open("r+b") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[-1:] == b"\n":
                return
            keep = data.rfind(b"\n") + 1  # searched from the end, in C
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())


class SpoolWriter:
    """The spool folder opened for appending (its lock held until ``close``)."""

    def __init__(self, spool: Path) -> None:
        self.spool = spool
        self._lock: IO[bytes] = (spool / LOCK_NAME).open("ab")
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise SpoolBusy(f"{spool}: another fetch is writing to this spool") from None
        self.known: dict[tuple[str, str], Known] = {}
        self.latest_seen: datetime | None = None
        for item in read_feed_spool(spool):
            self._learn(item)

    def _learn(self, item: FeedItem) -> None:
        known = self.known.setdefault((item.feed, item.key), Known(item.first_seen))
        known.digests.add(item.digest)
        known.versions = max(known.versions, item.version)
        if self.latest_seen is None or item.first_seen > self.latest_seen:
            self.latest_seen = item.first_seen

    def append(self, items: list[FeedItem]) -> None:
        """Write ``items`` to their days' files, each file's lines in one write, fsynced."""
        by_file: dict[Path, list[str]] = {}
        for item in items:
            name = f"items-{item.first_seen.date().isoformat()}.jsonl"
            by_file.setdefault(self.spool / name, []).append(item.model_dump_json() + "\n")
        for path, lines in by_file.items():
            created = not path.exists()
            if not created:
                _cut_partial_tail(path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                data = "".join(lines).encode("utf-8")
                view = memoryview(data)
                while view:  # a short write continues; a crash leaves a tail readers skip
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                fsync_dir(self.spool)
        for item in items:
            self._learn(item)

    def state(self) -> dict[str, FeedState]:
        path = self.spool / STATE_NAME
        try:
            data: Any = safejson.loads(path.read_bytes())
        except (OSError, json.JSONDecodeError):  # none yet, or unreadable
            return {}  # only a shortcut: a full fetch rebuilds it
        feeds = data.get("feeds") if isinstance(data, dict) else None
        out = {}
        for name, entry in (feeds or {}).items():
            if isinstance(entry, dict):
                etag, modified = entry.get("etag"), entry.get("last_modified")
                out[name] = FeedState(
                    etag if isinstance(etag, str) else None,
                    modified if isinstance(modified, str) else None,
                )
        return out

    def save_state(self, state: dict[str, FeedState]) -> None:
        feeds = {
            name: {"etag": s.etag, "last_modified": s.last_modified}
            for name, s in sorted(state.items())
        }
        write_atomic(self.spool / STATE_NAME, json.dumps({"feeds": feeds}, indent=1) + "\n")

    def close(self) -> None:
        self._lock.close()

    def __enter__(self) -> SpoolWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
