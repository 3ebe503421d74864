"""The report's figures say what they draw: each caption is whole sentences naming the units on
its axes, nothing is averaged across agents, no text is cut or leaves the figure, and the topic
chart has one Other and labels that do not overlap."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the figures need the reports extra")

from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from pastcast.dataset import Dataset
from pastcast.reports import Runs, scorecard
from pastcast.reports.figures import FIGURES, Drawn, ReportData
from pastcast.runlog import read_run_log
from pastcast.scoring.analyses import cost_by_step

UNIT = re.compile(r"\s\(([^()]+)\)$")
"""An axis label's unit: a trailing parenthesis after a space ("cost per forecast (USD)")."""


@pytest.fixture(scope="module")
def data(recorded_log: Path, dataset: Dataset) -> ReportData:
    runs = Runs.from_logs([read_run_log(recorded_log)], dataset)
    return ReportData(runs, scorecard(runs, bootstrap=50), lookback=(0.25, 0.5, 0.75, 1.0))


@pytest.fixture(scope="module")
def drawn(data: ReportData) -> dict[str, Drawn]:
    out = {}
    for name in FIGURES.names():
        d = FIGURES.build(name, data=data)
        if d is not None:
            out[name] = d
    return out


def _drawn(fig: Figure) -> RendererBase:
    """The renderer of ``fig`` laid out as it is saved (on the Agg canvas)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _labels(fig: Figure) -> list[str]:
    return [
        " ".join(label.split())
        for ax in fig.axes
        if ax.get_visible()
        for label in (ax.get_xlabel(), ax.get_ylabel())
        if label
    ]


def test_every_caption_is_whole_sentences_naming_the_units_on_its_axes(
    drawn: dict[str, Drawn],
) -> None:
    assert set(drawn) == set(FIGURES.names())  # the recorded run has what every figure needs
    for name, d in drawn.items():
        caption = d.caption
        assert caption[0].isupper() and caption.endswith("."), (name, caption)
        assert caption.count("(") == caption.count(")"), (name, caption)
        # more than a docstring's first line: what each mark is, in words
        assert len(caption.split()) >= 20, (name, caption)
        assert caption != FIGURES.get(name).description, name
        for label in _labels(d.figure):
            unit = UNIT.search(label)
            if unit:
                assert unit.group(1) in caption, (name, label, caption)


def test_no_text_is_cut_or_leaves_the_figure(drawn: dict[str, Drawn]) -> None:
    for name, d in drawn.items():
        fig = d.figure
        renderer = _drawn(fig)
        inside = fig.get_tightbbox(renderer)  # in inches: all that is drawn
        width, height = fig.get_size_inches()
        assert inside is not None
        assert inside.x0 >= -0.02 and inside.y0 >= -0.02, (name, inside)
        assert inside.x1 <= width + 0.02 and inside.y1 <= height + 0.02, (name, inside)
        for text in fig.findobj(Text):
            assert "…" not in text.get_text(), (name, text.get_text())


def test_no_legend_hides_what_is_drawn(drawn: dict[str, Drawn]) -> None:
    """A legend inside the axes covers no bar and no point of a line: whatever it would hide is
    a value a reader cannot see."""
    for name, d in drawn.items():
        renderer = _drawn(d.figure)
        for ax in d.figure.axes:
            legend = ax.get_legend()
            if legend is None or not ax.get_visible():
                continue
            box = legend.get_window_extent(renderer)
            for patch in ax.patches:
                if isinstance(patch, Rectangle) and patch.get_height() and patch.get_width():
                    bar = patch.get_window_extent(renderer)
                    assert not box.overlaps(bar), (name, patch.get_label(), box, bar)
            for line in ax.get_lines():
                if line.get_label().startswith("_"):
                    continue  # a reference line or an error bar, not a series
                points = line.get_transform().transform(line.get_xydata())
                inside = [box.contains(x, y) for x, y in points if np.isfinite([x, y]).all()]
                assert not any(inside), (name, line.get_label())


def test_cost_by_step_draws_each_agent_in_its_own_unit_never_a_mean_over_agents(
    data: ReportData, drawn: dict[str, Drawn]
) -> None:
    d = drawn["cost-by-step"]
    axes = [ax for ax in d.figure.axes if ax.get_visible()]
    titles = {ax.get_title(): ax for ax in axes}
    # the baselines spend nothing and the market is a reference: the heuristic agent and the
    # scripted tool agent, one panel each
    assert set(titles) == {"heuristic", "scripted"}
    assert titles["heuristic"].get_ylabel() == "tool calls per forecast (calls)"
    assert titles["scripted"].get_ylabel() == "cost per forecast (USD)"
    assert "US dollars (USD)" in d.caption and "tool calls (calls)" in d.caption
    # each line is the agent's own mean, not the setting's mean over every agent
    table = data.runs.base_table
    own = cost_by_step(table, ("agent", "setting"), "tool_calls", usage=data.resources)
    for line in titles["heuristic"].get_lines():
        setting = line.get_label()
        want = [r.mean for r in own if r.group == ("heuristic", setting)]
        assert np.allclose(np.asarray(line.get_ydata(), dtype=float), want), setting
    assert titles["heuristic"].get_ylim()[0] == 0  # a flat cost is drawn flat


def test_memory_and_evidence_figures_have_a_panel_per_agent(drawn: dict[str, Drawn]) -> None:
    for name in ("memory-cost", "evidence", "recoveries"):
        titles = [ax.get_title() for ax in drawn[name].figure.axes if ax.get_visible()]
        assert titles and all(titles), name
        assert len(set(titles)) == len(titles), name
        assert not any(" and " in t or t == "all" for t in titles), name


def test_market_titles_are_whole(data: ReportData, dataset: Dataset) -> None:
    long = "Will the Lakeview council approve the harbour extension before the end of the year"
    events = tuple(e.model_copy(update={"title": f"{long} {e.id}?"}) for e in dataset.events)
    longer = dataclasses.replace(dataset, events=events)
    runs = Runs(data.runs.logs, longer)
    d = FIGURES.build("market", data=ReportData(runs, data.card))
    assert d is not None
    titles = [" ".join(ax.get_title().split()) for ax in d.figure.axes if ax.get_visible()]
    assert titles
    for t in titles:
        event_id = t.split(":", 1)[0]
        assert f"{long} {event_id}?" in t, t


def _topics(categories: list[str]) -> ReportData:
    """Report data of one step per event, of these categories (only what the chart reads)."""
    n = len(categories)
    names = sorted(set(categories))
    table = SimpleNamespace(
        keys={
            "event": (np.arange(n), [f"e{i}" for i in range(n)]),
            "category": (np.array([names.index(c) for c in categories]), names),
        }
    )
    return cast(ReportData, SimpleNamespace(table=table, runs=SimpleNamespace(dataset=None)))


def test_topic_chart_has_one_other_and_labels_that_do_not_overlap() -> None:
    # as in real imports: a topic already named Other, many small topics, one large one
    cats = ["Politics"] * 60 + ["Sports"] * 30 + ["Other"] * 6 + ["Crypto"] * 5
    cats += [f"Topic {i}" for i in range(14)]
    d = FIGURES.build("topics", data=_topics(cats))
    assert d is not None
    ax = d.figure.axes[0]
    renderer = _drawn(d.figure)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks.count("Other") == 1 and "other" not in [t.lower() for t in ticks[:-1]]
    assert ticks[-1] == "Other"
    bars = {p.get_facecolor() for p in ax.patches}
    assert len(bars) == 2  # one colour for topics, grey for Other: no colour stands for two
    texts = [*ax.get_yticklabels(), *ax.texts]
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_text()]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    counts: Any = [t.get_text() for t in ax.texts]
    assert "60 (52%)" in counts and "5 (4%)" in counts and f"{6 + 14} (17%)" in counts
