"""A local, read-only web dashboard over run logs (FastAPI, server-rendered Jinja2 pages; the
``reports`` extra): leaderboard with filters, event pages with the market curve and every
forecast, and a trajectory viewer. Logs are read through their columnar companions, every
step scored at start; a trajectory is read by its byte offset."""

from pastcast.reports.dashboard._app import create_app
from pastcast.reports.dashboard._index import INDEX_COLUMNS, RunIndex, find_run_logs

__all__ = ["INDEX_COLUMNS", "RunIndex", "create_app", "find_run_logs"]
