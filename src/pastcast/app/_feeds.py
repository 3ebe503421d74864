"""Live feeds into the corpus: one fetch round (``fetch_feeds``), or rounds on a schedule
(``follow_feeds``), into a spool folder that ``build_corpus("feed:SPOOL")`` indexes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx

from pastcast.app._fields import as_field
from pastcast.corpus.feeds import FeedRound, SpoolBusy, fetch_round, read_feeds_file
from pastcast.errors import FieldError
from pastcast.owned import claim_dir

__all__ = ["fetch_feeds", "follow_feeds"]

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
    clock: Callable[[], datetime] = _now,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[FeedRound]:
    """Fetch rounds ``interval`` seconds apart (start to start), ``rounds`` of them or until
    stopped; the feeds file is read again each round, so an edit takes effect at the next."""
    if interval <= 0:
        raise FieldError("interval", f"expected a positive number of seconds, got {interval}")
    done = 0
    while rounds is None or done < rounds:
        started = time.monotonic()
        yield fetch_feeds(feeds, spool, clock=clock, client=client, sleep=sleep)
        done += 1
        if rounds is None or done < rounds:
            sleep(max(0.0, interval - (time.monotonic() - started)))
