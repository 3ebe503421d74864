"""Live document feeds: RSS 2.0 and Atom feeds (URLs or files) and JSONL drop folders fetched
into a dated spool that the ``feed:`` source reads, so the corpus grows while it is used and
nothing a feed backdates enters an earlier cutoff than when pastcast first saw it."""

from pastcast.corpus.feeds._config import read_feeds_file
from pastcast.corpus.feeds._round import FeedReport, FeedRound, fetch_round
from pastcast.corpus.feeds._spool import SpoolBusy

__all__ = ["FeedReport", "FeedRound", "SpoolBusy", "fetch_round", "read_feeds_file"]
