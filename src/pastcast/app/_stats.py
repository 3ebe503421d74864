"""The statistics of run logs (``pastcast stats``): the longitudinal and evidence analyses, the
memory cost and retrieval coverage bins, each over the runs read once, as JSON-ready dicts."""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from pastcast.app._fields import as_field
from pastcast.app._reading import RunsRead, read_runs
from pastcast.app._reports import TABLE_COLUMNS, group_columns
from pastcast.errors import FieldError
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, RUN_COLUMNS, duration_of
from pastcast.scoring import TABLE_INPUTS, Convention, ScoreTable
from pastcast.scoring import metric as registered_metric
from pastcast.scoring.analyses import (
    DURATION_EDGES,
    EVIDENCE_INPUTS,
    NO_STOP,
    RESOURCES,
    CoverageKind,
    RecoveryCount,
    capture_gain,
    changes_by_evidence,
    coverage,
    coverage_summary,
    episode_gain,
    evidence_summary,
    memory_cost,
    model_recoveries,
    paired_recoveries,
    step_changes,
    stop_counts,
    thirds,
)


@dataclass(frozen=True)
class Statistics:
    """An analysis as JSON-ready values, and the runs it read."""

    values: dict[str, Any]
    read: RunsRead
    """The runs read: their step columns (records streamed by offset where needed)."""


def longitudinal(
    run_logs: Sequence[str | Path],
    *,
    by: str | Sequence[str] = ("agent", "setting"),
    metric: str = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    market_only: bool = False,
) -> Statistics:
    """Thirds, step changes and episode gain per group of ``metric`` (a registered one); with
    memory-on notebooks, the changes by new-evidence quartile and the capture gain.
    ``market_only``: the thirds over the dates with a market probability only (Forecast-Dojo
    B.6)."""
    with as_field("metric"):
        registered_metric(metric)
    groups = group_columns(by, TABLE_COLUMNS)
    # the score table from the step columns; the notebooks' ledgers from the records that hold them
    read = read_runs(run_logs, columns=(*RUN_COLUMNS, "search_calls", "read_calls"))
    table = read.runs.base_table
    kw: dict[str, Any] = {"metric": metric, "fallback": fallback, "bootstrap": bootstrap}
    kw["seed"] = seed
    index = read.runs.evidence_index()  # only the memory-on notebooks read in full
    evidence: dict[str, Any] | None = None
    if any(r.available is not None for r in index):
        cuts, rows = changes_by_evidence(table, index, **kw)
        capture = capture_gain(table, index, metric, fallback, read.runs.tool_counts())
        evidence = {
            "cut_points": list(cuts),
            "by_quartile": [asdict(r) for r in rows],
            "capture": asdict(capture),
        }
    values = {
        "run_logs": [str(p) for p in run_logs],
        "by": list(groups),
        "metric": metric,
        "thirds": [asdict(t) for t in thirds(table, groups, **kw, market_only=market_only)],
        "step_changes": [asdict(s) for s in step_changes(table, groups, **kw)],
        "episode_gain": [asdict(g) for g in episode_gain(table, groups, **kw)],
        "evidence": evidence,
    }
    return Statistics(values, read)


def memory_costs(
    run_logs: Sequence[str | Path],
    *,
    pooled: bool = False,
    by_evidence: bool = False,
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
) -> Statistics:
    """Memory-on / memory-free resource ratios over matched records by step phase, per agent
    (or ``pooled``), and with ``by_evidence`` split by new-evidence quartile."""
    # the score table and resources from the step columns; with by_evidence, the notebooks the
    # index counts from their records, streamed
    read = read_runs(run_logs, columns=(*TABLE_INPUTS, *RESOURCES, *EVIDENCE_INPUTS))
    index = read.runs.evidence_index() if by_evidence else None
    if index is not None and not any(r.available is not None for r in index):
        raise FieldError("by_evidence", "no memory-on notebook gives a new-evidence count")
    with as_field("run_logs"):
        rows = memory_cost(
            read.runs.base_table,
            by=() if pooled else ("agent",),
            bootstrap=bootstrap,
            seed=seed,
            evidence=index,
            usage=read.runs.resources(),
        )
    values = {"run_logs": [str(p) for p in run_logs], "ratios": [asdict(r) for r in rows]}
    return Statistics(values, read)


def _labels(read: RunsRead, column: str, missing: str) -> list[str]:
    """Each step's value of a string step column (``missing`` for null), coded by Arrow: the
    rows share each distinct value's one string, so a million steps hold a few strings."""
    codes, names = read.runs.coded(column, missing)
    return [names[c] for c in codes.tolist()]


