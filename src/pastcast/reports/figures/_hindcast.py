"""Hindcast's figures: per-topic net recoveries of retrieval against no tools, the lookback
sweep, and the market's belief against the agents' forecasts for chosen events."""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from typing import Any, cast

import numpy as np

from pastcast.reports._runs import StepRow, event_curves, step_row
from pastcast.reports.figures._base import (
    MAX_PANELS,
    Drawn,
    ReportData,
    date_axis,
    legend_beside,
    new_figure,
    panel_axes,
    wrapped,
)
from pastcast.scoring import TABLE_INPUTS
from pastcast.scoring.analyses import lookback_summary, pipeline_recoveries

MARKET_EVENTS = 4
"""Events drawn by the market figure when none are chosen (those with the most steps)."""


def net_recoveries(data: ReportData) -> Drawn | None:
    """Per topic, forecasts retrieval got right and no tools got wrong, minus the reverse."""
    table = data.runs.base_table
    agent = table.codes("agent")
    setting, settings = table.keys["setting"]
    by_agent: dict[int, set[str]] = defaultdict(set)
    for a, st in set(zip(agent.tolist(), setting.tolist(), strict=True)):
        by_agent[a].add(settings[st])
    both = sorted(a for a, st in by_agent.items() if {"memory_free", "no_tools"} <= st)
    names = table.keys["agent"][1]
    per_agent = []
    for a in both[:MAX_PANELS]:
        counts = pipeline_recoveries(
            table.take(agent == a),
            {"setting": "memory_free"},
            {"setting": "no_tools"},
            ("agent", "run_id"),
        )
        if counts:
            per_agent.append((names[a], counts))
    if not per_agent:
        return None
    rows = max(len(c) for _, c in per_agent)
    fig = new_figure(len(per_agent), 5.0, max(2.5, 0.4 * rows + 1.4))
    for ax, (name, counts) in zip(panel_axes(fig, len(per_agent)), per_agent, strict=True):
        pos = np.arange(len(counts))
        ax.barh(pos, [c.recoveries for c in counts], color="C2", alpha=0.35, label="recoveries")
        ax.barh(pos, [-c.regressions for c in counts], color="C3", alpha=0.35, label="regressions")
        ax.barh(pos, [c.net for c in counts], height=0.35, color="k", label="net")
        ax.set_yticks(pos, [wrapped(f"{c.topic} (n={c.n})", 1.6, 8) for c in counts], fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_xlabel("forecasts (count)", fontsize=8)
        ax.set_title(wrapped(name, 4.8, 9), fontsize=9)
        legend_beside(ax, 7)
    return Drawn(
        fig,
        "Net recoveries of the retrieval pipeline per topic (Hindcast), one panel per agent "
        "run both memory-free and without tools: the forecasts (count) the memory-free setting "
        "got right where the same agent without tools got wrong (recoveries, right of zero), "
        "those it got wrong where no tools got right (regressions, left of zero) and their "
        "difference (net, black). Right means the realised outcome is the only top label; n "
        "is the number of paired forecasts of the topic.",
    )


def lookback_sweep(data: ReportData) -> Drawn | None:
    """Brier and accuracy per lookback fraction, per agent and setting."""
    if not data.lookback:
        return None
    rows, _ = lookback_summary(
        data.runs.base_table,
        data.lookback,
        fallback=data.fallback,
        bootstrap=data.card.bootstrap,
        seed=data.card.seed,
    )
    if not rows:
        return None
    fig = new_figure(2, 4.6, 3.4)
    axes = fig.subplots(1, 2)
    series: dict[tuple[str, ...], list[tuple[str, float, float, float, float, float, float]]]
    series = defaultdict(list)
    for s in rows:
        b, a = s.metrics["brier"], s.metrics["accuracy"]
        series[s.group[:-1]].append(
            (s.group[-1], b.mean, b.ci_low, b.ci_high, a.mean, a.ci_low, a.ci_high)
        )
    for group, pts in list(series.items())[: MAX_PANELS * 2]:
        x = [p[0] for p in pts]
        for ax, k in ((axes[0], 1), (axes[1], 4)):
            y = np.array([p[k] for p in pts])
            lo = np.array([p[k + 1] for p in pts])
            hi = np.array([p[k + 2] for p in pts])
            ax.errorbar(x, y, yerr=[y - lo, hi - y], marker="o", capsize=2, label=" / ".join(group))
    axes[0].set(ylabel="mean Brier (multiclass, 0 to 2)", xlabel="lookback fraction")
    axes[1].set(ylabel="accuracy (share right)", xlabel="lookback fraction")
    legend_beside(axes[1], 8)
    return Drawn(
        fig,
        "Mean Brier score (multiclass, 0 to 2; lower is better, left) and accuracy (share "
        "right, with fractional ties; right) at each lookback fraction of the schedule, the "
        "share of an event's span elapsed at the forecast date, one line per agent and setting, "
        f"with 95% event-bootstrap intervals ({data.card.bootstrap} draws).",
    )


def _chosen(data: ReportData) -> list[str]:
    event, events = data.table.keys["event"]
    if data.events:
        known = {events[e] for e in np.unique(event).tolist()}
        return [e for e in data.events if e in known]
    steps = set(zip(event.tolist(), data.table.step.tolist(), strict=True))
    per_event = Counter(events[e] for e, _ in steps)
    return [e for e, _ in sorted(per_event.items(), key=lambda kv: (-kv[1], kv[0]))][:MARKET_EVENTS]


_STEP_COLUMNS = (*TABLE_INPUTS, "cutoff", "failure_reason", "market_age_days")
"""The step columns of a ``StepRow``: the market figure reads them of its events' steps."""


def market_against_forecasts(data: ReportData) -> Drawn | None:
    """The market's belief against each agent's forecasts for chosen events."""
    events = _chosen(data)
    if not events:
        return None
    # the steps of each event, in record order
    codes, names = data.table.keys["event"]
    rows = np.flatnonzero(np.isin(codes, [names.index(e) for e in events]))
    cols = data.runs.take(rows, _STEP_COLUMNS)
    of_event: dict[str, list[StepRow]] = {e: [] for e in events}
    for i in range(rows.size):
        row = step_row({c: cols[c][i] for c in _STEP_COLUMNS})
        of_event[row.event_id].append(row)
    fig = new_figure(len(events), 4.6, 3.6)
    axes = panel_axes(fig, len(events))
    for ax, event_id in zip(axes, events, strict=True):
        steps = of_event[event_id]
        truth = steps[0].grading.truth
        label, market, by_agent = event_curves(steps, data.runs.dataset)
        xs = sorted(market)  # dates: matplotlib converts them
        ax.plot(cast(Any, xs), [market[x] for x in xs], color="0.4", lw=1.5, label="market")
        for name, pts in sorted(by_agent.items())[:8]:
            xs = sorted(pts)
            ax.plot(cast(Any, xs), [pts[x] for x in xs], "o-", ms=3, lw=1, label=name)
        outcome = 1.0 if label == truth else 0.0
        ax.axhline(outcome, color="k", ls=":", lw=1)
        title = event_id
        if data.runs.dataset is not None:
            title = f"{event_id}: {data.runs.dataset.event(event_id).title}"
        ax.set_title(wrapped(f"{title}\noutcome: {truth}", 4.4, 8), fontsize=8)
        ax.set(ylim=(-0.02, 1.02))
        ax.set_ylabel(wrapped(f"P({label})", 3.0, 9), fontsize=9)
        date_axis(ax, 5)
    legend_beside(axes[0], 6)
    which = "chosen events" if data.events else "events with the most forecast dates"
    return Drawn(
        fig,
        "The market's belief (grey line) against each agent's mean forecast at each forecast "
        f"date (one line per agent and setting) for the {len(events)} {which}"
        ", one panel per event: the probability of Yes for a Yes/No market, else of the "
        "realised outcome; the dotted line marks the outcome (1 if it happened).",
    )


TOPIC_OTHER_BELOW = 4
"""Topics with fewer markets are drawn as one "Other" bar (Hindcast Figure 3 aggregates its
smaller topics; its Figure 6 shows topics with at least four markets)."""

OTHER = "Other"


def topic_counts(data: ReportData, other_below: int = TOPIC_OTHER_BELOW) -> list[tuple[str, int]]:
    """Markets per topic among the events the runs forecast (the dataset's category where it is
    known, else the step's: its event's first), largest first, the small ones and any topic
    already named other summed as one ``Other`` (last)."""
    table = data.table
    event, events = table.keys["event"]
    category, categories = table.keys["category"]
    ids, first = np.unique(event, return_index=True)
    ds = data.runs.dataset
    topics: dict[str, str] = {}
    for e, c in zip(ids.tolist(), category[first].tolist(), strict=True):
        event_id, found = events[e], categories[c]
        if ds is not None:
            with contextlib.suppress(KeyError):  # an event the dataset does not hold
                found = ds.event(event_id).category or found
        topics[event_id] = found or "unknown"
    counts = Counter(topics.values())
    small = {t for t, n in counts.items() if n < other_below or t.strip().lower() == "other"}
    big = sorted(((t, n) for t, n in counts.items() if t not in small), key=lambda x: (-x[1], x[0]))
    other = sum(counts[t] for t in small)
    return big + ([(OTHER, other)] if other else [])


def topic_distribution(data: ReportData) -> Drawn | None:
    """Topic distribution of the markets forecast (Hindcast Figure 3)."""
    counts = topic_counts(data)
    if not counts:
        return None
    total = sum(n for _, n in counts)
    fig = new_figure(1, 6.0, max(2.2, 0.32 * len(counts) + 1.0))
    ax = fig.subplots()
    pos = np.arange(len(counts))
    colours = ["0.6" if t == OTHER else "C0" for t, _ in counts]
    ax.barh(pos, [n for _, n in counts], color=colours)
    ax.set_yticks(pos, [wrapped(t, 2.0, 8) for t, _ in counts], fontsize=8)
    ax.invert_yaxis()
    for y, (_, n) in zip(pos, counts, strict=True):
        ax.annotate(f"{n} ({n / total:.0%})", (n, y), xytext=(3, 0), textcoords="offset points",
                    va="center", fontsize=8)  # fmt: skip
    ax.set_xlim(0, max(n for _, n in counts) * 1.18)
    ax.set_xlabel("markets (count)")
    return Drawn(
        fig,
        f"Topics of the {total} markets forecast (Hindcast Figure 3), one bar per topic with "
        f"its number of markets (count) and its share of the set; topics with fewer than "
        f"{TOPIC_OTHER_BELOW} markets, and any topic named other, are summed as one Other bar "
        "(grey).",
    )
