"""A local, read-only web dashboard over run logs (FastAPI, server-rendered Jinja2 pages; the
``reports`` extra): leaderboard with filters, event pages with the market curve and every
forecast, and a trajectory viewer."""

from pastcast.reports.dashboard._app import SECURITY_HEADERS, create_app
from pastcast.reports.dashboard._index import (
    FILTERS,
    Filters,
    LeaderRow,
    RunIndex,
    find_run_logs,
)

__all__ = [
    "FILTERS",
    "SECURITY_HEADERS",
    "Filters",
    "LeaderRow",
    "RunIndex",
    "create_app",
    "find_run_logs",
]
