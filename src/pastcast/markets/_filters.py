"""Market-side event filters of Forecast-Dojo (Appendix A.2), each counted in a funnel.

Lifetime: the event spans at least ``min_lifetime_days`` UTC calendar days. Price history: the
longest run of consecutive priced days is at least ``min_history_days`` (2 by default: without
two priced days in a row there is no Delta_t, so movement cannot be measured at all; such a
market is reported as lacking history, not as flat). Faithfulness: the
fraction of faithful days rho_Q and the longest unfaithful run S_Q, where a day is faithful when
the realised leg's trade count and volume exceed thresholds (only where the source reports them).
Nontriviality from m_t = m_{Q,t}(Y) on faithful observed days:

    a_Q = mean_t -log clip(m_t, 1e-6, 1 - 1e-6)
    V_Q = sum_t |Delta_t|,  C_Q = sum_t Delta_t / sum_t |Delta_t|

with Delta_t = m_t - m_{t-1} over adjacent calendar days. An event is removed when it is already
nearly certain (a_Q < min_surprisal) or when its history is both nearly flat (V_Q <
min_variation) and directionless (|C_Q| < min_consistency). The paper's Table 7 thresholds are
not in its text; the defaults here are documented choices, all configurable: ``filter_config``
applies values from a TOML/JSON file (``read_filter_file``) or ``NAME=VALUE`` options.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from pastcast.markets._history import MarketHistory, outcome_series
from pastcast.records import Event
from pastcast.textfiles import read_text_file

__all__ = [
    "FilterConfig",
    "Nontriviality",
    "faithfulness",
    "filter_config",
    "history_days",
    "lifetime_days",
    "nontriviality",
    "parse_filter_assignments",
    "read_filter_file",
    "too_few_dates",
]


@dataclass(frozen=True)
class FilterConfig:
    min_lifetime_days: int = 8
    min_history_days: int = 2
    min_trades: int = 1
    min_volume: float = 0.0
    min_faithful_fraction: float = 0.5
    max_unfaithful_run: int = 7
    min_surprisal: float = 0.05
    min_variation: float = 0.10
    min_consistency: float = 0.5
    clip: float = 1e-6
    min_dates: int = 0
    """Forecast dates an evaluation event must keep (Forecast-Dojo 4.3: 3); 0: no such rule.
    Training events keep theirs whatever their number (``too_few_dates``)."""


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


def history_days(history: MarketHistory) -> int:
    """The longest run of consecutive UTC days with a price."""
    longest = run = 0
    prev = None
    for day in sorted({b.day for b in history.beliefs}):
        run = run + 1 if prev is not None and day - prev == timedelta(days=1) else 1
        longest, prev = max(longest, run), day
    return longest


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


def too_few_dates(
    events: Sequence[Event],
    steps_per_event: Mapping[str, int],
    splits: Mapping[str, str],
    min_dates: int = 3,
) -> dict[str, str]:
    """Evaluation events (those in the ``eval`` split, or every event of an unsplit dataset)
    with fewer than ``min_dates`` forecast dates, with the reason."""
    out = {}
    for e in events:
        evaluated = not splits or splits.get(e.id, "eval") == "eval"
        n = steps_per_event.get(e.id, 0)
        if evaluated and n < min_dates:
            out[e.id] = f"{n} forecast dates (an evaluation event needs {min_dates})"
    return out


def _coerce(name: str, kind: str, value: Any, where: str) -> int | float:
    """A filter value from a file (a number) or the command line (its text)."""
    if isinstance(value, bool):
        raise ValueError(f"{where}: field {name}: expected a number, got {value!r}")
    try:
        if kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            number: int | float = int(value)
        else:
            number = float(value)
    except (TypeError, ValueError):
        what = "an integer" if kind == "int" else "a number"
        raise ValueError(f"{where}: field {name}: expected {what}, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{where}: field {name}: must be a finite number >= 0, got {value!r}")
    if name == "min_faithful_fraction" and number > 1:
        raise ValueError(f"{where}: field {name}: a fraction in [0, 1], got {value!r}")
    if name == "clip" and not 0 < number < 0.5:
        raise ValueError(f"{where}: field {name}: must be in (0, 0.5), got {value!r}")
    return number


def filter_config(
    values: Mapping[str, Any], *, where: str, base: FilterConfig | None = None
) -> FilterConfig:
    """``base`` (the defaults) with ``values`` (field -> value) applied, each checked.

    Field names may be spelled with hyphens (``min-lifetime-days``); ``where`` names the origin
    (a file, an option) in the one-line error raised as ``ValueError``.
    """
    kinds = {f.name: str(f.type) for f in fields(FilterConfig)}
    changes: dict[str, Any] = {}
    for raw, value in values.items():
        name = str(raw).replace("-", "_")
        if name not in kinds:
            raise ValueError(f"{where}: unknown filter {raw!r} (known: {', '.join(sorted(kinds))})")
        changes[name] = _coerce(name, kinds[name], value, where)
    return replace(base or FilterConfig(), **changes)


def parse_filter_assignments(items: Sequence[str], option: str = "--filter") -> dict[str, str]:
    """``NAME=VALUE`` items (the command line's ``--filter``) as a mapping."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"{option} {item!r}: expected NAME=VALUE, e.g. min_lifetime_days=14")
        out[name.strip()] = value.strip()
    return out


def read_filter_file(path: str | Path) -> dict[str, Any]:
    """Filter values from a TOML or JSON file: its top-level table, or its ``filters`` table."""
    p = Path(path)
    try:
        text = read_text_file(p)
    except OSError as exc:
        raise ValueError(f"{p}: cannot read ({exc.strerror or exc})") from None
    try:
        obj: Any = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: not valid TOML ({exc})") from None
    if isinstance(obj, dict) and isinstance(obj.get("filters"), dict):
        obj = obj["filters"]
    if not isinstance(obj, dict):
        raise ValueError(f"{p}: expected a table of filter values")
    if not obj:  # an empty file is a mistake, not a request for the defaults
        raise ValueError(f"{p}: no filter values (e.g. min_lifetime_days = 14)")
    return obj
