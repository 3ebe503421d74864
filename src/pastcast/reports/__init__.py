"""Reports from run logs: the scorecard of every metric per group, leaderboards and tables
(terminal, Markdown, LaTeX).

The HTML report with figures (``pastcast.reports.html``, ``pastcast.reports.figures``) and the
dashboard (``pastcast.reports.dashboard``) need the ``reports`` extra (matplotlib, Jinja2,
FastAPI); this package itself does not.
"""

from pastcast.reports._compare import (
    Comparison,
    compare_selections,
    comparison_table,
    default_pairs,
    paired_table,
    selection_name,
    selection_of,
)
from pastcast.reports._leaderboard import leaderboard_rows
from pastcast.reports._runs import GROUP_COLUMNS, REPORT_COLUMNS, RUN_COLUMNS, Runs, duration_of
from pastcast.reports._scorecard import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    Scorecard,
    market_age_text,
    scorecard,
)
from pastcast.reports._tables import (
    TextTable,
    calibration_table,
    cost_table,
    fmt_number,
    leaderboard,
    main_table,
    to_markdown,
    to_rich,
)

__all__ = [
    "BOOTSTRAP_DRAWS",
    "BOOTSTRAP_SEED",
    "GROUP_COLUMNS",
    "REPORT_COLUMNS",
    "RUN_COLUMNS",
    "Comparison",
    "Runs",
    "Scorecard",
    "TextTable",
    "calibration_table",
    "compare_selections",
    "comparison_table",
    "cost_table",
    "default_pairs",
    "duration_of",
    "fmt_number",
    "leaderboard",
    "leaderboard_rows",
    "main_table",
    "market_age_text",
    "paired_table",
    "scorecard",
    "selection_name",
    "selection_of",
    "to_markdown",
    "to_rich",
]