def coverage_bins(
    run_logs: Sequence[str | Path],
    *,
    edges: str | Sequence[int] = (1, 5, 20),
    kind: CoverageKind = "shown",
    by: str | Sequence[str] = ("run_id", "agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    bins: Literal["count", "label"] = "count",
) -> Statistics:
    """Scores by retrieval coverage bin: the distinct documents the agent saw at the step
    (``shown`` by any tool result, or ``read`` in full), binned at ``edges``; with
    ``bins="label"`` by the agent's own evidence label from its tally instead (strong, weak,
    none, untallied: Hindcast Table 1, whose bin sizes are Table 6)."""
    groups = group_columns(by, TABLE_COLUMNS)
    try:
        cuts = tuple(int(x) for x in (edges.split(",") if isinstance(edges, str) else edges))
    except ValueError:
        raise FieldError("edges", f"expected comma-separated integers, not {edges!r}") from None
    if not cuts or list(cuts) != sorted(set(cuts)) or cuts[0] < 1:
        raise FieldError("edges", f"expected increasing positive integers, not {edges!r}")
    # the score table and the evidence labels from the step columns; the documents a step saw
    # (its tool results) from each record, streamed, as one integer a step
    label = bins == "label"
    read = read_runs(run_logs, columns=(*TABLE_INPUTS, *(["evidence"] if label else [])))
    table = read.runs.base_table
    kw: dict[str, Any] = {"fallback": fallback, "bootstrap": bootstrap, "seed": seed}
    if label:
        labels = _labels(read, "evidence", "untallied")
        out = evidence_summary(table, labels, groups, **kw)
    else:
        counts = array("q", (coverage(r, kind) for r in read.runs.records()))
        out = coverage_summary(table, counts, cuts, groups, **kw)
    values = {
        "run_logs": [str(p) for p in run_logs],
        "bins": bins,
        "kind": kind,
        "edges": list(cuts),
        "groups": [s.as_dict() for s in out],
    }
    return Statistics(values, read)


def _selection(text: str, field: str) -> dict[str, str]:
    """``agent=NAME,setting=SETTING`` as a column selection."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        col, eq, value = part.partition("=")
        if not eq or col.strip() not in TABLE_COLUMNS or not value.strip():
            raise FieldError(
                field,
                f"{part!r}: expected COLUMN=VALUE with a column of {', '.join(TABLE_COLUMNS)}",
            )
        out[col.strip()] = value.strip()
    if not out:
        raise FieldError(field, "select at least one column (agent=NAME)")
    return out


def _model_pipelines(
    models: Mapping[str, tuple[str, str]] | Sequence[str] | None,
) -> dict[str, tuple[str, str]]:
    """Each model's pair of pipelines: a mapping name -> (a, b) selections as it is, or texts
    ``NAME:A_SELECTION;B_SELECTION`` (a later name replaces an earlier one)."""
    if models is None:
        return {}
    if isinstance(models, Mapping):
        return dict(models)
    out: dict[str, tuple[str, str]] = {}
    for i, text in enumerate([models] if isinstance(models, str) else models):
        name, colon, rest = text.partition(":")
        first, semi, second = rest.partition(";")
        if not colon or not semi or not name:
            raise FieldError(f"models[{i}]", f"{text!r}: expected NAME:A_SELECTION;B_SELECTION")
        out[name] = (first, second)
    return out


def _row_labels(table: ScoreTable, label: Callable[[str, str], str]) -> list[str]:
    """``label(event_id, category)`` of each row of ``table``, made once per distinct pair."""
    events, event_names = table.keys["event"]
    cats, cat_names = table.keys["category"]
    made: dict[tuple[int, int], str] = {}
    out = []
    for e, c in zip(events.tolist(), cats.tolist(), strict=True):
        if (e, c) not in made:
            made[e, c] = label(event_names[e], cat_names[c])
        out.append(made[e, c])
    return out


def _counts(rows: Sequence[RecoveryCount]) -> list[dict[str, Any]]:
    return [asdict(r) | {"net": r.net} for r in rows]


def recoveries(
    run_logs: Sequence[str | Path],
    a: str,
    b: str,
    *,
    dataset: str | Path | None = None,
    pair_by: str | Sequence[str] = (),
    min_markets: int = 4,
    models: Mapping[str, tuple[str, str]] | Sequence[str] | None = None,
    fallback: Convention = "uniform",
) -> Statistics:
    """Hindcast section 7 between pipeline ``a`` (the Retrieval agent) and ``b`` (the zero-shot
    baseline), each a selection ``COLUMN=VALUE,...``: recoveries and regressions per topic
    (topics with at least ``min_markets`` markets, Figure 6), per market duration (short /
    medium / long: needs ``dataset``), per stop reason of ``a``'s research loop, per model
    (``models``: name -> (a, b) selections, or ``NAME:A;B`` texts), and every step's stop
    reason counted."""
    sel_a, sel_b = _selection(a, "a"), _selection(b, "b")
    pipelines = _model_pipelines(models)
    pairs = group_columns(pair_by, TABLE_COLUMNS, "pair_by")
    # the score table, its key columns and each step's stop reason from the step columns: no
    # record is read in full
    read = read_runs(run_logs, dataset, columns=(*TABLE_INPUTS, "stop_reason"))
    table = read.runs.base_table
    ds = read.runs.dataset
    stops = _labels(read, "stop_reason", NO_STOP)

    def run(keys: Sequence[str], least: int = 0) -> list[dict[str, Any]]:
        with as_field("pair_by"):
            return _counts(paired_recoveries(table, sel_a, sel_b, keys, pairs, least, fallback))

    def topic(event_id: str, category: str) -> str:
        if ds is not None:
            with contextlib.suppress(KeyError):
                return ds.event(event_id).category or category or "unknown"
        return category or "unknown"

    values: dict[str, Any] = {
        "run_logs": [str(p) for p in run_logs],
        "a": sel_a,
        "b": sel_b,
        "min_markets": min_markets,
        "topics": run(_row_labels(table, topic), min_markets),
        "stops": run(stops),
        "stop_counts": [
            {"agent": agent, "setting": setting, "counts": counts}
            for (agent, setting), counts in stop_counts(table, stops).items()
        ],
    }
    if ds is not None:
        known = ds  # narrowed for the function below
        durations = _row_labels(table, lambda event_id, _: duration_of(known, event_id))
        values["durations"] = run(durations)
        values["duration_edges_days"] = list(DURATION_EDGES)
    if pipelines:
        chosen = {
            name: (_selection(x, f"models.{name}"), _selection(y, f"models.{name}"))
            for name, (x, y) in pipelines.items()
        }
        with as_field("models"):
            values["models"] = _counts(model_recoveries(table, chosen, fallback))
    return Statistics(values, read)
