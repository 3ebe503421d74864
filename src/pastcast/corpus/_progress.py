"""The progress bar of work over documents (indexing months, embedding): on stderr, since stdout
may carry a command's JSON, and gone once done."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["documents_bar"]


class _Rate(ProgressColumn):
    """Documents a second, as the bar measures them."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} docs/s", style="progress.data.speed")


def documents_bar(title: str, enabled: bool) -> Progress:
    """A bar of documents done with their rate, the time spent and the time left; ``title``:
    its first column (rich markup, ``{task.description}`` for each task's own)."""
    return Progress(
        TextColumn(title),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        disable=not enabled,
        transient=True,
        console=Console(stderr=True),
    )
