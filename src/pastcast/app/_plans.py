"""The records the workflows take: each declares one workflow's work, is read from and written
to a plan file (``read_plan``, ``write_plan``) and is what its output records; its fields'
docstrings are the help of the options that build it (``with_preset``: a preset under it)."""

from __future__ import annotations

import os
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, JsonValue, field_validator

from pastcast.corpus.sources import DatingRule
from pastcast.curate import CurationConfig
from pastcast.cutoff import DayConvention
from pastcast.markets import FilterConfig, filter_config
from pastcast.records import Record
from pastcast.runner import PresetRecord


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


def _listed(value: Any) -> Any:
    return value.split(",") if isinstance(value, str) else value


CURATION_LEGS = ("bm25", "dense")


class CurationPlan(PresetRecord):
    """A question curation (``curate_dataset``): the judge keeps the events of ``dataset`` the
    archive ``corpus`` can answer without giving the answer away (docs/curation.md)."""

    PRESET_STAGE = "curate"
    PRESET_DENSE_LEG = ("retrieval", "embedder")

    dataset: PathText
    """The dataset, as open_dataset reads it."""
    corpus: PathText
    """The archive: an index directory or a PostgreSQL URL (for the world, build one with
    'pastcast corpus build world:SEED --out DIR')."""
    judge: str
    """The judge model spec (openai:NAME, openai-compatible:NAME@URL, local:PATH.gguf,
    local:smollm2, scripted:FILE, or a provider plugin's)."""
    out: PathText
    """Curated dataset directory to write (a new one, or one pastcast made)."""
    retrieval: Annotated[tuple[str, ...], BeforeValidator(_listed)] = CURATION_LEGS
    """Retrieval legs fused by reciprocal rank: bm25,dense (dense needs the 'dense' extra), or
    one of them."""
    embedder: str | None = None
    """The dense leg's embedder (registered name; default: the index's own)."""
    window_days: int | None = Field(default=None, ge=0, le=36500)
    """Only documents this many days before the judging date (0 or none, the default: the whole
    archive before it, as Hindcast retrieves)."""
    config: CurationConfig = CurationConfig()
    max_tokens: int = Field(default=512, ge=16, le=100_000)
    """Most tokens of one judge reply."""
    cache: PathText | None = None
    """Judgement cache folder (default: OUT.judge-cache beside OUT); a repeated request is
    answered from it, so re-curating makes no new model calls."""


class MarketImport(PresetRecord):
    """What every import of resolved markets into a dataset directory declares."""

    PRESET_STAGE = "import"

    out: PathText
    """Dataset directory to write (a new one, or one pastcast wrote)."""
    schedule: str = "causal-dojo"
    split: str | None = None
    """Temporal split T0,T1,T2 (train [T0,T1), eval [T1,T2))."""
    corpus_end: Day | None = None
    """Last corpus day (caps the hindcast t0)."""
    news_corpus: PathText | None = None
    """Corpus (index directory or PostgreSQL URL) whose documents per day feed the dojo
    schedule's news-volume term."""
    filters: dict[str, JsonValue] = Field(default_factory=dict)
    """Market-filter values by name over the defaults (pastcast.markets.FilterConfig; a type's
    faithful-day thresholds as multi.min_trades or a multi table)."""
    day_convention: DayConvention = DayConvention.START_OF_DAY
    """How a scheduled day becomes a cutoff: start_of_day (00:00 UTC, nothing dated that day is
    visible; the default) or inclusive (Forecast-Dojo: the whole day is visible)."""
    keep_late_closes: bool = False
    """Keep markets scheduled to close after the data was collected. They are there only
    because they resolved early, and their close dates say so (docs/audits.md)."""
    drop_sibling_answers: bool = False
    """Drop the steps whose question, background or options name the resolved answer of
    another imported event still open at their cutoff (docs/audits.md)."""

    @field_validator("filters")
    @classmethod
    def _filters(cls, values: dict[str, JsonValue]) -> dict[str, JsonValue]:
        try:
            filter_config(values, where="filters")
        except ValueError as exc:
            raise ValueError(str(exc).removeprefix("filters: ")) from None
        return values

    def filter_config(self) -> FilterConfig:
        return filter_config(self.filters, where="filters")


