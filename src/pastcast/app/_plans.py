"""The records the workflows take: each declares one workflow's work, is read from and written
to a plan file (``read_plan``, ``write_plan``), and is what its output records. The command line
builds the same record from its options, a preset filling the fields not given
(``with_preset``)."""

from __future__ import annotations

import os
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, JsonValue, field_validator

from pastcast.corpus.sources import DatingRule
from pastcast.curate import CurationConfig
from pastcast.cutoff import DayConvention
from pastcast.markets import FilterConfig, filter_config
from pastcast.records import Record
from pastcast.runner import PresetRecord

__all__ = [
    "CURATION_LEGS",
    "MAX_BUILD_WORKERS",
    "ConstructionAuditPlan",
    "CorpusBuildPlan",
    "CurationPlan",
    "ForecastBenchImport",
    "MarketImport",
    "PathText",
    "PolymarketImport",
    "RunAuditPlan",
    "StoreBackend",
]


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

    dataset: PathText
    """The dataset, as ``open_dataset`` reads it."""
    corpus: PathText
    """The archive: an index directory or a database URL."""
    judge: str
    """The judge's model spec."""
    out: PathText
    """The curated dataset's folder (a new one, or one pastcast made)."""
    retrieval: Annotated[tuple[str, ...], BeforeValidator(_listed)] = CURATION_LEGS
    """Retrieval legs fused by reciprocal rank (``bm25``, ``dense``; a comma-separated text)."""
    embedder: str | None = None
    """The dense leg's embedder (default: the index's own)."""
    window_days: int | None = Field(default=None, ge=0)
    """Only documents this many days before the judging date (None or 0: the whole archive)."""
    config: CurationConfig = CurationConfig()
    max_tokens: int = Field(default=512, ge=16, le=100_000)
    """Most tokens of one judge reply."""
    cache: PathText | None = None
    """The judgement cache (default: ``OUT.judge-cache`` beside ``out``)."""


class MarketImport(PresetRecord):
    """What every import of resolved markets into a dataset directory declares."""

    PRESET_STAGE = "import"

    out: PathText
    """The dataset directory to write (a new one, or one pastcast wrote)."""
    schedule: str = "causal-dojo"
    """The forecast-date schedule (``pastcast.markets.schedules``)."""
    split: str | None = None
    """A temporal split ``T0,T1,T2`` (train ``[T0,T1)``, eval ``[T1,T2)``)."""
    corpus_end: Day | None = None
    """The corpus's last day (caps the hindcast schedule's t0)."""
    news_corpus: PathText | None = None
    """The corpus whose documents per day feed the dojo schedule's news-volume term."""
    filters: dict[str, JsonValue] = Field(default_factory=dict)
    """Market-filter values by name over the defaults (``pastcast.markets.FilterConfig``; a
    type's faithful-day thresholds as ``multi.min_trades`` or a ``multi`` table)."""
    day_convention: DayConvention = DayConvention.START_OF_DAY
    keep_late_closes: bool = False
    """Keep markets scheduled to close after the data was collected."""
    drop_sibling_answers: bool = False
    """Drop the steps whose text names the answer of another event still open at their
    cutoff."""

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
    """ForecastBench's resolved binary questions with their daily series
    (``import_forecastbench``)."""

    path_or_url: PathText
    """A ForecastBench folder, or a base URL its files are downloaded from."""
    sources: tuple[str, ...] = ()
    """Only these question sources (default: every one)."""
    files: tuple[str, ...] = ()
    """Files to download besides the standard ones (relative to the base URL)."""
    cache: PathText | None = None
    """The download folder (default: a temporary one)."""
    history_repo: PathText | None = None
    """A local clone of the datasets repository: daily series from its nightly versions."""


class PolymarketImport(MarketImport):
    """Resolved Polymarket events with price history and daily trading activity
    (``import_polymarket``)."""

    base_url: str = "https://gamma-api.polymarket.com"
    clob_url: str = "https://clob.polymarket.com"
    data_url: str = "https://data-api.polymarket.com"
    """The public trade feed (``trades``)."""
    trades: bool = True
    """Fetch each market's trades for the faithful-day filter."""
    page_size: int = Field(default=100, ge=1)
    max_events: int | None = Field(default=None, ge=1)


