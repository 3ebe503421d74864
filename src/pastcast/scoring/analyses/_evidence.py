"""Newly dated evidence from memory-on notebooks, and what it explains (Forecast-Dojo B.6-B.7).

An entry of a notebook written at step t counts as new when its ``date_observed`` could be
seen at step t's cutoff but not at step t - 1's (the paper's tau_(t-1) < d <= tau_t; entries
dated after the cutoff never count). Each model's availability index at an event-step is the
mean of the OTHER models' counts, so a model's forecast change is never explained by its own
recording.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pastcast.cutoff import cutoff_for_day, is_visible
from pastcast.records import Notebook, NotebookProblemKind
from pastcast.runlog import StepRecord
from pastcast.scoring._aggregate import group_rows
from pastcast.scoring._table import Convention, ScoreTable
from pastcast.scoring.analyses._longitudinal import (
    Estimate,
    _event_mean,
    _metric,
    episode_gain,
    evidence_capture,
    transitions,
)


def new_entries(
    notebook: Notebook | None, previous_cutoff: datetime, cutoff: datetime
) -> int | None:
    """Ledger entries of ``notebook`` dated within (previous forecast date, this one]; None when
    there is no notebook. Active and superseded entries both count."""
    return _new_between(_entry_starts(notebook), previous_cutoff, cutoff)


def _entry_starts(notebook: Notebook | None) -> tuple[datetime, ...] | None:
    """When each ledger entry of ``notebook`` could first be seen (None: no notebook)."""
    if notebook is None:
        return None
    return tuple(cutoff_for_day(entry.date_observed) for entry in notebook.evidence_ledger)


def _new_between(
    starts: Sequence[datetime] | None, previous_cutoff: datetime, cutoff: datetime
) -> int | None:
    if starts is None:
        return None
    return sum(is_visible(s, cutoff) and not is_visible(s, previous_cutoff) for s in starts)


def notebook_failures(records: Iterable[StepRecord]) -> Counter[NotebookProblemKind]:
    """Steps whose written notebook was rejected (the previous one carried forward), by kind
    of problem (``unparseable``, ``future_dates``, ...)."""
    out: Counter[NotebookProblemKind] = Counter()
    for r in records:
        if r.episode.notebook_carried:
            out.update({p.kind for p in r.episode.notebook_problems})
    return out


@dataclass(frozen=True)
class EvidenceRow:
    """One model at one event-step (step >= 1: a previous forecast date exists)."""

    agent: str
    event: str
    step: int
    own: float | None
    """Mean new entries over the model's memory-on rollouts with a notebook (None: none)."""
    n_rollouts: int
    available: float | None
    """Leave-one-model-out index A: mean of the other models' ``own`` (None: no peers)."""
    n_peers: int


EVIDENCE_INPUTS = ("agent", "role", "setting", "event_id", "step_index", "cutoff")
"""The step columns ``evidence_index_of`` reads besides the notebooks
(``pastcast.runlog.columns_schema``)."""

_Written = tuple[str, int, str, datetime, tuple[datetime, ...] | None]
"""A notebook the index counts: event, step, agent, cutoff, when each entry could be seen."""


def _writes_evidence(setting: str, role: str, step_index: int) -> bool:
    """The index counts the notebook a step wrote: a memory-on agent's, after its first step."""
    return setting == "memory_on" and role == "agent" and step_index >= 1


class _Steps:
    """What the index needs of every step: each event-step's cutoff (its first step's) and
    the agents forecasting there."""

    def __init__(self) -> None:
        self.cutoffs: dict[tuple[str, int], datetime] = {}
        self.present: dict[tuple[str, int], set[str]] = {}

    def add(self, event_id: str, step_index: int, cutoff: datetime, role: str, agent: str) -> None:
        self.cutoffs.setdefault((event_id, step_index), cutoff)
        if role == "agent":
            self.present.setdefault((event_id, step_index), set()).add(agent)

    def rows(self, written: Iterable[_Written]) -> tuple[EvidenceRow, ...]:
        """The index of the notebooks ``written`` (in record order) among these steps."""
        counts: dict[tuple[str, int], dict[str, list[int]]] = {}
        for event_id, step_index, agent, cutoff, starts in written:
            prev = self.cutoffs.get((event_id, step_index - 1))
            if prev is None:
                continue
            n = _new_between(starts, prev, cutoff)
            if n is not None:
                counts.setdefault((event_id, step_index), {}).setdefault(agent, []).append(n)
        rows = []
        for (event, step), by_agent in sorted(counts.items()):
            own = {a: sum(v) / len(v) for a, v in by_agent.items()}
            for agent in sorted(self.present[(event, step)]):
                peers = [v for a, v in own.items() if a != agent]
                rows.append(
                    EvidenceRow(
                        agent=agent,
                        event=event,
                        step=step,
                        own=own.get(agent),
                        n_rollouts=len(by_agent.get(agent, ())),
                        available=sum(peers) / len(peers) if peers else None,
                        n_peers=len(peers),
                    )
                )
        return tuple(rows)


