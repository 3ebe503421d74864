"""Analyses from the three papers over score tables: Forecast-Dojo's longitudinal and
evidence analyses, Hindcast's coverage and lookback summaries, Foresight Arena's power
analysis, resource use."""

from pastcast.scoring.analyses._breakdown import (
    RecoveryCount,
    horizon_bucket,
    recoveries_regressions,
    with_event_column,
)
from pastcast.scoring.analyses._calibration import (
    BinaryForecasts,
    Calibration,
    ReliabilityBin,
    binary_forecasts,
    calibration,
)
from pastcast.scoring.analyses._evidence import (
    CaptureGain,
    EvidenceCorrelation,
    EvidenceRow,
    QuartileChange,
    capture_gain,
    changes_by_evidence,
    evidence_index,
    evidence_quartiles,
    new_entries,
)
from pastcast.scoring.analyses._hindcast import (
    CoverageKind,
    coverage,
    coverage_bin,
    coverage_summary,
    lookback_summary,
    pipeline_recoveries,
    with_row_column,
)
from pastcast.scoring.analyses._longitudinal import (
    EpisodeGain,
    Estimate,
    StepChange,
    Thirds,
    episode_gain,
    evidence_capture,
    group_rows,
    step_changes,
    thirds,
    transitions,
)
from pastcast.scoring.analyses._power import (
    alpha_standard_error,
    alpha_variance,
    power_n,
    power_rounds,
)
from pastcast.scoring.analyses._resources import (
    PHASES,
    RESOURCES,
    ResourceRatio,
    memory_cost,
    resource_use,
)

__all__ = [
    "PHASES",
    "RESOURCES",
    "BinaryForecasts",
    "Calibration",
    "CaptureGain",
    "CoverageKind",
    "EpisodeGain",
    "Estimate",
    "EvidenceCorrelation",
    "EvidenceRow",
    "QuartileChange",
    "RecoveryCount",
    "ReliabilityBin",
    "ResourceRatio",
    "StepChange",
    "Thirds",
    "alpha_standard_error",
    "alpha_variance",
    "binary_forecasts",
    "calibration",
    "capture_gain",
    "changes_by_evidence",
    "coverage",
    "coverage_bin",
    "coverage_summary",
    "episode_gain",
    "evidence_capture",
    "evidence_index",
    "evidence_quartiles",
    "group_rows",
    "horizon_bucket",
    "lookback_summary",
    "memory_cost",
    "new_entries",
    "pipeline_recoveries",
    "power_n",
    "power_rounds",
    "recoveries_regressions",
    "resource_use",
    "step_changes",
    "thirds",
    "transitions",
    "with_event_column",
    "with_row_column",
]
