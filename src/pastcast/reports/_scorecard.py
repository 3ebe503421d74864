"""Everything ``pastcast score`` and the report show about each group of forecasts: the summary
(means with CIs, failures against the schedule, alpha tests), calibration of two-outcome
forecasts, resources per forecast, and the uniform and market references on the same forecasts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from pastcast.reports._leaderboard import ranked
from pastcast.reports._runs import Runs
from pastcast.scoring import Convention, GroupSummary, summarize
from pastcast.scoring.analyses import RESOURCES, Calibration, calibration, group_rows

BOOTSTRAP_DRAWS = 4000
"""Bootstrap draws of every interval the command line and the dashboard show by default: one
number, so the two show the same intervals for the same run."""
BOOTSTRAP_SEED = 0
"""Their seed, likewise."""


def market_age_text(ages: Sequence[float]) -> str:
    """How old the market beliefs of ``ages`` (days, at their cutoffs) were, in words: the one
    way tables, notes and the dashboard say which market a forecast was measured against."""
    if not ages:
        return "no market age recorded"
    median, top = float(np.median(ages)), max(ages)
    if len(ages) == 1 or top == median:
        return f"{_days(median)} old"
    return f"median {_days(median)} old, up to {_days(top)}"


def _days(days: float) -> str:
    shown = f"{days:.0f}" if days >= 10 or days == int(days) else f"{days:.1f}"
    return f"{shown} day{'' if shown == '1' else 's'}"


@dataclass(frozen=True)
class GroupReport:
    summary: GroupSummary
    calibration: Calibration
    resources: Mapping[str, float]
    """Mean per recorded forecast of each resource (``pastcast.scoring.analyses.RESOURCES``)."""
    models: tuple[str, ...]
    """Models the group's forecasts called."""
    uniform_brier: float
    """Mean Brier of the uniform forecast over the group's events and steps."""
    market_brier: float
    """Mean Brier of the market's belief over the group's forecasts that have one."""
    n_market: int
    market_ages: tuple[float, ...] = ()
    """The age in days at its cutoff of each forecast's market belief, in the group's order
    (forecasts without a market belief, or from logs that did not record it, left out)."""

    @property
    def group(self) -> tuple[str, ...]:
        return self.summary.group

    def details(self) -> dict[str, Any]:
        """What the report adds to the summary, as JSON-ready values (NaN stays NaN)."""
        cal = self.calibration
        return {
            **dict(zip(self.summary.by, self.summary.group, strict=True)),
            "calibration": {
                "n": cal.n,
                "ece": cal.ece,
                "murphy": None if cal.murphy is None else asdict(cal.murphy),
                "n_market": cal.n_market,
                "alpha_anatomy": None
                if cal.anatomy is None
                else {k: v for k, v in asdict(cal.anatomy).items() if k not in ("agent", "market")},
                "reliability": [asdict(b) for b in cal.bins],
            },
            "resources_per_forecast": dict(self.resources),
            "models": list(self.models),
            "references": {
                "uniform_brier": self.uniform_brier,
                "market_brier": self.market_brier,
                "n_market": self.n_market,
                "market_age_days": {
                    "n": len(self.market_ages),
                    "median": float(np.median(self.market_ages)) if self.market_ages else None,
                    "max": max(self.market_ages, default=None),
                    "forecasts": list(self.market_ages),
                },
            },
        }


@dataclass(frozen=True)
class Scorecard:
    by: tuple[str, ...]
    fallback: Convention
    bootstrap: int
    seed: int
    bins: int
    n_forecasts: int
    groups: tuple[GroupReport, ...]
    titles: Mapping[str, str] = field(default_factory=dict)
    """The question title of each event grouped by, where the dataset is known."""

    def as_dict(self) -> dict[str, Any]:
        """``groups``: each group's summary (``GroupSummary.as_dict``); ``details``: the same
        groups' calibration, resources, models and references; ``titles`` (when known): the
        question of each event grouped by."""
        extra = {"titles": dict(self.titles)} if self.titles else {}
        return {
            **extra,
            "by": list(self.by),
            **{f.name: getattr(self, f.name) for f in fields(self)[1:6]},  # fallback..n_forecasts
            "groups": [g.summary.as_dict() for g in self.groups],
            "details": [g.details() for g in self.groups],
        }

    @property
    def market_ages(self) -> tuple[float, ...]:
        """Every group's market ages (``GroupReport.market_ages``)."""
        return tuple(a for g in self.groups for a in g.market_ages)

    def ranked(self) -> tuple[GroupReport, ...]:
        """Forecasting groups best first, then reference groups (as the leaderboard)."""
        return tuple(ranked(self.groups, lambda g: g.summary))


def scorecard(
    runs: Runs,
    by: Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    bins: int = 10,
) -> Scorecard:
    """Score the steps of ``runs`` per group of ``by`` (columns of ``GROUP_COLUMNS``; horizon and
    duration need the dataset)."""
    by = tuple(by)
    table = runs.table()
    summaries = summarize(table, by, fallback, bootstrap, seed, runs.scheduled(by))
    cals = {c.group: c for c in calibration(table, by, fallback, bins, bootstrap, seed)}
    use = runs.resources()
    row_models = runs.row_models()
    uniform = 1.0 - 1.0 / table.n_labels.astype(np.float64)
    rows_of = dict(group_rows(table, by))
    ages = runs.market_ages()
    out = []
    for s in summaries:
        rows = rows_of[s.group]
        market = table.market_brier[rows]
        finite = np.isfinite(market)
        out.append(
            GroupReport(
                summary=s,
                calibration=cals[s.group],
                resources={r: float(use[rows, j].mean()) for j, r in enumerate(RESOURCES)},
                models=tuple(row_models.of(rows)),
                uniform_brier=float(uniform[rows].mean()),
                market_brier=float(market[finite].mean()) if finite.any() else math.nan,
                n_market=int(finite.sum()),
                market_ages=tuple(float(a) for a in ages[rows] if np.isfinite(a)),
            )
        )
    titles = {}
    if runs.dataset is not None and "event" in by:
        ids = runs.event_ids()
        titles = {e.id: e.title for e in runs.dataset.events if e.id in ids}
    return Scorecard(by, fallback, bootstrap, seed, bins, len(table), tuple(out), titles)