class ForecastBenchImport(MarketImport):
    """ForecastBench's resolved questions with daily series (``import_forecastbench``)."""

    path_or_url: PathText
    """ForecastBench folder, or a base URL."""
    sources: tuple[str, ...] = ()
    """Keep only this source (repeatable)."""
    files: tuple[str, ...] = ()
    """Extra file to download (relative to the base URL)."""
    cache: PathText | None = None
    """Download folder (default: a temp folder)."""
    history_repo: PathText | None = None
    """A local git clone of github.com/forecastingresearch/forecastbench-datasets: daily series
    rebuilt from the nightly versions of its resolution sets (the published files alone carry
    one price per question set)."""


class PolymarketImport(MarketImport):
    """Resolved Polymarket events, prices and daily trading (``import_polymarket``)."""

    base_url: str = "https://gamma-api.polymarket.com"
    """Gamma API base URL."""
    clob_url: str = "https://clob.polymarket.com"
    """CLOB API base URL."""
    data_url: str = "https://data-api.polymarket.com"
    """Data API base URL (the public trade feed)."""
    trades: bool = True
    """Fetch each market's trades for the faithful-day filter (daily trade counts and share
    volume on the realised leg)."""
    page_size: int = Field(default=100, ge=1)
    """Events per page."""
    max_events: int | None = Field(default=None, ge=1)
    """Stop after this many events."""


StoreBackend = Literal["embedded", "postgres"]
MAX_BUILD_WORKERS = 256
"""More indexing processes than this is a typo, not a machine (each holds a month)."""


class CorpusBuildPlan(Record):
    """A corpus build (``build_corpus``): a source's documents (content screen on unless
    ``include_flagged``), only those of the allowed sources, through the quality filters,
    stored into an index directory or a database schema."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # each field's help on the CLI

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


class ConstructionAuditPlan(Record):
    """A construction audit (``audit_datasets``): can what agents see of how the steps were
    built predict the outcome? (docs/audits.md)"""

    model_config = ConfigDict(use_attribute_docstrings=True)  # each field's help on the CLI

    datasets: tuple[PathText, ...]
    """Dataset specs open_dataset reads; several are pooled (each event kept apart), e.g.
    world:0 world:1 ... for more events."""
    schedules: tuple[str, ...] | None = None
    """Also audit this registered schedule, rebuilt on the same events (repeatable; default:
    every registered schedule)."""
    dataset_only: bool = False
    """Audit only the datasets' own steps."""
    folds: int = Field(default=5, ge=2, le=100)
    """Cross-validation folds (by event)."""
    draws: int = Field(default=2000, ge=100, le=100_000)
    """Bootstrap draws (whole events) for the interval."""
    seed: int = Field(default=0, ge=0)
    """Seed of the folds and the bootstrap."""
    permutations: int = Field(default=500, ge=1, le=100_000)
    """Draws of the permutation null the AUC is judged against."""
    alpha: float = Field(default=0.05, ge=0.0001, le=0.5)
    """Level of the permutation test."""


class RunAuditPlan(Record):
    """A run's audit (``audit_run_log``): what its agents saw, dated and screened, and what they
    were given and wrote (docs/audits.md)."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # each field's help on the CLI

    run_log: PathText
    dataset: PathText | None = None
    """The dataset the run used, for post-cutoff prices and the question's wording (default:
    the embedded world the log names)."""
    corpus: str | None = None
    """The corpus its agents searched: an index directory or a KIND:PATH source, as for 'corpus
    build' (default: the embedded world's documents when the log or the dataset names it)."""
    examples: int | None = Field(default=None, ge=0, le=1_000_000)
    """Findings of each check to list, the first in the log (every one is counted). Default:
    pastcast.audit.EXAMPLES."""
