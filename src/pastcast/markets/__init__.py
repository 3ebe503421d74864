"""Real market data: importers, benchmark construction (filters, splits, schedules) and the
on-disk dataset format.

The package imports benchmark construction (filters, histories, schedules, the dataset
pipeline); the importers are ``pastcast.markets.sources``. The other names below are imported
when first used."""

from __future__ import annotations

from pastcast.lazy import lazy_exports
from pastcast.markets._build import (
    DatasetBuildReport,
    FunnelStage,
    TemporalSplit,
    build_dataset,
    late_closes,
)
from pastcast.markets._filters import (
    DayThreshold,
    FilterConfig,
    filter_config,
    parse_filter_assignments,
    read_filter_file,
    too_few_dates,
)
from pastcast.markets._history import MarketHistory
from pastcast.markets._pipeline import (
    NothingKept,
    build_and_save,
    dataset_info,
    is_release,
    load_benchmark,
    make_schedule,
)
from pastcast.markets._schedules import (
    DojoSchedule,
    HindcastSchedule,
    LookbackSchedule,
    Schedule,
    guard_steps,
    movement,
    schedules,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.markets._categories import CATEGORIES, OTHER, categorize
    from pastcast.markets._causal import CausalDojoSchedule, CausalLookbackSchedule
    from pastcast.markets._coverage import CoverageReport, step_coverage
    from pastcast.markets._news import daily_news_counts
    from pastcast.markets._siblings import SiblingAnswer, sibling_answers

__all__ = [
    "CATEGORIES",
    "OTHER",
    "CausalDojoSchedule",
    "CausalLookbackSchedule",
    "CoverageReport",
    "DatasetBuildReport",
    "DayThreshold",
    "DojoSchedule",
    "FilterConfig",
    "FunnelStage",
    "HindcastSchedule",
    "LookbackSchedule",
    "MarketHistory",
    "NothingKept",
    "Schedule",
    "SiblingAnswer",
    "TemporalSplit",
    "build_and_save",
    "build_dataset",
    "categorize",
    "daily_news_counts",
    "dataset_info",
    "filter_config",
    "guard_steps",
    "is_release",
    "late_closes",
    "load_benchmark",
    "make_schedule",
    "movement",
    "parse_filter_assignments",
    "read_filter_file",
    "schedules",
    "sibling_answers",
    "step_coverage",
    "too_few_dates",
]

__getattr__, __dir__ = lazy_exports(__name__)
