"""The progress of long work (forecast steps, indexing, embedding, judging), on stderr since
stdout may carry a command's JSON.

On a terminal it is a bar: done / total, rate, elapsed time and ETA. Anywhere else (a log file,
a pipe, a batch job) a bar would print nothing until the end, so a task is a line when it
starts, a line when work is done (at most one every ``$PASTCAST_PROGRESS_INTERVAL`` seconds,
default 5) and a last line when it ends, each with the rate and the ETA: a slow run never
looks dead.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NewType, cast

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.progress import TaskID as RichTaskID

__all__ = ["ProgressReporter", "TaskID"]

TaskID = NewType("TaskID", int)
"""A task of a ``ProgressReporter`` (as ``rich.progress.TaskID``)."""

INTERVAL_ENV = "PASTCAST_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 5.0


def line_interval() -> float:
    """Seconds between two progress lines: ``$PASTCAST_PROGRESS_INTERVAL``, else 5 (a value
    that is not a number of seconds at or above 0 is the default too: progress never fails a
    command)."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if 0 <= value < float("inf") else DEFAULT_INTERVAL_S


def _rate(speed: float) -> str:
    return f"{speed:,.2f}" if speed < 10 else f"{speed:,.0f}"


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _plain(markup: str) -> str:
    if "[" not in markup:  # no markup: rich, a terminal's library, is not loaded for lines
        return markup
    from rich.errors import MarkupError
    from rich.text import Text

    try:
        return Text.from_markup(markup).plain
    except MarkupError:  # a name that only looks like markup: shown as it is
        return markup


def _is_terminal(terminal: bool | None) -> bool:
    """Whether stderr shows a bar: ``terminal``, else rich's answer. Where rich could only say
    no (stderr no terminal, neither ``FORCE_COLOR`` nor ``TTY_COMPATIBLE`` set), it is not
    loaded: its import is about 45 ms of CPU at a command's start."""
    if terminal is not None:
        return terminal
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        tty = bool(isatty and isatty())
    except ValueError:  # closed
        tty = False
    if not tty and not {"FORCE_COLOR", "TTY_COMPATIBLE"} & os.environ.keys():
        return False
    from rich.console import Console

    return Console(stderr=True).is_terminal


def _bar(transient: bool) -> Progress:
    """The bar: done / total, rate, status, elapsed time and ETA."""
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

    class Rate(ProgressColumn):
        """The task's units a second, as the bar measures them."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            unit = task.fields["unit"]
            shown = "" if speed is None else f"{_rate(speed)} {unit}/s"
            return Text(shown, "progress.data.speed")

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=transient,
        console=Console(stderr=True),
    )


@dataclass
class _Line:
    description: str
    total: float | None
    completed: float
    fields: dict[str, Any]
    started: float
    shown: float | None = None
    """``completed`` as last printed (None: nothing printed yet)."""


class ProgressReporter:
    """Tasks of work in progress; the subset of ``rich.progress.Progress`` that pastcast uses
    (``add_task``, ``update``, ``advance``, ``remove_task``), as a bar or as lines (see the
    module). ``unit``: what is counted (``steps``, ``docs``); ``enabled`` False shows nothing;
    ``transient``: the bar is gone once done; ``interval_s``: between two lines (default
    ``line_interval()``); ``terminal``: a bar or lines (default: whether stderr is one)."""

    def __init__(
        self,
        unit: str,
        *,
        enabled: bool = True,
        transient: bool = True,
        interval_s: float | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.unit = unit
        self.enabled = enabled
        self._bar = _bar(transient) if enabled and _is_terminal(terminal) else None
        self.interval_s = line_interval() if interval_s is None else interval_s
        self._lines: dict[TaskID, _Line] = {}
        self._next_id = 0
        self._last_line = float("-inf")
        self._lock = threading.Lock()

    def __enter__(self) -> ProgressReporter:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        for task in list(self._lines):
            self.remove_task(task)

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> TaskID:
        """A task of ``total`` units (None: unknown); ``fields``: ``status`` (text after the
        counts, rich markup), ``unit`` (the reporter's unless given)."""
        fields.setdefault("status", "")
        fields.setdefault("unit", self.unit)
        if self._bar is not None:
            return TaskID(self._bar.add_task(description, total=total, **fields))
        with self._lock:
            task = TaskID(self._next_id)
            self._next_id += 1
            if self.enabled:  # no bar: lines
                self._lines[task] = _Line(description, total, 0, fields, time.monotonic())
                self._show(task, force=True)
        return task

    def update(
        self,
        task: TaskID,
        *,
        completed: float | None = None,
        advance: float | None = None,
        total: float | None = None,
        **fields: Any,
    ) -> None:
        if self._bar is not None:
            self._bar.update(
                cast("RichTaskID", task),
                completed=completed,
                advance=advance,
                total=total,
                **fields,
            )
            return
        with self._lock:
            line = self._lines.get(task)
            if line is None:
                return
            if completed is not None:
                line.completed = completed
            if advance is not None:
                line.completed += advance
            if total is not None:
                line.total = total
            line.fields.update(fields)
            finished = line.total is not None and line.completed >= line.total
            self._show(task, force=finished)  # the last count of a task is always shown

    def advance(self, task: TaskID, advance: float = 1) -> None:
        self.update(task, advance=advance)

    def remove_task(self, task: TaskID) -> None:
        """The task ends: its bar goes, or its last count is printed unless it was already."""
        if self._bar is not None:
            self._bar.remove_task(cast("RichTaskID", task))
            return
        with self._lock:
            if task in self._lines:
                self._show(task, force=True)
                del self._lines[task]

    def _show(self, task: TaskID, *, force: bool) -> None:
        """A line for ``task`` if its count changed since the last one and, unless ``force``,
        the interval has passed since the last line of any task."""
        line = self._lines[task]
        now = time.monotonic()
        if line.shown == line.completed:
            return
        if not force and now - self._last_line < self.interval_s:
            return
        self._last_line, line.shown = now, line.completed
        print(self._text(line, now), file=sys.stderr, flush=True)

    def _text(self, line: _Line, now: float) -> str:
        elapsed = now - line.started
        speed = line.completed / elapsed if elapsed > 0 else 0.0
        done = f"{line.completed:,.0f}" + ("" if line.total is None else f"/{line.total:,.0f}")
        unit = line.fields["unit"]
        parts = [f"{_plain(line.description)}: {done} {unit}"]
        if line.completed:
            parts.append(f"{_rate(speed)} {unit}/s")
        parts.append(f"elapsed {_clock(elapsed)}")
        if line.total is not None and speed > 0:
            parts.append(f"ETA {_clock(max(line.total - line.completed, 0) / speed)}")
        status = _plain(str(line.fields.get("status", "")))
        return " · ".join([*parts, status] if status else parts)