def evidence_index(records: Iterable[StepRecord]) -> tuple[EvidenceRow, ...]:
    """Own counts and leave-one-model-out availability for every model with a record at each
    event-step that any model's notebook covers. Models are agent names (any setting).
    ``records`` is read once, one at a time (a stream of a large log's records): only each
    memory-on step's ledger dates are kept. From step columns: ``evidence_index_of``."""
    steps = _Steps()
    written: list[_Written] = []
    for r in records:
        steps.add(r.event_id, r.step_index, r.cutoff, r.role, r.agent)
        if _writes_evidence(r.setting, r.role, r.step_index):
            starts = _entry_starts(r.episode.notebook_out)
            written.append((r.event_id, r.step_index, r.agent, r.cutoff, starts))
    return steps.rows(written)


def notebook_rows(columns: Mapping[str, Sequence[Any]]) -> list[int]:
    """The rows of step columns (``EVIDENCE_INPUTS``, as Python lists) whose written notebook
    the evidence index counts (memory-on agents' steps after the first): the only full records
    ``evidence_index_of`` needs."""
    return [
        i
        for i, (setting, role, step) in enumerate(
            zip(columns["setting"], columns["role"], columns["step_index"], strict=True)
        )
        if _writes_evidence(setting, role, step)
    ]


def evidence_index_of(
    batches: Iterable[Mapping[str, Sequence[Any]]], notebooks: Iterable[Notebook | None]
) -> tuple[EvidenceRow, ...]:
    """``evidence_index`` from step columns: ``batches`` of ``EVIDENCE_INPUTS`` (Python lists,
    in record order) and ``notebooks``, the written notebook (``notebook_out``) of each row
    ``notebook_rows`` picks, in the same order. ``notebooks`` is read after the batches, one at
    a time (records streamed by offset): only each one's ledger dates are kept."""
    steps = _Steps()
    picked: list[tuple[str, int, str, datetime]] = []
    for b in batches:
        for e, s, c, role, agent in zip(
            b["event_id"], b["step_index"], b["cutoff"], b["role"], b["agent"], strict=True
        ):
            steps.add(e, s, c, role, agent)
        picked += [
            (b["event_id"][i], b["step_index"][i], b["agent"][i], b["cutoff"][i])
            for i in notebook_rows(b)
        ]
    written = (
        (e, s, a, c, _entry_starts(nb)) for (e, s, a, c), nb in zip(picked, notebooks, strict=True)
    )
    return steps.rows(written)


def evidence_quartiles(index: Sequence[EvidenceRow]) -> tuple[float, float, float]:
    """Quartile cut points of the availability index over indexed model-event-step rows."""
    a = np.array([r.available for r in index if r.available is not None], dtype=np.float64)
    if a.size == 0:
        raise ValueError("evidence_quartiles: no event-step has a peer notebook count")
    q1, q2, q3 = np.quantile(a, [0.25, 0.5, 0.75])
    return float(q1), float(q2), float(q3)


@dataclass(frozen=True)
class QuartileChange:
    group: tuple[str, ...]
    quartile: int
    """1 (least new evidence: A <= first cut point) to 4 (A > third cut point)."""
    n_transitions: int
    n_events: int
    change: Estimate
    """Mean of B(t) - B(t - 1), within events first, then events weighted equally."""


def _step_keys(table: ScoreTable) -> list[tuple[str, str, int]]:
    """Each row's (agent, event, step), as a record names them."""
    agents, agent_names = table.keys["agent"]
    events, event_names = table.keys["event"]
    return [
        (agent_names[a], event_names[e], s)
        for a, e, s in zip(agents.tolist(), events.tolist(), table.step.tolist(), strict=True)
    ]


