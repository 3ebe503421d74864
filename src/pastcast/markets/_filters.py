"""Market-side event filters of Forecast-Dojo (Appendix A.2), each counted in a funnel: lifetime,
faithful days (rho_Q, S_Q), price history and nontriviality (a_Q, V_Q, C_Q); the definitions and
defaults (pastcast's own: the paper's Table 7 is not in its text) are in docs/datasets.md,
"Building a benchmark". A market without two priced days in a row has no Delta_t: it is reported
as lacking history, not as flat.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from pastcast.markets._history import MarketHistory, outcome_series
from pastcast.records import Event, EventKind
from pastcast.textfiles import read_text_file


@dataclass(frozen=True)
class DayThreshold:
    """A faithful day of one event type: more than ``trades`` trades and more than ``volume``
    shares on the realised leg; ``None`` takes the flat ``min_trades`` / ``min_volume``."""

    trades: int | None = None
    volume: float | None = None


EVENT_KINDS: tuple[EventKind, ...] = ("binary", "multi")
DEFAULT_DAY_THRESHOLDS: Mapping[str, DayThreshold] = {"multi": DayThreshold(trades=0)}
"""The realised leg of a neg-risk bundle shares the event's attention with every other leg, so
one trade (not two, the flat ``min_trades``) and some volume make its day faithful."""


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
    day_thresholds: Mapping[str, DayThreshold] = field(
        default_factory=lambda: dict(DEFAULT_DAY_THRESHOLDS)
    )
    """Faithful-day thresholds per event type (``binary``, ``multi``)."""


def day_threshold(cfg: FilterConfig, kind: str) -> tuple[int, float]:
    """(trades, volume) that a faithful day of an event of type ``kind`` must exceed."""
    row = cfg.day_thresholds.get(kind, DayThreshold())
    trades = cfg.min_trades if row.trades is None else row.trades
    return trades, cfg.min_volume if row.volume is None else row.volume


def _faithful_days(history: MarketHistory, cfg: FilterConfig) -> set[date]:
    """The days whose activity exceeds the thresholds of the event's type."""
    assert history.activity is not None
    trades, volume = day_threshold(cfg, history.event.kind)
    return {d for d, a in history.activity.items() if a.trades > trades and a.volume > volume}


def describe_thresholds(cfg: FilterConfig) -> str:
    """The thresholds of every type, as the funnel shows them."""
    return "; ".join(
        f"{k}: trades > {t}, volume > {v:g}"
        for k in EVENT_KINDS
        for t, v in [day_threshold(cfg, k)]
    )


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
    good = _faithful_days(history, cfg)
    span = [days[0] + timedelta(days=i) for i in range((days[-1] - days[0]).days + 1)]
    run = longest = 0
    for day in span:
        run = 0 if day in good else run + 1
        longest = max(longest, run)
    return sum(day in good for day in span) / len(span), longest


def nontriviality(history: MarketHistory, cfg: FilterConfig) -> Nontriviality | None:
    """(a_Q, V_Q, C_Q) on faithful observed days; ``None`` without any priced day."""
    series = outcome_series(history)
    if history.activity is not None:
        good = _faithful_days(history, cfg)
        series = {d: p for d, p in series.items() if d in good}
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


def _type_rows(
    changes: Mapping[str, Mapping[str, Any]], base: Mapping[str, DayThreshold], where: str
) -> dict[str, DayThreshold]:
    """``base`` with each type's ``min_trades`` / ``min_volume`` from ``changes`` applied."""
    rows = dict(base)
    for kind, values in changes.items():
        if kind not in EVENT_KINDS:
            raise ValueError(
                f"{where}: unknown event type {kind!r} (known: {', '.join(EVENT_KINDS)})"
            )
        if not isinstance(values, Mapping):
            raise ValueError(f"{where}: field {kind}: expected a table of thresholds")
        row = rows.get(kind, DayThreshold())
        for raw, value in values.items():
            name = str(raw).replace("-", "_")
            if name == "min_trades":
                row = replace(row, trades=int(_coerce(name, "int", value, f"{where} {kind}")))
            elif name == "min_volume":
                row = replace(row, volume=float(_coerce(name, "float", value, f"{where} {kind}")))
            else:
                raise ValueError(
                    f"{where}: unknown filter '{kind}.{raw}' (known: {kind}.min_trades, "
                    f"{kind}.min_volume)"
                )
        rows[kind] = row
    return rows


def filter_config(
    values: Mapping[str, Any], *, where: str, base: FilterConfig | None = None
) -> FilterConfig:
    """``base`` (the defaults) with ``values`` (field -> value) applied, each checked.

    Field names may be spelled with hyphens (``min-lifetime-days``); ``where`` names the origin
    (a file, an option) in the one-line error raised as ``ValueError``. A type's faithful-day
    thresholds are ``TYPE.min_trades`` / ``TYPE.min_volume`` (``multi.min_trades``), or a
    ``[TYPE]`` table of a file.
    """
    kinds = {f.name: str(f.type) for f in fields(FilterConfig) if f.name != "day_thresholds"}
    changes: dict[str, Any] = {}
    per_type: dict[str, dict[str, Any]] = {}
    for raw, value in values.items():
        name = str(raw).replace("-", "_")
        kind, dot, sub = name.partition(".")
        if dot:
            per_type.setdefault(kind, {})[sub] = value
            continue
        if name in EVENT_KINDS:
            if not isinstance(value, Mapping):
                raise ValueError(f"{where}: field {name}: expected a table of thresholds")
            per_type.setdefault(name, {}).update(value)
            continue
        if name not in kinds:
            known = ", ".join([*sorted(kinds), *(f"{k}.min_trades" for k in EVENT_KINDS)])
            raise ValueError(f"{where}: unknown filter {raw!r} (known: {known})")
        changes[name] = _coerce(name, kinds[name], value, where)
    cfg = replace(base or FilterConfig(), **changes)
    if per_type:
        cfg = replace(cfg, day_thresholds=_type_rows(per_type, cfg.day_thresholds, where))
    return cfg


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
