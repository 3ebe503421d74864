"""Real market data: importers, benchmark construction (filters, splits, schedules) and the
on-disk dataset format."""

from pastcast.markets._build import (
    BuildReport,
    FunnelStage,
    TemporalSplit,
    build_dataset,
)
from pastcast.markets._causal import CausalDojoSchedule, CausalLookbackSchedule
from pastcast.markets._filters import (
    FilterConfig,
    Nontriviality,
    faithfulness,
    lifetime_days,
    nontriviality,
)
from pastcast.markets._history import DayActivity, MarketHistory, guard_beliefs, outcome_series
from pastcast.markets._news import daily_news_counts
from pastcast.markets._pipeline import build_and_save, dataset_info, make_schedule
from pastcast.markets._schedules import (
    DojoSchedule,
    HindcastSchedule,
    LookbackSchedule,
    Schedule,
    dojo_step_count,
    guard_steps,
    movement,
    schedules,
)
from pastcast.markets.sources import (
    FORECASTBENCH_FILES,
    MARKET_SOURCES,
    RELEASE_COLUMNS,
    DownloadError,
    ForecastBenchError,
    ImportResult,
    PolymarketClient,
    PolymarketError,
    collected_at,
    download_files,
    fetch_histories,
    html_to_text,
    load_release,
    read_forecastbench,
    read_text_versions,
)

__all__ = [
    "FORECASTBENCH_FILES",
    "MARKET_SOURCES",
    "RELEASE_COLUMNS",
    "BuildReport",
    "CausalDojoSchedule",
    "CausalLookbackSchedule",
    "DayActivity",
    "DojoSchedule",
    "DownloadError",
    "FilterConfig",
    "ForecastBenchError",
    "FunnelStage",
    "HindcastSchedule",
    "ImportResult",
    "LookbackSchedule",
    "MarketHistory",
    "Nontriviality",
    "PolymarketClient",
    "PolymarketError",
    "Schedule",
    "TemporalSplit",
    "build_and_save",
    "build_dataset",
    "collected_at",
    "daily_news_counts",
    "dataset_info",
    "dojo_step_count",
    "download_files",
    "faithfulness",
    "fetch_histories",
    "guard_beliefs",
    "guard_steps",
    "html_to_text",
    "lifetime_days",
    "load_release",
    "make_schedule",
    "movement",
    "nontriviality",
    "outcome_series",
    "read_forecastbench",
    "read_text_versions",
    "schedules",
]
