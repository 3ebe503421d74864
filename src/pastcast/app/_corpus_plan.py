"""The record of a corpus build, apart from the other workflows' plans: the ``corpus`` commands
declare their options with it, and a search need not import curation or the runner."""

from __future__ import annotations

import os
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from pastcast.corpus.sources import DatingRule
from pastcast.records import Record


def _text(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


PathText = Annotated[str, BeforeValidator(_text)]
"""A path or a spec, kept as the text it reads as (a ``Path`` given is written as its text)."""


def _day(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not a date (YYYY-MM-DD): {value!r}") from None


Day = Annotated[date, BeforeValidator(_day)]
"""A calendar day, as ``YYYY-MM-DD`` text (an instant is refused, not cut to its day)."""


StoreBackend = Literal["embedded", "postgres"]
MAX_BUILD_WORKERS = 256
"""More indexing processes than this is a typo, not a machine (each holds a month)."""


class CorpusBuildPlan(Record):
    """A corpus build (``build_corpus``): a source's documents (content screen on unless
    ``include_flagged``), only those of the allowed sources, through the quality filters,
    stored into an index directory or a database schema."""

    source: str
    """KIND:PATH: jsonl:docs.jsonl, wcep:FOLDER, reddit:DUMP_OR_FOLDER, parquet:TABLE_OR_FOLDER,
    ccnews:FILE_OR_FOLDER (JSON lines or WARC), feed:SPOOL or feed-seen:SPOOL (a 'corpus feed'
    spool; feed-seen dates by first sight), world:SEED[,FIELD=VALUE...] (the embedded world's
    documents), or the kind of a source plugin ('pastcast.sources' entry points)"""
    out: PathText | None = None
    """Index directory to write (embedded backend)."""
    backend: StoreBackend = "embedded"
    """embedded (an index directory) or postgres (a database)."""
    url: str | None = None
    """postgres: the database, postgresql://USER@HOST:PORT/DB (a password is better given by
    PGPASSWORD or ~/.pgpass than in the URL, which shell history keeps)."""
    schema_name: str | None = None
    """PostgreSQL: the schema holding the corpus (lowercase identifier; default pastcast, or
    ?schema=NAME in the URL)."""
    overwrite: bool = False
    """Replace an existing index (only one pastcast built)."""
    embedder: str | None = None
    """Also embed the documents with this embedder (registered name, e.g. all-minilm-l6-v2, or
    openai-compatible:MODEL@URL, openai:MODEL; an API key comes from the variable
    ?api_key_env=NAME names) for dense and hybrid retrieval; needs the 'dense' extra. An
    interrupted embedding resumes where it stopped."""
    vectors: PathText | None = None
    """Document vectors computed elsewhere by the embedder's model: a .npy (ids in NAME.ids.txt
    beside it, or vectors-ids) or Parquet (a file or folder; columns id and embedding, e.g. a
    Parquet source's own), checked and kept in the index."""
    vectors_ids: PathText | None = None
    """The ids file of a .npy of vectors (one id a line)."""
    nprobe: int | None = Field(default=None, ge=1)
    """Also train the approximate search's lists now (see 'corpus search --nprobe')."""
    lenient: bool = False
    """jsonl: skip malformed lines (counted by reason)."""
    since: Day | None = None
    """wcep: first day (YYYY-MM-DD)."""
    until: Day | None = None
    """wcep: last day (YYYY-MM-DD)."""
    include_flagged: bool = False
    """Keep documents flagged as possible hindsight: by the content screen (a title or text
    naming a later period, year or date), and for wcep its rewritten days."""
    allow_source: tuple[str, ...] = ()
    """Keep only documents of this source (repeatable): a whole source (reuters.com) or its last
    part (worldnews or r/worldnews for reddit/r/worldnews)."""
    allow_sources_file: PathText | None = None
    """File of source names to keep, one a line (# comments), e.g. Hindcast's 20 subreddits;
    with allow-source, both lists count."""
    quality: tuple[str, ...] = ()
    """Quality filter to apply (repeatable): english, gopher, gopher-repetition, c4, fineweb, or
    a plugin's ('pastcast.quality_filters'); needs the 'curate' extra. Removals are counted in
    the report."""
    require_dates: DatingRule = "any"
    """Which dates documents must carry: any (documents dated only by crawl or fetch time kept,
    counted and flagged in the report), metadata (those left out) or published (only documents
    dated by their publication). Recorded with the index."""
    workers: int | None = Field(default=None, ge=1, le=MAX_BUILD_WORKERS)
    """Processes indexing month partitions side by side (default: the CPU count)."""
    scheduler: str | None = None
    """Dask scheduler (tcp://HOST:PORT) whose workers index the month partitions instead of local
    processes (the 'scale' extra); the index's folder must be on storage they share."""
