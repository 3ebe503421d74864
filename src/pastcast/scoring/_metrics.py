"""The metric registry: every score of a forecast registered once, as data (``Metric``), so a
metric is added by one registration (``@metrics.register(NAME)`` or the ``pastcast.metrics``
entry point). Its fields and the built-in metrics: docs/scoring.md ("The metric registry").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from pastcast.errors import FieldError
from pastcast.records import Forecast
from pastcast.registry import Registry
from pastcast.runlog import LOGGED_SCORES, PENDING_TRUTH, Grading, Scores, StepRecord
from pastcast.scoring._multiclass import (
    LOG_FLOOR,
    Fallback,
    accuracy,
    brier,
    fallback_probs,
    info_alpha,
    log_loss,
    normalize,
)

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

# what each choice means: docs/scoring.md, "The metric registry"
Better = Literal["lower", "higher", "neither"]
Aggregation = Literal["mean", "tested"]
Cell = Literal["interval", "shrunk"]


@dataclass(frozen=True)
class GradedForecast:
    """One forecast as a metric's ``step`` sees it."""

    probs: Mapping[str, float]
    """The forecast, normalised (the fallback's distribution when it was unusable)."""
    truth: str
    labels: tuple[str, ...]
    market: Mapping[str, float] | None
    """The market's belief at the cutoff, normalised (None without one)."""

    @property
    def p_truth(self) -> float:
        return self.probs.get(self.truth, 0.0)

    @property
    def market_truth(self) -> float:
        """The market's probability of the truth (NaN without one, or without the truth)."""
        return math.nan if self.market is None else self.market.get(self.truth, math.nan)


@dataclass(frozen=True)
class ScoreColumns:
    """A score table's columns as the metrics' vectorised twins see them: a row per forecast,
    unusable ones filled by the convention (NaN where excluded). A twin must not change them."""

    brier: Floats
    accuracy: Floats
    p_truth: Floats
    market_truth: Floats
    """The market's probability of the truth (NaN without one)."""
    market_brier: Floats
    """The market's multiclass Brier score (NaN without a market)."""
    n_labels: Ints
    floor: float = LOG_FLOOR


@dataclass(frozen=True)
class Metric:
    """One score of a forecast and what every table needs to know about it; its fields:
    docs/scoring.md ("The metric registry"). ``step`` scores one forecast (NaN where undefined,
    such as without a market), ``rows`` is its vectorised twin over a score table's rows."""

    name: str
    label: str
    better: Better
    scale: tuple[float, float]
    step: Callable[[GradedForecast], float]
    rows: Callable[[ScoreColumns], Floats]
    aggregate: Aggregation = "mean"
    paired: bool = True
    digits: int = 3
    percent: bool = False
    leaderboard: Cell | None = "interval"
    report: Cell | None = "interval"
    reward: str = ""

    def __post_init__(self) -> None:
        cells = (self.leaderboard, self.report)
        for wrong, why in (
            (not self.name.isidentifier(), "a name is a Python identifier"),
            (self.better not in get_args(Better), f"better must be one of {get_args(Better)}"),
            (self.aggregate not in get_args(Aggregation), "aggregate must be mean or tested"),
            (not self.scale[0] < self.scale[1], f"scale {self.scale} is not (lowest, highest)"),
            (not set(cells) <= {*get_args(Cell), None}, "a cell is interval, shrunk or None"),
            ("shrunk" in cells and self.aggregate != "tested", "only a tested metric is shrunk"),
        ):
            if wrong:
                raise FieldError("", f"metric {self.name!r}: {why}")

    @property
    def title(self) -> str:
        """The label starting with a capital, as a table's row begins."""
        return self.label[:1].upper() + self.label[1:]

    @property
    def reward_name(self) -> str:
        return self.reward or (self.name if self.better == "higher" else f"neg_{self.name}")

    def as_reward(self, value: float) -> float:
        """``value`` turned so that more is better."""
        return value if self.better == "higher" else -value


def _floored_log(p: Floats, floor: float) -> Floats:
    out = np.maximum(p, floor)
    return np.log(out, out=out)


def _nan_where(values: Floats, rows: NDArray[np.bool_]) -> Floats:
    values[rows] = np.nan
    return values


def _info_alpha_rows(c: ScoreColumns) -> Floats:
    out = np.subtract(_floored_log(c.p_truth, c.floor), _floored_log(c.market_truth, c.floor))
    return _nan_where(out, ~np.isfinite(c.market_truth) | np.isnan(c.p_truth))


def _alpha(g: GradedForecast) -> float:
    """Half the market's Brier score minus the forecast's (NaN without a market)."""
    return (
        math.nan if g.market is None else (brier(g.market, g.truth) - brier(g.probs, g.truth)) / 2
    )


