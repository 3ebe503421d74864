"""The latent evidence process of an event and the market that prices it.

Signals arrive over the event's life (Poisson per day, rate rising towards the resolution); each
points to the truth with a probability rising from ``accuracy_start`` to ``accuracy_end``. The
market accumulates signals as damped, noisy Bayesian log-odds updates, plus mean-reverting noise,
and publishes one belief per day (a softmax over per-option scores).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from pastcast.records import DailyBelief, EventKind
from pastcast.world._config import WorldConfig

_DAY = timedelta(days=1)
# Relative publishing activity per UTC hour: quiet at night, busiest in working hours.
_HOUR_WEIGHTS = (1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 9, 9, 9, 9, 8, 8, 7, 6, 5, 4, 3, 2, 1)


@dataclass(frozen=True)
class Signal:
    """One piece of evidence: it speaks for (``positive``) or against ``label`` at ``at``.

    For a binary event ``label`` is always "Yes": a positive signal says the subject will
    happen, a negative one that it will not.
    """

    at: datetime
    label: str
    positive: bool
    truthful: bool
    accuracy: float


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def random_time(rng: random.Random, lo: datetime, hi: datetime) -> datetime:
    """A time in [lo, hi) with realistic publishing hours when the window allows it."""
    if hi - lo <= timedelta(seconds=1):
        return lo
    day = lo.date() + timedelta(days=rng.randrange(max(1, (hi.date() - lo.date()).days + 1)))
    hour = rng.choices(range(24), weights=_HOUR_WEIGHTS)[0]
    t = _midnight(day) + timedelta(hours=hour, minutes=rng.randrange(60), seconds=rng.randrange(60))
    if lo <= t < hi:
        return t
    span = int((hi - lo).total_seconds())
    return lo + timedelta(seconds=rng.randrange(span))


def _profile(frac: float) -> float:
    """Signal intensity over the life of an event: news picks up towards the resolution."""
    return 0.4 + 1.6 * frac * frac


def _windows(open_time: datetime, resolved_at: datetime) -> list[tuple[datetime, datetime, float]]:
    """Each UTC day's slice of [open, resolved) with the life fraction at its middle."""
    life = (resolved_at - open_time).total_seconds()
    out = []
    day = open_time.date()
    while _midnight(day) < resolved_at:
        lo = max(_midnight(day), open_time)
        hi = min(_midnight(day) + _DAY, resolved_at)
        if hi > lo:
            mid = (lo - open_time).total_seconds() + (hi - lo).total_seconds() / 2
            out.append((lo, hi, mid / life))
        day += _DAY
    return out


def expected_signal_mass(open_time: datetime, resolved_at: datetime) -> float:
    """Expected signal count of an event at a base rate of one signal per day."""
    return sum(
        _profile(f) * (hi - lo).total_seconds() / 86400
        for lo, hi, f in _windows(open_time, resolved_at)
    )


def _poisson(rng: random.Random, lam: float) -> int:
    # Knuth's method: rates here are a few per day at most.
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def simulate_signals(
    rng: random.Random,
    kind: EventKind,
    labels: tuple[str, ...],
    truth: str,
    open_time: datetime,
    resolved_at: datetime,
    base_rate: float,
    cfg: WorldConfig,
) -> list[Signal]:
    signals: list[Signal] = []
    life = (resolved_at - open_time).total_seconds()
    for lo, hi, f in _windows(open_time, resolved_at):
        lam = base_rate * _profile(f) * (hi - lo).total_seconds() / 86400
        times = sorted(random_time(rng, lo, hi) for _ in range(_poisson(rng, lam)))
        for at in times:
            frac = (at - open_time).total_seconds() / life
            q = cfg.accuracy_start + (cfg.accuracy_end - cfg.accuracy_start) * frac
            truthful = rng.random() < q
            if kind == "binary":
                towards_yes = (truth == "Yes") == truthful
                signals.append(Signal(at, "Yes", towards_yes, truthful, q))
                continue
            others = [x for x in labels if x != truth]
            # Evidence for the truth is either praise of it or criticism of a rival, and
            # misleading evidence the reverse.
            praise = rng.random() < 0.6
            if truthful:
                label = truth if praise else rng.choice(others)
            else:
                label = rng.choice(others) if praise else truth
            signals.append(Signal(at, label, praise, truthful, q))
    return signals


def simulate_beliefs(
    rng: random.Random,
    event_id: str,
    kind: EventKind,
    prior: dict[str, float],
    signals: list[Signal],
    open_time: datetime,
    resolved_at: datetime,
    cfg: WorldConfig,
) -> tuple[DailyBelief, ...]:
    """Daily beliefs for each UTC day from the opening day to the day before the resolution day.

    ``prior`` holds the starting log-scores (binary: ``{"Yes": log-odds}``). A day's belief
    reflects every signal published before the day ended, i.e. it is a closing price.
    """
    scores = dict(prior)
    noise = dict.fromkeys(scores, 0.0)
    beliefs: list[DailyBelief] = []
    pending = iter(signals)
    nxt = next(pending, None)
    day = open_time.date()
    while day < resolved_at.date():
        day_end = _midnight(day) + _DAY
        while nxt is not None and nxt.at < day_end:
            step = math.log(nxt.accuracy / (1 - nxt.accuracy)) * cfg.market_weight
            step *= math.exp(rng.gauss(0.0, 0.4))
            scores[nxt.label] += step if nxt.positive else -step
            nxt = next(pending, None)
        for k in noise:
            noise[k] = 0.7 * noise[k] + rng.gauss(0.0, cfg.market_noise)
        missing = rng.random() < cfg.missing_day_fraction
        if kind == "binary":
            p = 1 / (1 + math.exp(-(scores["Yes"] + noise["Yes"])))
            p = min(max(p, 0.005), 0.995)
            probs = {"Yes": p, "No": 1 - p}
        else:
            legs = {k: v + noise[k] for k, v in scores.items()}
            if len(legs) > 2 and rng.random() < cfg.unpriced_leg_prob:
                del legs[rng.choice(sorted(legs))]
            top = max(legs.values())  # the legs' softmax
            exp = {k: math.exp(v - top) for k, v in legs.items()}
            total = sum(exp.values())
            probs = {k: v / total for k, v in exp.items()}
        if not missing:
            beliefs.append(DailyBelief(event_id=event_id, day=day, probs=probs))
        day += _DAY
    return tuple(beliefs)
