"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations
