"""Live document feeds: RSS 2.0 and Atom feeds (URLs or files) and JSONL drop folders fetched
into a dated spool that the ``feed:`` source reads, so the corpus grows while it is used and
nothing a feed backdates enters an earlier cutoff than when pastcast first saw it."""

from pastcast.corpus.feeds._config import FeedConfig, FeedsFile, read_feeds_file
from pastcast.corpus.feeds._fetch import FeedFetchError, Fetched, fetch_body
from pastcast.corpus.feeds._round import FeedReport, FeedRound, date_item, fetch_round
from pastcast.corpus.feeds._spool import SpoolBusy, SpoolWriter
from pastcast.corpus.feeds._xml import RawItem, parse_date, parse_feed

__all__ = [
    "FeedConfig",
    "FeedFetchError",
    "FeedReport",
    "FeedRound",
    "FeedsFile",
    "Fetched",
    "RawItem",
    "SpoolBusy",
    "SpoolWriter",
    "date_item",
    "fetch_body",
    "fetch_round",
    "parse_date",
    "parse_feed",
    "read_feeds_file",
]
