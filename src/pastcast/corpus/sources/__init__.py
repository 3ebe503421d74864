"""Corpus sources: readers that turn dumps and archives into dated ``Document`` records, with
crawl cleaning and the screens; ``sources`` names them for ``open_source``. A reader's module is
imported when its source is first opened or one of its names is first used."""

from __future__ import annotations

from pastcast.corpus.sources._allow import allow_sources, read_allow_list
from pastcast.corpus.sources._dating import (
    DATING_NAME,
    DATING_RULES,
    DatingReport,
    DatingRule,
    read_dating,
    with_dating,
)
from pastcast.corpus.sources._hindsight import ContentScreen, later_date_mention, screen_document
from pastcast.corpus.sources._registry import SideFile, SourceRun, open_source, sources
from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.corpus.sources._ccnews import CCNewsReport, read_ccnews
    from pastcast.corpus.sources._clean import CleanedPage, CleanReport, RawPage, clean_pages
    from pastcast.corpus.sources._feed import DateProvenance, FeedItem, read_feed_spool
    from pastcast.corpus.sources._jsonl import LoadReport, read_jsonl_documents
    from pastcast.corpus.sources._parquet import read_article_table
    from pastcast.corpus.sources._reddit import RedditFilters, RedditReport, read_reddit
    from pastcast.corpus.sources._wcep import read_wcep

__all__ = [
    "DATING_NAME",
    "DATING_RULES",
    "CCNewsReport",
    "CleanReport",
    "CleanedPage",
    "ContentScreen",
    "DateProvenance",
    "DatingReport",
    "DatingRule",
    "FeedItem",
    "LoadReport",
    "RawPage",
    "RedditFilters",
    "RedditReport",
    "SideFile",
    "SourceRun",
    "allow_sources",
    "clean_pages",
    "later_date_mention",
    "open_source",
    "read_allow_list",
    "read_article_table",
    "read_ccnews",
    "read_dating",
    "read_feed_spool",
    "read_jsonl_documents",
    "read_reddit",
    "read_wcep",
    "screen_document",
    "sources",
    "with_dating",
]

__getattr__, __dir__ = lazy_exports(__name__)
