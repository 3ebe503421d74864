"""Isolated episodes run concurrently only at one cutoff.

Concurrent sandboxes share a kernel and CPUs: some covert channels between them cannot be closed
(CPU contention timing, page-cache timing; docs/isolation.md measures them). An episode at a later
cutoff knows more than one at an earlier cutoff, so the runner never has two isolated episodes in
flight whose cutoffs differ: what one could signal to another, the other already knows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime

from pastcast.runlog import AgentSpec
from pastcast.runner._work import StepTask


class CutoffGate:
    """Admits a task unless an isolated episode at another cutoff is in flight (or it is one)."""

    def __init__(self, isolated: Callable[[AgentSpec], bool]) -> None:
        self._isolated = isolated
        self._in_flight: Counter[datetime] = Counter()

    def admits(self, task: StepTask) -> bool:
        if not self._isolated(task.spec):
            return True
        return not self._in_flight or set(self._in_flight) == {task.step.cutoff}

    def started(self, task: StepTask) -> None:
        if self._isolated(task.spec):
            self._in_flight[task.step.cutoff] += 1

    def finished(self, task: StepTask) -> None:
        if self._isolated(task.spec):
            self._in_flight[task.step.cutoff] -= 1
            if not self._in_flight[task.step.cutoff]:
                del self._in_flight[task.step.cutoff]
