"""Scores and statistics from the papers, recomputable from run logs; the papers' analyses over
score tables are in ``pastcast.scoring.analyses`` (loaded only when used)."""

from __future__ import annotations

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.scoring._aggregate import (
        KAPPA,
        AlphaTest,
        GroupSummary,
        MetricSummary,
        alpha_test,
        distinct_rows,
        shrink,
        summarize,
    )
    from pastcast.scoring._binary import (
        Murphy,
        alpha_anatomy,
        alpha_score,
        bin_index,
        binary_brier,
        ece,
        murphy,
    )
    from pastcast.scoring._binomial import clopper_pearson, corrected_rate, wilson
    from pastcast.scoring._bootstrap import (
        cluster_bootstrap,
        cluster_bootstrap_means,
        grouped_cluster_bootstrap,
        ratio_bootstrap,
    )
    from pastcast.scoring._metrics import (
        Cell,
        GradedForecast,
        Metric,
        ScoreColumns,
        metric,
        metric_list,
        metrics,
        score_forecast,
        score_step,
        step_scores,
    )
    from pastcast.scoring._multiclass import (
        LOG_FLOOR,
        Fallback,
        accuracy,
        brier,
        info_alpha,
        log_loss,
        normalize,
        uniform,
    )
    from pastcast.scoring._paired import PairedComparison, PairedDifference, paired_comparison
    from pastcast.scoring._table import (
        TABLE_INPUTS,
        Convention,
        ScoreTable,
        coded,
        event_kind,
        table_from_columns,
        table_from_records,
    )

__all__ = [
    "KAPPA",
    "LOG_FLOOR",
    "TABLE_INPUTS",
    "AlphaTest",
    "Cell",
    "Convention",
    "Fallback",
    "GradedForecast",
    "GroupSummary",
    "Metric",
    "MetricSummary",
    "Murphy",
    "PairedComparison",
    "PairedDifference",
    "ScoreColumns",
    "ScoreTable",
    "accuracy",
    "alpha_anatomy",
    "alpha_score",
    "alpha_test",
    "bin_index",
    "binary_brier",
    "brier",
    "clopper_pearson",
    "cluster_bootstrap",
    "cluster_bootstrap_means",
    "coded",
    "corrected_rate",
    "distinct_rows",
    "ece",
    "event_kind",
    "grouped_cluster_bootstrap",
    "info_alpha",
    "log_loss",
    "metric",
    "metric_list",
    "metrics",
    "murphy",
    "normalize",
    "paired_comparison",
    "ratio_bootstrap",
    "score_forecast",
    "score_step",
    "shrink",
    "step_scores",
    "summarize",
    "table_from_columns",
    "table_from_records",
    "uniform",
    "wilson",
]

__getattr__, __dir__ = lazy_exports(__name__)