StoreBackend = Literal["embedded", "postgres"]
MAX_BUILD_WORKERS = 256
"""More indexing processes than this is a typo, not a machine (each holds a month)."""


class CorpusBuildPlan(Record):
    """A corpus build (``build_corpus``): a source's documents (content screen on unless
    ``include_flagged``), only those of the allowed sources, through the quality filters,
    stored into an index directory or a database schema."""

    source: str
    """``KIND:PATH`` of a registered source (``pastcast.corpus.sources``)."""
    out: PathText | None = None
    """The index directory (the embedded backend), written atomically; an existing one is
    replaced only with ``overwrite``, and only if pastcast built it."""
    backend: StoreBackend = "embedded"
    url: str | None = None
    """The database (the postgres backend): ``postgresql://USER@HOST:PORT/DB``."""
    schema_name: str | None = None
    """The database schema holding the corpus (default ``pastcast``, or the URL's)."""
    overwrite: bool = False
    embedder: str | None = None
    """Embed the documents with this model for dense and hybrid retrieval."""
    vectors: PathText | None = None
    """Document vectors computed elsewhere by the ``embedder``'s model, kept instead of
    computed (``vectors_ids`` for a ``.npy``)."""
    vectors_ids: PathText | None = None
    nprobe: int | None = Field(default=None, ge=1)
    """Train the approximate month indexes now too."""
    lenient: bool = False
    since: Day | None = None
    until: Day | None = None
    """``lenient``, ``since`` and ``until`` go to the sources that take them."""
    include_flagged: bool = False
    allow_source: tuple[str, ...] = ()
    allow_sources_file: PathText | None = None
    """More allowed source names, one a line."""
    quality: tuple[str, ...] = ()
    """Quality filters by name (``pastcast.curate.quality_filters``)."""
    require_dates: DatingRule = "any"
    """``any`` keeps documents dated only by crawl or fetch time (counted and flagged),
    ``metadata`` leaves them out, ``published`` keeps only those dated by their publication."""
    workers: int | None = Field(default=None, ge=1, le=MAX_BUILD_WORKERS)
    """Processes indexing month partitions side by side (default: the CPU count)."""


class ConstructionAuditPlan(Record):
    """A construction audit (``audit_datasets``): can what agents see of how the steps were
    built predict the outcome? (docs/audits.md)"""

    datasets: tuple[PathText, ...]
    """Dataset specs ``open_dataset`` reads; several are pooled, each event kept apart."""
    schedules: tuple[str, ...] | None = None
    """Registered schedules rebuilt on the same events (None: every one)."""
    dataset_only: bool = False
    """Audit only the datasets' own steps."""
    folds: int = Field(default=5, ge=2, le=100)
    draws: int = Field(default=2000, ge=100, le=100_000)
    """Bootstrap draws (whole events) for the interval."""
    seed: int = Field(default=0, ge=0)
    permutations: int = Field(default=500, ge=1, le=100_000)
    """Draws of the permutation null the AUC is judged against."""
    alpha: float = Field(default=0.05, ge=0.0001, le=0.5)
    """The level of the permutation test."""


class RunAuditPlan(Record):
    """A run's audit (``audit_run_log``): what its agents saw, dated and screened, and what they
    were given and wrote (docs/audits.md)."""

    run_log: PathText
    dataset: PathText | None = None
    """The dataset the run used, for post-cutoff prices and the question's wording (default:
    the embedded world the log names)."""
    corpus: str | None = None
    """The corpus its agents searched: an index directory or a ``KIND:PATH`` source (default:
    the embedded world's documents when the log or ``dataset`` names it)."""
    examples: int | None = Field(default=None, ge=0)
    """Findings of each check kept (default ``pastcast.audit.EXAMPLES``); every one is
    counted."""
