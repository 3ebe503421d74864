"""The demo (``run_demo``): the embedded world and its index, the baselines and the heuristic
research agent run over it, and the report of that run, in one folder."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pastcast.app._reports import report_runs, score_runs
from pastcast.app._runs import plan_from_agents, run_plan
from pastcast.errors import FieldError
from pastcast.owned import claim_dir
from pastcast.reports import Scorecard
from pastcast.runner import RunConfig, RunResult

if TYPE_CHECKING:
    from pastcast.reports.html import WrittenReport

__all__ = ["DEMO_AGENTS", "Demo", "run_demo"]

DEMO_AGENTS = ("uniform", "base-rate", "heuristic", "heuristic@memory_on", "market")

_log = logging.getLogger("pastcast")


@dataclass(frozen=True)
class Demo:
    """The demo's run, the scorecard of its leaderboard and its report (None without the
    reports extra: a note says so)."""

    run: RunResult
    card: Scorecard
    report: WrittenReport | None


def run_demo(out: str | Path, *, seed: int = 0, notes: Callable[[str], None] | None = None) -> Demo:
    """Run ``DEMO_AGENTS`` over the embedded world of ``seed`` into the folder ``out`` (made
    and marked as a demo's, resumed when it holds one): the run log ``run.jsonl``, the world's
    index ``index/`` and the report ``report/`` (``report_runs``; without the reports extra, only
    the scorecard). ``notes`` gets the lines worth showing (default: the ``pastcast`` logger).
    ``FieldError`` names the field of a problem found before the run; errors of the run itself
    propagate (``ValueError``, ``RuntimeError``), as from ``run_plan``."""
    tell = notes or _log.warning
    dataset = f"world:{seed}"
    plan = plan_from_agents(
        DEMO_AGENTS,
        dataset=dataset,
        concurrency={"episodes": RunConfig.model_fields["workers"].default},
    )
    folder = Path(out)
    try:
        claim_dir(folder, "demo")
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    except OSError as exc:
        raise FieldError(
            "out", f"{folder}: cannot make the folder ({exc.strerror or exc})"
        ) from None
    log = folder / "run.jsonl"
    result = run_plan(plan, log, notes=tell)
    try:
        made = report_runs([log], folder / "report", dataset=dataset)
    except FieldError as exc:
        if exc.field:
            raise
        tell(f"note: no HTML report: {exc.reason}")  # the reports extra is missing
        return Demo(result, score_runs([log], dataset=dataset).card, None)
    return Demo(result, made.written.card, made.written)