_EDGE = -math.log(LOG_FLOOR)  # log loss of a forecast giving the truth nothing
_BUILT_IN = (
    Metric(
        "brier", "Brier", "lower", (0.0, 2.0), lambda g: brier(g.probs, g.truth), lambda c: c.brier
    ),
    Metric(
        "accuracy",
        "accuracy",
        "higher",
        (0.0, 1.0),
        lambda g: accuracy(g.probs, g.truth),
        lambda c: c.accuracy,
        percent=True,
    ),
    Metric(
        "log_loss",
        "log loss",
        "lower",
        (0.0, _EDGE),
        lambda g: log_loss(g.probs, g.truth),
        lambda c: np.negative(_floored_log(c.p_truth, c.floor)),
        report=None,
        reward="log_score",
    ),
    Metric(
        "info_alpha",
        "info-alpha",
        "higher",
        (-_EDGE, _EDGE),
        lambda g: (
            g.market_truth if math.isnan(g.market_truth) else info_alpha(g.p_truth, g.market_truth)
        ),
        _info_alpha_rows,
        aggregate="tested",
        paired=False,
    ),
    Metric(
        "alpha",
        "alpha",
        "higher",
        (-1.0, 1.0),
        _alpha,
        lambda c: (c.market_brier - c.brier) / 2.0,
        aggregate="tested",
        paired=False,
        digits=4,
        leaderboard="shrunk",
        report=None,
    ),
    Metric(
        "binary_brier",
        "Brier [0,1]",
        "lower",
        (0.0, 1.0),
        lambda g: brier(g.probs, g.truth) / 2.0 if len({*g.labels, g.truth}) == 2 else math.nan,
        lambda c: _nan_where(c.brier / 2.0, c.n_labels != 2),
        paired=False,
        leaderboard=None,
        report=None,
    ),
    Metric(
        "hindcast_accuracy",
        "Hindcast acc.",
        "higher",
        (0.0, 1.0),
        lambda g: float(g.p_truth > 0.5),
        lambda c: _nan_where((c.p_truth > 0.5).astype(np.float64), np.isnan(c.p_truth)),
        paired=False,
        leaderboard=None,
        report=None,
    ),
    Metric(
        "distance_to_market",
        "dist. to market",
        "neither",
        (0.0, 1.0),
        lambda g: abs(g.p_truth - g.market_truth),
        lambda c: np.abs(c.p_truth - c.market_truth),
        paired=False,
        leaderboard=None,
        report=None,
    ),
)
"""pastcast's metrics, in table order (docs/scoring.md lists them)."""

metrics: Registry[Metric] = Registry("metric")
"""Every metric by name: ``factory() -> Metric``; plugins join through ``pastcast.metrics``."""


def _constant(m: Metric) -> Callable[[], Metric]:
    return lambda: m


for _built_in in _BUILT_IN:
    metrics.add(_built_in.name, _constant(_built_in))


def metric(name: str) -> Metric:
    """The metric ``name`` (``FieldError``, a ``ValueError``, naming the known ones)."""
    made = metrics.build(name)
    if not isinstance(made, Metric) or made.name != name:
        raise FieldError("", f"metric {name!r}: its factory must return a Metric named {name!r}")
    return made


_POSITION = {m.name: i for i, m in enumerate(_BUILT_IN)}


def metric_list() -> tuple[Metric, ...]:
    """Every registered metric in table order: pastcast's, then the plugins' by name."""
    listed = (metric(name) for name in metrics.names())
    return tuple(sorted(listed, key=lambda m: (_POSITION.get(m.name, len(_POSITION)), m.name)))


def graded_forecast(
    forecast: Forecast, grading: Grading, fallback: Fallback = "uniform"
) -> tuple[GradedForecast, bool]:
    """``forecast`` as the metrics score it, and whether the fallback replaced it (an unusable
    forecast: not usable, or without positive finite mass)."""
    p = normalize(forecast.probs) if forecast.usable else None
    market = None if grading.market_probs is None else normalize(grading.market_probs)
    probs = fallback_probs(grading, fallback) if p is None else p
    return GradedForecast(probs, grading.truth, grading.labels, market), p is None


def step_scores(
    forecast: Forecast, grading: Grading, fallback: Fallback = "uniform"
) -> dict[str, float]:
    """Every registered metric of one forecast (NaN where undefined); an unusable forecast is
    scored as ``fallback``."""
    graded, _ = graded_forecast(forecast, grading, fallback)
    return {m.name: m.step(graded) for m in metric_list()}


def score_forecast(forecast: Forecast, grading: Grading, fallback: Fallback = "uniform") -> Scores:
    """The scores a step record keeps (``LOGGED_SCORES``); an unusable forecast is replaced by
    ``fallback`` and flagged as such."""
    graded, used = graded_forecast(forecast, grading, fallback)
    required = {n: Scores.model_fields[n].is_required() for n in LOGGED_SCORES}
    if grading.truth == PENDING_TRUTH:  # a live step before its question resolved: nothing to score
        values = {n: 0.0 if needed else None for n, needed in required.items()}
    else:
        scored = {n: metric(n).step(graded) for n in LOGGED_SCORES}
        values = {n: None if math.isnan(v) and not required[n] else v for n, v in scored.items()}
    return Scores(**values, fallback_used=used)


def score_step(record: StepRecord, fallback: Fallback = "uniform") -> Scores:
    """Re-score a logged step from its forecast and grading (stored scores are ignored)."""
    return score_forecast(record.forecast, record.grading, fallback)
