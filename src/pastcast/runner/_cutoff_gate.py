"""Isolated episodes run concurrently only at one cutoff.

Concurrent sandboxes share a kernel and CPUs: some covert channels between them cannot be closed
(CPU contention timing, page-cache timing; docs/isolation.md measures them). An episode at a later
cutoff knows more than one at an earlier cutoff, so the runner never has two isolated episodes in
flight whose cutoffs differ: what one could signal to another, the other already knows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime

from pastcast.runner._work import StepTask


class CutoffGate:
    """Admits a task unless an isolated episode at another cutoff is in flight (or it is one)."""

    def __init__(self, isolated: Mapping[str, bool]) -> None:
        self._isolated = isolated  # by the agent's factory
        self._in_flight: Counter[datetime] = Counter()  # isolated episodes by cutoff

    def _cutoff(self, task: StepTask) -> datetime | None:
        return task.step.cutoff if self._isolated[task.spec.factory] else None

    def admits(self, task: StepTask) -> bool:
        cutoff = self._cutoff(task)
        return cutoff is None or set(self._in_flight) <= {cutoff}

    def started(self, task: StepTask) -> None:
        if (cutoff := self._cutoff(task)) is not None:
            self._in_flight[cutoff] += 1

    def finished(self, task: StepTask) -> None:
        if (cutoff := self._cutoff(task)) is not None:
            self._in_flight -= Counter([cutoff])  # drops a cutoff no longer in flight
