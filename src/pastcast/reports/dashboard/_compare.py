"""The dashboard's comparison page: two agents, settings or runs on the steps both recorded.

The paired differences come from ``pastcast.scoring.paired_comparison`` (the same numbers as
``pastcast score --paired``); the page adds the steps where the two disagree most about the
outcome, each with links to both trajectories. Agents are shown by short labels, their full
spec in the ``title`` attribute.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED
from pastcast.reports.dashboard._index import RunIndex
from pastcast.scoring import PairedComparison, distinct_rows, metric_list, paired_comparison

SHORT = 28
"""Characters of an agent label shown; the rest is in its title attribute."""
TOP = 25
"""Steps listed where the two disagree most."""


def _short(name: str) -> str:
    """``tool-agent:model=openai:gpt-4o,top_k=5`` -> ``tool-agent · gpt-4o``: the registry name
    and the model's last part, cut to ``SHORT`` characters."""
    head, _, args = name.partition(":")
    model = ""
    for part in args.split(","):
        key, eq, value = part.partition("=")
        if eq and key.strip() == "model":
            model = value.strip().rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    label = f"{head} · {model}" if model else (head if "=" in args else name)
    return label if len(label) <= SHORT else label[: SHORT - 1] + "…"


def short_labels(names: Iterable[str]) -> dict[str, str]:
    """A short label per agent name, numbered where two names would look the same."""
    out: dict[str, str] = {}
    taken: dict[str, int] = {}
    for name in sorted(set(names)):
        label = _short(name)
        taken[label] = taken.get(label, 0) + 1
        out[name] = label if taken[label] == 1 else f"{label} #{taken[label]}"
    return out


@dataclass(frozen=True)
class Group:
    """One agent and setting of one run: a side of a comparison."""

    agent: str
    setting: str
    run_id: str

    @property
    def key(self) -> str:
        return f"{self.agent}@{self.setting}@{self.run_id}"

    @classmethod
    def parse(cls, key: str) -> Group | None:
        rest, at, run = key.rpartition("@")
        agent, at2, setting = rest.rpartition("@")
        return cls(agent, setting, run) if at and at2 and agent else None

    def where(self) -> dict[str, str]:
        return {"agent": self.agent, "setting": self.setting, "run_id": self.run_id}


def _groups(index: RunIndex) -> list[Group]:
    t = index.table
    cols = ("agent", "setting", "run_id")
    _, found = distinct_rows([t.codes(c) for c in cols])
    return [Group(*(t.name(c, int(k)) for c, k in zip(cols, row, strict=True))) for row in found]


def _default(groups: list[Group]) -> tuple[Group, Group] | None:
    """Another setting of an agent against its memory-free forecasts, else the first two."""
    for g in groups:
        if g.setting != "memory_free":
            base = Group(g.agent, "memory_free", g.run_id)
            if base in groups:
                return base, g
    return (groups[0], groups[1]) if len(groups) > 1 else None


def _disagreements(index: RunIndex, cmp: PairedComparison) -> list[dict[str, Any]]:
    """The matched steps by how far apart the two put the outcome's probability."""
    p = index.table.truth_prob("uniform")
    brier = index.metrics["brier"]
    ra, rb = cmp.rows_a, cmp.rows_b
    gap = np.abs(p[ra] - p[rb])
    order = np.argsort(-gap, kind="stable")[:TOP]
    shown = index.rows([int(ra[k]) for k in order])
    rows = []
    for k, s in zip(order, shown, strict=True):
        ia, ib = int(ra[k]), int(rb[k])
        rows.append(
            {
                "event": s.event_id,
                "step": s.step_index,
                "cutoff": s.cutoff,
                "rollout": s.rollout,
                "truth": s.grading.truth,
                "p_a": float(p[ia]),
                "p_b": float(p[ib]),
                "brier_a": float(brier[ia]),
                "brier_b": float(brier[ib]),
                "diff": float(brier[ia] - brier[ib]),
                "step_a": ia,
                "step_b": ib,
            }
        )
    return rows


def add_comparison_page(
    app: FastAPI, index: RunIndex, render: Callable[..., HTMLResponse]
) -> Mapping[str, str]:
    """Register ``GET /compare?a=AGENT@SETTING@RUN&b=...`` on ``app``; returns the short label
    of every agent (for the other pages)."""
    groups = _groups(index)
    labels = short_labels(g.agent for g in groups)
    cache: dict[tuple[Group, Group], PairedComparison] = {}
    lower = " and ".join(m.label for m in metric_list() if m.paired and m.better == "lower")
    better = f"Lower {lower} are better." if lower else ""  # "Lower Brier and log loss ..."

    @app.get("/compare", response_class=HTMLResponse)
    def compare(a: str = "", b: str = "") -> HTMLResponse:
        chosen = _default(groups) if not a and not b else (Group.parse(a), Group.parse(b))
        error = ""
        cmp = None
        pair = None
        if chosen is not None:
            ga, gb = chosen
            if ga is None or gb is None or ga not in groups or gb not in groups:
                error = "Choose two agents of the runs."
            elif ga == gb:
                error = "Choose two different agents, settings or runs."
            else:
                pair = (ga, gb)
                if pair not in cache:
                    cache[pair] = paired_comparison(
                        index.table,
                        ga.where(),
                        gb.where(),
                        bootstrap=BOOTSTRAP_DRAWS,
                        seed=BOOTSTRAP_SEED,
                    )
                cmp = cache[pair]
                if cmp.n_matched == 0:
                    error = "These two share no step (event, step, rollout)."
        return render(
            "compare.html.j2",
            400 if error and (a or b) else 200,
            groups=groups,
            labels=labels,
            pair=pair,
            cmp=cmp if not error else None,
            error=error,
            rows=_disagreements(index, cmp) if cmp is not None and not error else [],
            finite=math.isfinite,
            paired=[(m.name, m.label) for m in metric_list() if m.paired],
            better=better,
        )

    return labels
