"""A local, read-only web dashboard over run logs (FastAPI, server-rendered Jinja2 pages; the
``reports`` extra): leaderboard with filters, event pages with the market curve and every
forecast, and a trajectory viewer. Logs are read through their columnar companions, every
step scored at start; a trajectory is read by its byte offset."""

from pastcast.reports.dashboard._app import SECURITY_HEADERS, create_app
from pastcast.reports.dashboard._index import (
    FILTERS,
    INDEX_COLUMNS,
    Filters,
    LeaderRow,
    RunIndex,
    RunInfo,
    StepRow,
    find_run_logs,
)

__all__ = [
    "FILTERS",
    "INDEX_COLUMNS",
    "SECURITY_HEADERS",
    "Filters",
    "LeaderRow",
    "RunIndex",
    "RunInfo",
    "StepRow",
    "create_app",
    "find_run_logs",
]
