"""What pastcast loads through the arena's entry points: the `pastcast arena` command group
(``pastcast.commands``) and the arena's rounds in reports and the dashboard
(``pastcast.report_sections``). Light on purpose: the root help imports this module to list the
command, and nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pastcast.reports.html import ReportSection

__all__ = ["command", "report_sections"]


def command() -> Any:
    """Foresight Arena: commit-reveal rounds scored against the market (simulation, replays of
    resolved markets, relayer, ledger)."""
    from pastcast_arena._cli import app

    return app


def report_sections(run_logs: tuple[Path, ...], folder: Path | None) -> tuple[ReportSection, ...]:
    """The arena rounds to report beside ``run_logs`` (see ``arena_sections``)."""
    from pastcast_arena._workflows import arena_sections

    return arena_sections(run_logs, folder)
