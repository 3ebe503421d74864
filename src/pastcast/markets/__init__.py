"""Real market data: importers, benchmark construction (filters, splits, schedules) and the
on-disk dataset format."""

from pastcast.markets._build import BuildReport, FunnelStage, TemporalSplit, build_dataset
from pastcast.markets._filters import (
    FilterConfig,
    Nontriviality,
    faithfulness,
    lifetime_days,
    nontriviality,
)
from pastcast.markets._forecastbench import (
    MARKET_SOURCES,
    ForecastBenchError,
    ImportResult,
    read_forecastbench,
)
from pastcast.markets._history import DayActivity, MarketHistory, guard_beliefs, outcome_series
from pastcast.markets._html import html_to_text
from pastcast.markets._release import RELEASE_COLUMNS, load_release
from pastcast.markets._schedules import (
    DojoSchedule,
    HindcastSchedule,
    LookbackSchedule,
    Schedule,
    dojo_step_count,
    guard_steps,
    movement,
)
from pastcast.markets._store import (
    FORMAT_VERSION,
    DatasetFormatError,
    content_hash,
    load_dataset,
    read_manifest,
    read_metadata,
    save_dataset,
    with_content_id,
)

__all__ = [
    "FORMAT_VERSION",
    "MARKET_SOURCES",
    "RELEASE_COLUMNS",
    "BuildReport",
    "DatasetFormatError",
    "DayActivity",
    "DojoSchedule",
    "FilterConfig",
    "ForecastBenchError",
    "FunnelStage",
    "HindcastSchedule",
    "ImportResult",
    "LookbackSchedule",
    "MarketHistory",
    "Nontriviality",
    "Schedule",
    "TemporalSplit",
    "build_dataset",
    "content_hash",
    "dojo_step_count",
    "faithfulness",
    "guard_beliefs",
    "guard_steps",
    "html_to_text",
    "lifetime_days",
    "load_dataset",
    "load_release",
    "movement",
    "nontriviality",
    "outcome_series",
    "read_forecastbench",
    "read_manifest",
    "read_metadata",
    "save_dataset",
    "with_content_id",
]
