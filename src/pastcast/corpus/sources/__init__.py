"""Corpus sources: readers that turn dumps and archives into dated ``Document`` records
(JSONL, feed spools, the Wikipedia current-events archive, Reddit dumps, Parquet article
tables, CC-News), with crawl cleaning, the hindsight screen and the content screen applied when
a corpus is built; ``sources`` names them for ``open_source``.

The package imports the registry and the screens; a reader's module is imported when its source
is first opened (the built-in sources are registered by reference) or one of its names below is
first used."""

from __future__ import annotations

from pastcast.corpus.sources._allow import allow_sources, read_allow_list, source_matches
from pastcast.corpus.sources._dating import (
    CRAWL_DATED,
    DATING_NAME,
    DATING_RULES,
    DatingReport,
    DatingRule,
    crawl_dated,
    read_dating,
    with_dating,
)
from pastcast.corpus.sources._hindsight import ContentScreen, later_date_mention, screen_document
from pastcast.corpus.sources._registry import SideFile, SourceRun, open_source, sources
from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.corpus.sources._ccnews import CCNewsReport, WarcMissing, ccnews_pages, read_ccnews
    from pastcast.corpus.sources._clean import (
        CleanedPage,
        CleanReport,
        Deduplicator,
        RawPage,
        canonical_url,
        choose_timestamp,
        clean_pages,
        quality_problem,
    )
    from pastcast.corpus.sources._dumps import ZstdMissing, check_readable, dump_files
    from pastcast.corpus.sources._feed import (
        DateProvenance,
        FeedItem,
        read_feed_spool,
        spool_documents,
        spool_files,
    )
    from pastcast.corpus.sources._htmlmeta import PageMeta, parse_html
    from pastcast.corpus.sources._jsonl import LoadReport, read_jsonl_documents
    from pastcast.corpus.sources._parquet import (
        ARTICLE_COLUMNS,
        ArticleTableReport,
        read_article_table,
    )
    from pastcast.corpus.sources._reddit import RedditFilters, RedditReport, read_reddit
    from pastcast.corpus.sources._wcep import WcepReport, day_timestamp, read_wcep

__all__ = [
    "ARTICLE_COLUMNS",
    "CRAWL_DATED",
    "DATING_NAME",
    "DATING_RULES",
    "ArticleTableReport",
    "CCNewsReport",
    "CleanReport",
    "CleanedPage",
    "ContentScreen",
    "DateProvenance",
    "DatingReport",
    "DatingRule",
    "Deduplicator",
    "FeedItem",
    "LoadReport",
    "PageMeta",
    "RawPage",
    "RedditFilters",
    "RedditReport",
    "SideFile",
    "SourceRun",
    "WarcMissing",
    "WcepReport",
    "ZstdMissing",
    "allow_sources",
    "canonical_url",
    "ccnews_pages",
    "check_readable",
    "choose_timestamp",
    "clean_pages",
    "crawl_dated",
    "day_timestamp",
    "dump_files",
    "later_date_mention",
    "open_source",
    "parse_html",
    "quality_problem",
    "read_allow_list",
    "read_article_table",
    "read_ccnews",
    "read_dating",
    "read_feed_spool",
    "read_jsonl_documents",
    "read_reddit",
    "read_wcep",
    "screen_document",
    "source_matches",
    "sources",
    "spool_documents",
    "spool_files",
    "with_dating",
]

_WHERE: dict[str, str] = {
    "ARTICLE_COLUMNS": "pastcast.corpus.sources._parquet",
    "ArticleTableReport": "pastcast.corpus.sources._parquet",
    "CCNewsReport": "pastcast.corpus.sources._ccnews",
    "CleanReport": "pastcast.corpus.sources._clean",
    "CleanedPage": "pastcast.corpus.sources._clean",
    "DateProvenance": "pastcast.corpus.sources._feed",
    "Deduplicator": "pastcast.corpus.sources._clean",
    "FeedItem": "pastcast.corpus.sources._feed",
    "LoadReport": "pastcast.corpus.sources._jsonl",
    "PageMeta": "pastcast.corpus.sources._htmlmeta",
    "RawPage": "pastcast.corpus.sources._clean",
    "RedditFilters": "pastcast.corpus.sources._reddit",
    "RedditReport": "pastcast.corpus.sources._reddit",
    "WarcMissing": "pastcast.corpus.sources._ccnews",
    "WcepReport": "pastcast.corpus.sources._wcep",
    "ZstdMissing": "pastcast.corpus.sources._dumps",
    "canonical_url": "pastcast.corpus.sources._clean",
    "ccnews_pages": "pastcast.corpus.sources._ccnews",
    "check_readable": "pastcast.corpus.sources._dumps",
    "choose_timestamp": "pastcast.corpus.sources._clean",
    "clean_pages": "pastcast.corpus.sources._clean",
    "day_timestamp": "pastcast.corpus.sources._wcep",
    "dump_files": "pastcast.corpus.sources._dumps",
    "parse_html": "pastcast.corpus.sources._htmlmeta",
    "quality_problem": "pastcast.corpus.sources._clean",
    "read_article_table": "pastcast.corpus.sources._parquet",
    "read_ccnews": "pastcast.corpus.sources._ccnews",
    "read_feed_spool": "pastcast.corpus.sources._feed",
    "read_jsonl_documents": "pastcast.corpus.sources._jsonl",
    "read_reddit": "pastcast.corpus.sources._reddit",
    "read_wcep": "pastcast.corpus.sources._wcep",
    "spool_documents": "pastcast.corpus.sources._feed",
    "spool_files": "pastcast.corpus.sources._feed",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
