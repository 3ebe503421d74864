"""Paired comparisons as reports: Forecast-Dojo's Table 4 for two runs (``pastcast compare``)
and the paired table of two agents or settings (``pastcast score --paired``, the report).

Every number comes from ``pastcast.scoring.paired_comparison`` on the steps both sides
recorded: each side's mean on those steps and the paired difference (other - base, taken per
step before any rounding) with its 95% interval resampling events.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from pastcast.reports._runs import Runs
from pastcast.reports._scorecard import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED
from pastcast.reports._tables import TextTable, fmt_number
from pastcast.scoring import (
    Convention,
    PairedComparison,
    PairedDifference,
    ScoreTable,
    metric_list,
    paired_comparison,
)
from pastcast.scoring.analyses import RESOURCES

_KINDS = (("binary", "binary"), ("multi", "multi-choice"))
"""Kinds of event the first metric is also compared on (Table 4's Brier rows), as rows name them."""
_EXTRAS = (
    ("Tool calls / forecast", "tool_calls", 2, False),
    ("Parser acceptance", "parser_acceptance", 1, True),
)
"""Per-step values compared beside the metrics: (row, name, digits, in percent)."""


@dataclass(frozen=True)
class ComparisonRow:
    label: str
    metric: str
    kind: str | None
    n: int
    """Paired steps behind the row."""
    base: float
    other: float
    delta: PairedDifference
    """other - base, with its interval."""
    digits: int = 3
    percent: bool = False
    """Shown in percent, its difference in percentage points."""


@dataclass(frozen=True)
class Comparison:
    """``other`` against ``base`` on the steps both recorded (overall and per row)."""

    base_name: str
    other_name: str
    overall: PairedComparison
    rows: tuple[ComparisonRow, ...]

    def as_dict(self) -> dict[str, Any]:
        o = self.overall
        return {
            "base": self.base_name,
            "other": self.other_name,
            "difference": "other - base",
            "base_selection": dict(o.b),
            "other_selection": dict(o.a),
            "fallback": o.fallback,
            "bootstrap": o.bootstrap,
            "seed": o.seed,
            "n_base": o.n_b,
            "n_other": o.n_a,
            "n_matched": o.n_matched,
            "only_base": o.only_b,
            "only_other": o.only_a,
            "n_events": o.n_events,
            "unusable_base": o.unusable_b,
            "unusable_other": o.unusable_a,
            "rows": [
                {
                    **{f.name: getattr(r, f.name) for f in fields(r)[:6]},  # label..other
                    "delta": r.delta.mean,
                    "ci_low": r.delta.ci_low,
                    "ci_high": r.delta.ci_high,
                }
                for r in self.rows
            ],
        }


def selection_name(where: Mapping[str, str]) -> str:
    """``agent@setting`` (and ``run RUN``) of a selection, as the tables name it."""
    name = where.get("agent", "")
    if "setting" in where:
        name += f"@{where['setting']}"
    if "run_id" in where:
        name = f"{name} (run {where['run_id']})" if name else f"run {where['run_id']}"
    return name or "all"


def compare_selections(
    runs: Runs,
    base: Mapping[str, str],
    other: Mapping[str, str],
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    names: tuple[str, str] | None = None,
) -> Comparison:
    """Table 4's rows for ``other`` against ``base`` (selections of the runs' score table): the
    first metric (Brier) overall and on binary and multi-choice events, every other paired
    metric (accuracy, log loss), tool calls per forecast and parser acceptance (the share of
    usable forecasts), each side on the paired steps and the paired difference; ``names``: what
    the tables call base and other (default: their selections). Raises ``ValueError`` as
    ``paired_comparison`` does."""
    table = runs.base_table
    paired = [m for m in metric_list() if m.paired]
    first = paired[0]
    extra = {  # per step, its tool calls and whether it was usable
        "tool_calls": runs.resources()[:, RESOURCES.index("tool_calls")],
        "parser_acceptance": table.usable.astype(np.float64),
    }
    overall = paired_comparison(
        table, other, base, [m.name for m in paired], fallback, bootstrap, seed, extra=extra
    )
    kinds, kind_names = table.keys["kind"]
    out = [_row(first.title, first.name, None, overall, first.digits, first.percent)]
    for event_kind, word in _KINDS:
        rows = np.flatnonzero(
            kinds == (kind_names.index(event_kind) if event_kind in kind_names else -1)
        )
        by_kind = paired_comparison(
            table.take(rows), other, base, (first.name,), fallback, bootstrap, seed
        )
        label = f"{first.title} ({word})"
        out.append(_row(label, first.name, event_kind, by_kind, first.digits, first.percent))
    out += [_row(m.title, m.name, None, overall, m.digits, m.percent) for m in paired[1:]]
    out += [_row(label, name, None, overall, d, pct) for label, name, d, pct in _EXTRAS]
    base_name, other_name = names or (selection_name(base), selection_name(other))
    return Comparison(base_name, other_name, overall, tuple(out))


def _row(
    label: str, name: str, kind: str | None, c: PairedComparison, digits: int, percent: bool
) -> ComparisonRow:
    d, shown = c[name], 1 if percent else digits  # a rate in percent to one decimal
    return ComparisonRow(label, name, kind, d.n_matched, d.mean_b, d.mean_a, d, shown, percent)


def _interval(d: PairedDifference, digits: int, scale: float = 1.0) -> str:
    if not (math.isfinite(d.ci_low) and math.isfinite(d.ci_high)):
        return "-"
    low = fmt_number(d.ci_low * scale, digits, signed=True)
    high = fmt_number(d.ci_high * scale, digits, signed=True)
    return f"[{low}, {high}]"


def _delta(d: PairedDifference, digits: int, percent: bool) -> tuple[str, str]:
    """The difference and its interval; a rate's in percentage points, as Table 4 reports."""
    if percent:
        return fmt_number(d.mean * 100, 1, signed=True), _interval(d, 1, 100.0)
    return fmt_number(d.mean, digits, signed=True), _interval(d, digits)


def comparison_table(c: Comparison, title: str = "") -> TextTable:
    """One row per metric: base, other, the paired difference and its 95% interval."""
    o = c.overall
    rows = tuple(
        (
            r.label,
            str(r.n),
            fmt_number(r.base, r.digits, percent=r.percent),
            fmt_number(r.other, r.digits, percent=r.percent),
            *_delta(r.delta, r.digits, r.percent),
        )
        for r in c.rows
    )
    rates = " and ".join(r.label.lower() for r in c.rows if r.percent and r.kind is None)
    note = (
        f"{o.n_matched} steps both recorded ({o.n_events} events; {o.only_b} only in "
        f"{c.base_name}, {o.only_a} only in {c.other_name}, left out). Paired differences "
        f"({c.other_name} - {c.base_name}) are computed per step before rounding; 95% CIs "
        f"resample events ({o.bootstrap} draws, seed {o.seed}); unusable forecasts scored as "
        f"{o.fallback} ({o.unusable_b} of {c.base_name}, {o.unusable_a} of {c.other_name}). "
        f"{rates.capitalize()} differences are in percentage points."
    )
    return TextTable(
        title or f"{c.other_name} against {c.base_name}",
        ("metric", "n", c.base_name, c.other_name, "delta", "95% CI"),
        rows,
        len(rows),
        1,
        note,
    )


def paired_table(pairs: Sequence[PairedComparison], title: str = "Paired differences") -> TextTable:
    """One row per pair: the steps compared, each side's mean of the first metric (Brier) and
    the paired differences (a - b) of every paired metric with their intervals."""
    rows = []
    fallback, draws = "uniform", 0
    runs = {w.get("run_id") for p in pairs for w in (p.a, p.b)}
    shown = [m for m in metric_list() if m.paired]
    first = shown[0]

    def name(where: Mapping[str, str]) -> str:  # the run only where there are several
        return selection_name({k: v for k, v in where.items() if len(runs) > 1 or k != "run_id"})

    for p in pairs:
        fallback, draws = p.fallback, p.bootstrap
        b = p[first.name]
        rows.append(
            (
                name(p.a),
                name(p.b),
                str(p.n_matched),
                str(p.n_events),
                f"{p.only_a}/{p.only_b}",
                fmt_number(b.mean_a, first.digits),
                fmt_number(b.mean_b, first.digits),
                *(cell for m in shown for cell in _delta(p[m.name], m.digits, m.percent)),
            )
        )
    return TextTable(
        title,
        (
            "a",
            "b",
            "paired steps",
            "events",
            "only a/b",
            f"{first.label} a",
            f"{first.label} b",
            *(
                column
                for m in shown
                for column in (
                    (f"Δ {m.label} (pts)", "95% CI (pts)")
                    if m.percent
                    else (f"Δ {m.label}", "95% CI")
                )
            ),
        ),
        tuple(rows),
        len(rows),
        2,
        f"Differences a - b over the steps (event, step, rollout) both recorded, computed per step "
        f"before rounding; 95% CIs resample events ({draws} draws); unusable forecasts scored as "
        f"{fallback}; steps only one side recorded are left out and counted (only a/b).",
    )


def _names(table: ScoreTable, column: str) -> tuple[str, ...]:
    codes, names = table.keys[column]
    return tuple(names[c] for c in np.unique(codes))


def selection_of(text: str, table: ScoreTable) -> dict[str, str] | None:
    """The selection ``text`` names in ``table``: a run id, ``AGENT@SETTING`` or ``AGENT``
    (None when it names none of them)."""
    if text in _names(table, "run_id"):
        return {"run_id": text}
    agent, at, setting = text.rpartition("@")
    if at and agent in _names(table, "agent") and setting in _names(table, "setting"):
        return {"agent": agent, "setting": setting}
    return {"agent": text} if text in _names(table, "agent") else None


def default_pairs(table: ScoreTable) -> list[tuple[dict[str, str], dict[str, str]]]:
    """The (base, other) pairs a report shows without being asked: each other setting of an
    agent against its memory-free forecasts in the same run, and the same agent and setting in
    a later run against the first run that has it; only pairs sharing a step."""
    if not len(table):
        return []
    cols = ("agent", "setting", "run_id")
    codes = np.stack([table.codes(c) for c in cols], axis=1)
    found, gid = np.unique(codes, axis=0, return_inverse=True)
    gid = gid.reshape(-1)
    step = np.stack([table.codes("event"), table.step, table.rollout], axis=1)
    _, sid = np.unique(step, axis=0, return_inverse=True)
    sid = sid.reshape(-1)
    groups = {
        tuple(table.keys[c][1][int(code)] for c, code in zip(cols, row, strict=True)): g
        for g, row in enumerate(found)
    }
    steps_of = [np.unique(sid[gid == g]) for g in range(found.shape[0])]

    def shared(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
        return bool(np.intersect1d(steps_of[groups[x]], steps_of[groups[y]]).size)

    def where(g: tuple[str, ...]) -> dict[str, str]:
        return dict(zip(cols, g, strict=True))

    pairs = []
    for agent, setting, run in sorted(groups):
        base = (agent, "memory_free", run)
        if setting != "memory_free" and base in groups and shared(base, (agent, setting, run)):
            pairs.append((where(base), where((agent, setting, run))))
    run_codes, run_names = table.keys["run_id"]
    present, first_row = np.unique(run_codes, return_index=True)
    runs = [str(run_names[int(c)]) for c in present[np.argsort(first_row)]]  # in log order
    for agent, setting, run in sorted(groups):
        first = next(r for r in runs if (agent, setting, r) in groups)
        if run != first and shared((agent, setting, first), (agent, setting, run)):
            pairs.append((where((agent, setting, first)), where((agent, setting, run))))
    return pairs
