"""Reports from run logs: leaderboards (terminal and Markdown) and a Markdown report."""

from pastcast.reports._leaderboard import (
    clean_json,
    fmt_metric,
    leaderboard_markdown,
    leaderboard_rows,
    leaderboard_table,
)
from pastcast.reports._report import write_report

__all__ = [
    "clean_json",
    "fmt_metric",
    "leaderboard_markdown",
    "leaderboard_rows",
    "leaderboard_table",
    "write_report",
]
