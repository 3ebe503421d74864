"""Hindcast's figures: per-topic net recoveries of retrieval against no tools, the lookback
sweep, and the market's belief against the agents' forecasts for chosen events."""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from datetime import datetime, time
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from pastcast.reports.figures._base import (
    MAX_PANELS,
    ReportData,
    date_axis,
    new_figure,
)
from pastcast.runlog import column_probs
from pastcast.scoring import lookback_summary, pipeline_recoveries

MARKET_EVENTS = 4
"""Events drawn by the market figure when none are chosen (those with the most steps)."""


def net_recoveries(data: ReportData) -> Figure | None:
    """Per topic (category), forecasts the retrieval pipeline (memory-free) got right where the
    same agent without tools got wrong, minus the reverse (right: the truth is the only top
    label)."""
    table = data.runs.base_table
    agent = table.codes("agent")
    setting, settings = table.keys["setting"]
    by_agent: dict[int, set[str]] = defaultdict(set)
    for a, st in set(zip(agent.tolist(), setting.tolist(), strict=True)):
        by_agent[a].add(settings[st])
    both = [a for a, st in by_agent.items() if {"memory_free", "no_tools"} <= st]
    if not both:
        return None
    counts = pipeline_recoveries(
        table.take(np.isin(agent, both)),
        {"setting": "memory_free"},
        {"setting": "no_tools"},
        ("agent", "run_id"),
    )
    if not counts:
        return None
    fig = new_figure(1, 6.0, max(2.5, 0.45 * len(counts) + 1.2))
    ax = fig.subplots()
    pos = np.arange(len(counts))
    ax.barh(pos, [c.recoveries for c in counts], color="C2", alpha=0.35, label="recoveries")
    ax.barh(pos, [-c.regressions for c in counts], color="C3", alpha=0.35, label="regressions")
    ax.barh(pos, [c.net for c in counts], height=0.35, color="k", label="net")
    ax.set_yticks(pos, [f"{c.topic} (n={c.n})" for c in counts], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_xlabel("forecasts: memory-free right, no-tools wrong (and the reverse)")
    ax.legend(fontsize=8)
    return fig


def lookback_sweep(data: ReportData) -> Figure | None:
    """Brier and accuracy per lookback fraction (the lookback schedule's steps), per agent and
    setting, with 95% intervals; drawn when the report is given the fractions."""
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
    axes[0].set(ylabel="mean Brier [0, 2]", xlabel="lookback fraction")
    axes[1].set(ylabel="accuracy", xlabel="lookback fraction")
    axes[1].legend(fontsize=8)
    return fig


def _chosen(data: ReportData) -> list[str]:
    event, events = data.table.keys["event"]
    if data.events:
        known = {events[e] for e in np.unique(event).tolist()}
        return [e for e in data.events if e in known]
    steps = set(zip(event.tolist(), data.table.step.tolist(), strict=True))
    per_event = Counter(events[e] for e, _ in steps)
    return [e for e, _ in sorted(per_event.items(), key=lambda kv: (-kv[1], kv[0]))][:MARKET_EVENTS]


_MARKET_COLUMNS = (
    "event_id",
    "agent",
    "setting",
    "role",
    "cutoff",
    "usable",
    "probs",
    "truth",
    "labels",
    "market_probs",
)
"""The step columns the market figure draws, of its events' steps."""


def _market_curve(
    data: ReportData, event_id: str, label: str, steps: list[dict[str, Any]]
) -> tuple[list[datetime], list[float]]:
    ds = data.runs.dataset
    if ds is not None and event_id in ds.beliefs:
        pts = [(b.day, b.probs.get(label)) for b in ds.beliefs[event_id]]
        return [datetime.combine(d, time()) for d, p in pts if p is not None], [
            float(p) for _, p in pts if p is not None
        ]
    seen: dict[datetime, float] = {}
    for s in steps:
        mp = column_probs(s["market_probs"])
        if mp and label in mp:
            seen.setdefault(s["cutoff"], mp[label] / (sum(mp.values()) or 1.0))
    xs = sorted(seen)
    return xs, [seen[x] for x in xs]


def _event_steps(data: ReportData, events: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The step columns of each of ``events``' steps, in record order."""
    codes, names = data.table.keys["event"]
    wanted = [names.index(e) for e in events]
    rows = np.flatnonzero(np.isin(codes, wanted))
    cols = data.runs.take(rows, _MARKET_COLUMNS)
    out: dict[str, list[dict[str, Any]]] = {e: [] for e in events}
    for i in range(rows.size):
        out[cols["event_id"][i]].append({c: cols[c][i] for c in _MARKET_COLUMNS})
    return out


def market_against_forecasts(data: ReportData) -> Figure | None:
    """The market's belief against each agent's forecasts for chosen events: the probability of
    "Yes" (binary) or of the realised outcome (multi-option), at each forecast date."""
    events = _chosen(data)
    if not events:
        return None
    of_event = _event_steps(data, events)
    fig = new_figure(len(events), 4.6, 3.4)
    cols = min(len(events), 4)
    axes = fig.subplots(-(-len(events) // cols), cols, squeeze=False)
    for ax, event_id in zip(axes.flat, events, strict=False):
        steps = of_event[event_id]
        truth = steps[0]["truth"]
        labels = steps[0]["labels"]
        label = "Yes" if tuple(labels) == ("Yes", "No") else truth
        xs, ys = _market_curve(data, event_id, label, steps)
        ax.plot(xs, ys, color="0.4", lw=1.5, label="market")
        by_agent: dict[str, dict[datetime, list[float]]] = defaultdict(lambda: defaultdict(list))
        for s in steps:
            if s["role"] == "reference" or not s["usable"]:
                continue
            probs = column_probs(s["probs"]) or {}
            total = sum(v for v in probs.values() if v > 0) or 1.0
            p = max(probs.get(label, 0.0), 0.0) / total
            by_agent[f"{s['agent']} / {s['setting']}"][s["cutoff"]].append(p)
        for name, pts in sorted(by_agent.items())[:8]:
            xs2 = sorted(pts)
            ax.plot(xs2, [float(np.mean(pts[x])) for x in xs2], "o-", ms=3, lw=1, label=name)
        outcome = 1.0 if label == truth else 0.0
        ax.axhline(outcome, color="k", ls=":", lw=1)
        title = event_id
        if data.runs.dataset is not None:
            title = f"{event_id}: {data.runs.dataset.event(event_id).title}"[:60]
        ax.set_title(f"{title}\noutcome: {truth}", fontsize=8)
        ax.set(ylim=(-0.02, 1.02), ylabel=f"P({label})")
        date_axis(ax, 5)
    for ax in list(axes.flat)[len(events) :]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=6)
    return fig


TOPIC_OTHER_BELOW = 4
"""Topics with fewer markets are drawn as one "Other" slice (Hindcast Figure 3 aggregates its
smaller topics; its Figure 6 shows topics with at least four markets)."""


def topic_counts(data: ReportData, other_below: int = TOPIC_OTHER_BELOW) -> list[tuple[str, int]]:
    """Markets per topic among the events the runs forecast (the dataset's category where it is
    known, else the step's: its event's first), largest first, the small ones summed as
    ``Other`` (last)."""
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
    big = sorted(
        ((t, n) for t, n in counts.items() if n >= other_below), key=lambda x: (-x[1], x[0])
    )
    other = sum(n for n in counts.values() if n < other_below)
    return big + ([("Other", other)] if other else [])


def topic_distribution(data: ReportData) -> Figure | None:
    """Topic distribution of the markets forecast (Hindcast Figure 3): each slice labelled with
    its percent of the set, the legend with the raw market count per topic; topics with fewer
    than four markets are summed as Other."""
    counts = topic_counts(data)
    if not counts:
        return None
    fig = new_figure(1, 6.0, 4.0)
    ax = fig.subplots()
    sizes = [n for _, n in counts]
    wedges = ax.pie(
        sizes, autopct="%1.0f%%", startangle=90, counterclock=False, textprops={"fontsize": 8}
    )[0]
    ax.legend(
        wedges,
        [f"{t} ({n})" for t, n in counts],
        fontsize=8,
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
    )
    ax.set_title(f"{sum(sizes)} markets by topic", fontsize=9)
    ax.axis("equal")
    return fig