def changes_by_evidence(
    table: ScoreTable,
    index: Sequence[EvidenceRow],
    by: Sequence[str] = ("setting",),
    metric: str = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[tuple[float, float, float], tuple[QuartileChange, ...]]:
    """Step-to-step score change by quartile of the evaluated model's availability index at
    the later step (Figure 2b); returns the cut points and one row per group and quartile.
    """
    keys = _step_keys(table)
    cuts = np.array(evidence_quartiles(index))
    avail = {(r.agent, r.event, r.step): r.available for r in index}
    values = _metric(table, metric, fallback)
    a_row = np.array([avail.get(k) for k in keys], dtype=np.float64)  # None -> NaN
    quartile = np.where(np.isfinite(a_row), np.searchsorted(cuts, a_row, side="left") + 1, 0)
    event = table.codes("event")
    rng = np.random.default_rng(seed)
    out = []
    for names, rows in group_rows(table, by):
        delta, end = transitions(table, rows, values)
        for q in (1, 2, 3, 4):
            sel = quartile[end] == q
            est, n_events = _event_mean(delta[sel], event[end][sel], bootstrap, rng)
            out.append(QuartileChange(names, q, int(sel.sum()), n_events, est))
    q1, q2, q3 = (float(c) for c in cuts)
    return (q1, q2, q3), tuple(out)


@dataclass(frozen=True)
class CaptureGain:
    agent: str
    kappa: float
    """No-intercept slope of own new entries on peer availability (NaN: no usable pairs)."""
    n_pairs: int
    gain: float
    """Memory-on episode gain G: first minus last scheduled score (positive is improvement)."""
    n_events: int
    searches: float = math.nan
    """Mean search calls per memory-on forecast (NaN: not counted)."""
    reads: float = math.nan
    """Mean document reads (the paper's scrapes) per memory-on forecast (NaN: not counted)."""


@dataclass(frozen=True)
class EvidenceCorrelation:
    models: tuple[CaptureGain, ...]
    n_models: int
    """Models with both kappa and G defined (those the correlation uses)."""
    spearman_rho: float
    p_value: float
    search_rho: float = math.nan
    """Spearman correlation of G with the search count across models (Forecast-Dojo B.7: 0.31);
    NaN with fewer than three models with both."""
    read_rho: float = math.nan
    """The same with the read count (the paper's scrapes: 0.49)."""


def _tool_counts(
    agents: Sequence[str], counts: NDArray[np.float64]
) -> dict[str, tuple[float, float]]:
    """Per agent, the mean of each forecast's search and read calls (``counts``' two columns,
    a row per forecast of ``agents``)."""
    names, at = np.unique(np.asarray(agents, dtype=object), return_inverse=True)
    n = np.bincount(at, minlength=len(names))
    search, read = (np.bincount(at, counts[:, k], len(names)) / n for k in (0, 1))
    rows = zip(names.tolist(), search.tolist(), read.tolist(), strict=True)
    return {str(name): (s, r) for name, s, r in rows}


def _spearman(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Spearman's rho and its p-value over the pairs where both are finite (NaN below three)."""
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(x) and math.isfinite(y)]
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2 or len({y for _, y in pairs}) < 2:
        return math.nan, math.nan  # too few, or a constant side: no rank correlation
    from scipy.stats import spearmanr

    res = spearmanr([x for x, _ in pairs], [y for _, y in pairs])
    return float(res.statistic), float(res.pvalue)


def capture_gain(
    table: ScoreTable,
    index: Sequence[EvidenceRow],
    metric: str = "brier",
    fallback: Convention = "uniform",
    tool_counts: NDArray[np.float64] | None = None,
) -> EvidenceCorrelation:
    """Evidence capture kappa and memory-on episode gain G per model, and their Spearman
    correlation across models (Figure 2c; NaN with fewer than three models), and G's
    correlation with the mean search and read counts per memory-on forecast (B.7).
    ``tool_counts``: each row's search and read calls, as ``Runs.tool_counts`` (none: NaN
    counts)."""
    setting, settings = table.keys["setting"]
    role, roles = table.keys["role"]
    mask = np.array([settings[c] == "memory_on" for c in setting.tolist()], dtype=bool) & (
        np.array([roles[c] == "agent" for c in role.tolist()], dtype=bool)
    )
    on_table = table.take(mask) if mask.any() else None
    agent_codes, agent_names = table.keys["agent"]
    on_agents = [agent_names[c] for c in agent_codes[mask].tolist()]
    on_counts = tool_counts[mask] if tool_counts is not None else None
    pairs: dict[str, tuple[list[float], list[float]]] = {}
    for r in index:
        if r.own is not None and r.available is not None:
            own, avail = pairs.setdefault(r.agent, ([], []))
            own.append(r.own)
            avail.append(r.available)
    tools = _tool_counts(on_agents, on_counts) if on_counts is not None and on_agents else {}
    gains: dict[str, tuple[float, int]] = {}
    if on_table is not None:
        for g in episode_gain(on_table, ("agent",), metric, fallback, bootstrap=0):
            gains[g.group[0]] = (g.gain.mean, g.n_events)
    models = []
    for agent in sorted(set(pairs) | set(gains)):
        own, avail = pairs.get(agent, ([], []))
        kappa = evidence_capture(own, avail) if any(avail) else math.nan
        gain, n_events = gains.get(agent, (math.nan, 0))
        searches, reads = tools.get(agent, (math.nan, math.nan))
        models.append(CaptureGain(agent, kappa, len(own), gain, n_events, searches, reads))
    ok = [m for m in models if math.isfinite(m.kappa) and math.isfinite(m.gain)]
    rho, p = _spearman([m.kappa for m in ok], [m.gain for m in ok])
    gains_of = [m.gain for m in models]
    search_rho = _spearman([m.searches for m in models], gains_of)[0]
    read_rho = _spearman([m.reads for m in models], gains_of)[0]
    return EvidenceCorrelation(tuple(models), len(ok), rho, p, search_rho, read_rho)
