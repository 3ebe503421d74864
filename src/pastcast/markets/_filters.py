"""Market-side event filters of Forecast-Dojo (Appendix A.2), each counted in a funnel.

Lifetime: the event spans at least ``min_lifetime_days`` UTC calendar days. Faithfulness: the
fraction of faithful days rho_Q and the longest unfaithful run S_Q, where a day is faithful when
the realised leg's trade count and volume exceed thresholds (only where the source reports them).
Nontriviality from m_t = m_{Q,t}(Y) on faithful observed days:

    a_Q = mean_t -log clip(m_t, 1e-6, 1 - 1e-6)
    V_Q = sum_t |Delta_t|,  C_Q = sum_t Delta_t / sum_t |Delta_t|

with Delta_t = m_t - m_{t-1} over adjacent calendar days. An event is removed when it is already
nearly certain (a_Q < min_surprisal) or when its history is both nearly flat (V_Q <
min_variation) and directionless (|C_Q| < min_consistency). The paper's Table 7 thresholds are
not in its text; the defaults here are documented choices, all configurable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from pastcast.markets._history import MarketHistory, outcome_series

__all__ = ["FilterConfig", "Nontriviality", "faithfulness", "lifetime_days", "nontriviality"]


@dataclass(frozen=True)
class FilterConfig:
    min_lifetime_days: int = 8
    min_trades: int = 1
    min_volume: float = 0.0
    min_faithful_fraction: float = 0.5
    max_unfaithful_run: int = 7
    min_surprisal: float = 0.05
    min_variation: float = 0.10
    min_consistency: float = 0.5
    clip: float = 1e-6


@dataclass(frozen=True)
class Nontriviality:
    a: float
    v: float
    c: float
    n_days: int


def lifetime_days(history: MarketHistory) -> int:
    """UTC calendar days touched by the event's tradeable span (both ends inclusive)."""
    ev = history.event
    return (ev.close_time.date() - ev.open_time.date()).days + 1


def faithfulness(history: MarketHistory, cfg: FilterConfig) -> tuple[float, int] | None:
    """(rho_Q, S_Q) over the days with a belief; ``None`` when the source has no activity data."""
    if history.activity is None:
        return None
    days = [b.day for b in history.beliefs]
    if not days:
        return 0.0, 0
    faithful = 0
    run = longest = 0
    day = days[0]
    while day <= days[-1]:
        act = history.activity.get(day)
        ok = act is not None and act.trades > cfg.min_trades and act.volume > cfg.min_volume
        faithful += ok
        run = 0 if ok else run + 1
        longest = max(longest, run)
        day += timedelta(days=1)
    total = (days[-1] - days[0]).days + 1
    return faithful / total, longest


def nontriviality(history: MarketHistory, cfg: FilterConfig) -> Nontriviality | None:
    """(a_Q, V_Q, C_Q) on faithful observed days; ``None`` without any priced day."""
    series = outcome_series(history)
    if history.activity is not None:
        series = {
            d: p
            for d, p in series.items()
            if (act := history.activity.get(d)) is not None
            and act.trades > cfg.min_trades
            and act.volume > cfg.min_volume
        }
    if not series:
        return None
    lo, hi = cfg.clip, 1.0 - cfg.clip
    a = sum(-math.log(min(max(p, lo), hi)) for p in series.values()) / len(series)
    deltas = [
        p - series[d - timedelta(days=1)]
        for d, p in series.items()
        if d - timedelta(days=1) in series
    ]
    v = sum(abs(x) for x in deltas)
    c = sum(deltas) / v if v > 0 else 0.0
    return Nontriviality(a=a, v=v, c=c, n_days=len(series))
