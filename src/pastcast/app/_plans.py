"""The records the workflows take: each declares one workflow's work, is read from and written
to a plan file (``read_plan``, ``write_plan``) and is what its output records; its fields'
docstrings are the help of the options that build it (``with_preset``: a preset under it)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, JsonValue, field_validator

from pastcast.app._corpus_plan import Day, PathText
from pastcast.curate import CurationConfig
from pastcast.cutoff import DayConvention
from pastcast.markets import FilterConfig, filter_config
from pastcast.records import Record
from pastcast.runner import PresetRecord

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
    retrieval: Annotated[
        tuple[str, ...], BeforeValidator(lambda v: v.split(",") if isinstance(v, str) else v)
    ] = CURATION_LEGS
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


class ConstructionAuditPlan(Record):
    """A construction audit (``audit_datasets``): can what agents see of how the steps were
    built predict the outcome? (docs/audits.md)"""

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
