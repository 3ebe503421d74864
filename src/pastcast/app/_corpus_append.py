"""Appending a source's documents to an index directory, read as a build reads them; live feeds
fetched into a spool folder (``build_corpus("feed:SPOOL")`` indexes it) and appended."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx

from pastcast.app._corpus import (
    CorpusBuild,
    Reading,
    _allowed,
    _check_workers,
    _inside,
    build_corpus,
    source_kind,
)
from pastcast.app._fields import as_field
from pastcast.corpus.embedded import (
    DUPLICATES,
    SKIPPED_DUPLICATE,
    Duplicates,
    EmbeddedIndex,
    NewDocuments,
)
from pastcast.corpus.feeds import FeedRound, SpoolBusy, fetch_round, read_feeds_file
from pastcast.corpus.sources import (
    DATING_NAME,
    DATING_RULES,
    DatingReport,
    DatingRule,
    SourceRun,
    read_dating,
)
from pastcast.errors import FieldError
from pastcast.owned import check_makeable, claim_dir
from pastcast.records import Document


def append_corpus(
    index: str | Path,
    source: str,
    *,
    duplicates: Duplicates = "refuse",
    lenient: bool = False,
    since: date | None = None,
    until: date | None = None,
    include_flagged: bool = False,
    allow_source: Sequence[str] = (),
    allow_sources_file: str | Path | None = None,
    quality: Sequence[str] = (),
    require_dates: DatingRule | None = None,
    progress: bool = False,
    workers: int | None = None,
) -> CorpusBuild:
    """Add the documents of ``source`` (``KIND:PATH``) to the index directory ``index``, read
    as ``build_corpus`` reads a source (docs/corpus.md, "Appends"). An id the index holds, or one
    repeated in the source, is refused naming it (``duplicates="refuse"``, nothing is changed)
    or skipped and counted (``"skip"``). ``FieldError`` naming the field."""
    kind, path = source_kind(source)
    target = Path(index)
    try:
        current = EmbeddedIndex.open(target)
    except (OSError, ValueError) as exc:
        raise FieldError("index", f"{target}: not a readable index directory ({exc})") from None
    if _inside(path, target):
        raise FieldError("source", f"{path} is inside the index {target}")
    if duplicates not in DUPLICATES:
        raise FieldError("duplicates", f"expected refuse or skip, got {duplicates!r}")
    recorded = read_dating(target) or {}
    rule = str(recorded.get("require", "any"))
    if require_dates is not None and require_dates != rule:
        raise FieldError(
            "require_dates",
            f"the index was built with require {rule}; appends read the source as it did",
        )
    if rule not in DATING_RULES:
        raise FieldError("index", f"{target / DATING_NAME}: unknown require {rule!r}")
    _check_workers(workers)
    allowed = _allowed(allow_source, Path(allow_sources_file) if allow_sources_file else None)
    new = NewDocuments(lambda doc_id: current._ordinal_of(doc_id) is not None, duplicates)
    reading = Reading(kind, path, lenient, since, until, include_flagged, allowed, quality)
    read = _Read()
    run = reading.open(target.parent, rule, stage=lambda docs: new(read(docs)))
    lines: list[str] = []

    def removed() -> dict[str, int]:
        out = {f"malformed: {r}": n for r, n in run.skipped().items()}
        if new.skipped:
            out[SKIPPED_DUPLICATE] = new.skipped
        return out

    try:
        appended = EmbeddedIndex.append(
            run.documents,
            target,
            progress=progress,
            workers=workers,
            removed=removed,
            notes=run.report_lines,
            side_files=lambda work: lines.extend(_side_files(run, target, work)),
        )
    except BaseException as exc:
        run.discard()
        if isinstance(exc, FileExistsError):
            raise FieldError("index", str(exc)) from None
        if isinstance(exc, ValueError | FileNotFoundError) and not isinstance(exc, FieldError):
            raise FieldError("documents", str(exc)) from None
        raise
    lines += run.report_lines()
    if new.skipped:
        lines.append(f"{SKIPPED_DUPLICATE}: {new.skipped}")
    added = len(appended) - len(current)
    return CorpusBuild(added, str(target), dict(run.skipped()), tuple(lines), appended.build_report)


class _Read:
    """Counts what the source gave after its screens and filters: none at all is an error, as
    in a build (a wrong path or allow-list is no append), raised before the index is touched;
    none new after the repeated ids is an append of nothing."""

    def __call__(self, documents: Iterator[Document]) -> Iterator[Document]:
        empty = True
        for doc in documents:
            empty = False
            yield doc
        if empty:
            raise FieldError("source", "no documents to append (after the screens and filters)")


def _side_files(run: SourceRun, index: Path, work: Path) -> list[str]:
    """The run's side files joined to the index's in ``work`` (before the swap): the dating
    counts added up, other files (one line a document) the new lines after the old."""
    lines = []
    for side in run.side_files:
        side.handle.close()
        new = side.path.read_bytes()
        out = work / side.name
        old = out.read_bytes() if out.is_file() else b""
        out.unlink(missing_ok=True)  # a link to the index's file: never written in place
        if side.name == DATING_NAME:
            out.write_text(_added_dating(old, new))
        else:
            out.write_bytes(old + new)
        side.path.unlink(missing_ok=True)
        lines.append(f"{side.what}: {index / side.name}")
    return lines


def _added_dating(old: bytes, new: bytes) -> str:
    """Two ``dating.json`` counts added up, written as a build writes one."""
    parts: list[dict[str, Any]] = [json.loads(b) for b in (old, new) if b.strip()]
    report = DatingReport(parts[-1]["require"])
    for part in parts:
        report.kept += Counter(part.get("dated_by", {}))
        report.excluded += Counter(part.get("excluded", {}))
    return json.dumps(report.as_json(), indent=2) + "\n"


def check_feed_index(index: str | Path) -> None:
    """``index`` as ``index_feed`` takes it, checked before any feed is fetched: an index
    directory to append to, or nothing yet where one can be built. ``FieldError`` naming
    ``index``."""
    target = Path(index)
    if target.exists() or target.is_symlink():
        try:
            EmbeddedIndex.open(target)
        except (OSError, ValueError) as exc:
            raise FieldError("index", f"{target}: not a readable index directory ({exc})") from None
        return
    with as_field("index", NotADirectoryError):
        check_makeable(target)


def index_feed(spool: str | Path, index: str | Path) -> CorpusBuild:
    """A feed spool's items into the index directory ``index``: built from the spool when there
    is no index yet, else the items it does not hold appended (ids already indexed skipped: the
    spool keeps every item it ever fetched). ``FieldError`` naming ``index`` or the source."""
    target, source = Path(index), f"feed:{spool}"
    if not target.exists():
        return build_corpus(source, out=target)
    return append_corpus(target, source, duplicates="skip")


def index_feed_round(spool: str | Path, index: str | Path | None, written: int) -> int | None:
    """After a feed round that wrote ``written`` items: the documents indexed into ``index``
    (``index_feed``), or ``None`` when there is no index or nothing to do. A first round that
    fetched nothing new still builds the index from what the spool already holds."""
    if index is None:
        return None
    fresh = not Path(index).exists() and any(Path(spool).glob("items-*.jsonl"))
    return index_feed(spool, index).indexed if written or fresh else None


SPOOL_KIND = "feed-spool"


def _now() -> datetime:
    return datetime.now(UTC)


def fetch_feeds(
    feeds: str | Path,
    spool: str | Path,
    *,
    clock: Callable[[], datetime] = _now,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> FeedRound:
    """Fetch every feed of the feeds file once into ``spool`` (made and marked if absent; only
    a spool pastcast made is written into). A feed that fails is an error line in the round's
    report; ``FieldError`` naming ``feeds`` or ``spool`` for what stops the whole round."""
    with as_field("feeds"):
        config = read_feeds_file(feeds)
    with as_field("spool", OSError):
        folder = claim_dir(Path(spool), SPOOL_KIND)
    try:
        return fetch_round(config, folder, clock=clock, client=client, sleep=sleep)
    except (SpoolBusy, FieldError) as exc:
        raise FieldError("spool", str(exc)) from None


def follow_feeds(
    feeds: str | Path,
    spool: str | Path,
    *,
    interval: float = 300.0,
    rounds: int | None = None,
) -> Iterator[FeedRound]:
    """Fetch rounds ``interval`` seconds apart (start to start), ``rounds`` of them or until
    stopped; the feeds file is read again each round, so an edit takes effect at the next."""
    if interval <= 0:
        raise FieldError("interval", f"expected a positive number of seconds, got {interval}")
    done = 0
    while rounds is None or done < rounds:
        started = time.monotonic()
        yield fetch_feeds(feeds, spool)
        done += 1
        if rounds is None or done < rounds:
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
