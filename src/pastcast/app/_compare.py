"""Paired comparisons of run logs: two runs on the same dataset (``pastcast compare``, Forecast-
Dojo's Table 4) and the pairs ``pastcast score --paired`` names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pastcast.app._fields import as_field
from pastcast.app._reading import RunsRead, check_dataset, read_runs
from pastcast.dataset import Dataset
from pastcast.errors import FieldError
from pastcast.reports import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    Comparison,
    Runs,
    compare_selections,
    selection_name,
    selection_of,
)
from pastcast.runlog import StepColumns
from pastcast.scoring import Convention, PairedComparison, ScoreTable, paired_comparison


@dataclass(frozen=True)
class Compared:
    """The comparison of two run logs, and what was compared."""

    comparison: Comparison
    base: StepColumns
    tuned: StepColumns
    base_selection: dict[str, str]
    tuned_selection: dict[str, str]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The comparison as JSON, with the two logs and their runs."""
        return {
            "base_log": str(self.base.path),
            "tuned_log": str(self.tuned.path),
            "base_run": self.base.header.run_id,
            "tuned_run": self.tuned.header.run_id,
            **self.comparison.as_dict(),
        }

    def title(self) -> str:
        """What was compared, in a line: the table's title."""
        c = self.comparison
        return (
            f"{c.other_name} (run {self.tuned.header.run_id}) against {c.base_name} "
            f"(run {self.base.header.run_id}): {c.overall.n_matched} paired forecasts from "
            f"{c.overall.n_events} events"
        )


def _read_one(path: str | Path, field: str) -> RunsRead:
    try:
        return read_runs([path])
    except FieldError as exc:
        raise FieldError(field, exc.reason) from None


def _agents(log: StepColumns) -> dict[tuple[str, str], str]:
    """The role of each agent and setting the log recorded."""
    rows = log.table.select(["agent", "setting", "role"]).group_by(["agent", "setting", "role"])
    found = rows.aggregate([]).to_pydict()
    return dict(zip(zip(found["agent"], found["setting"], strict=True), found["role"], strict=True))


def _groups(log: StepColumns) -> list[str]:
    """``agent@setting`` of every forecasting agent the log recorded (references last)."""
    seen = _agents(log)
    agents = [f"{a}@{s}" for (a, s), role in sorted(seen.items()) if role != "reference"]
    return agents or [f"{a}@{s}" for a, s in sorted(seen)]


def _selection(
    log: StepColumns, table: ScoreTable, named: str | None, field: str
) -> dict[str, str]:
    groups = _groups(log)
    if named is None:
        if len(groups) > 1:
            raise FieldError(
                field,
                f"{log.path} holds several agents ({', '.join(groups)}): name the one to compare",
            )
        named = groups[0]
    where = selection_of(named, table)  # the table holds both logs: check this one has it
    own = set(_agents(log))
    if (
        where is None
        or "run_id" in where
        or not any(a == where["agent"] and where.get("setting", st) == st for a, st in own)
    ):
        raise FieldError(
            field, f"{named!r}: no such agent in {log.path} (it holds {', '.join(groups)})"
        )
    return {**where, "run_id": log.header.run_id}


def compare_runs(
    base: str | Path,
    tuned: str | Path | None = None,
    *,
    dataset: str | Path | Dataset | None = None,
    base_agent: str | None = None,
    tuned_agent: str | None = None,
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
) -> Compared:
    """Table 4's rows for the run log ``tuned`` against ``base`` on the steps both recorded, as
    `pastcast compare` prints them (the options are its parameters; ``tuned`` defaults to
    ``base``: two agents of one log). ``FieldError`` naming ``base`` or ``tuned`` for an
    unreadable log, logs of different datasets or logs that share no step; ``dataset`` when a
    log did not run on it."""
    read_base = _read_one(base, "base")
    read_tuned = _read_one(base if tuned is None else tuned, "tuned")
    log_b, log_t = read_base.logs[0], read_tuned.logs[0]
    if log_b.header.dataset_id != log_t.header.dataset_id:
        raise FieldError(
            "tuned",
            f"{log_t.path} ran on dataset {log_t.header.dataset_id!r}, but {log_b.path} on "
            f"{log_b.header.dataset_id!r}: a paired comparison needs the same dataset",
        )
    if dataset is not None:
        from pastcast.app._open import open_dataset  # only when a dataset is named

        check_dataset([log_b, log_t], open_dataset(dataset), dataset)
    same_run = log_b.header == log_t.header
    runs = Runs((log_b,) if same_run else (log_b, log_t))
    table = runs.base_table
    where_b = _selection(log_b, table, base_agent, "base_agent")
    where_t = _selection(log_t, table, tuned_agent, "tuned_agent")
    if where_b == where_t:
        raise FieldError(
            "tuned", f"{log_t.path} is the same run and agent as {log_b.path}: nothing to compare"
        )
    names = tuple(
        selection_name({k: v for k, v in w.items() if k != "run_id"}) for w in (where_b, where_t)
    )
    if names[0] == names[1]:
        names = ("base", "tuned")
    with as_field("base_agent"):
        comparison = compare_selections(
            runs, where_b, where_t, fallback, bootstrap, seed, (names[0], names[1])
        )
    if comparison.overall.n_matched == 0:
        raise FieldError(
            "tuned",
            f"{selection_name(where_t)} in {log_t.path} shares no step (event, step, rollout) "
            f"with {selection_name(where_b)} in {log_b.path}",
        )
    notes = (*read_base.notes, *read_tuned.notes)
    return Compared(comparison, log_b, log_t, where_b, where_t, notes)


def paired_comparisons(
    table: ScoreTable,
    pairs: Sequence[str],
    *,
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[PairedComparison, ...]:
    """Each ``BASE:OTHER`` of ``pairs`` compared on ``table`` (OTHER - BASE); each side a run
    id, ``AGENT@SETTING`` or ``AGENT`` (agent labels may hold ':', so the split is the one
    where both sides name something). ``FieldError`` naming ``paired[i]``."""
    out = []
    for i, text in enumerate(pairs):
        where = f"paired[{i}]"
        found = []
        for j, ch in enumerate(text):
            if ch == ":":
                sides = selection_of(text[:j], table), selection_of(text[j + 1 :], table)
                if sides[0] is not None and sides[1] is not None:
                    found.append((sides[0], sides[1]))
        if not found:
            raise FieldError(
                where,
                f"{text!r}: expected BASE:OTHER, each a run id, AGENT@SETTING or AGENT of the "
                "run logs",
            )
        if len(found) > 1:
            raise FieldError(where, f"{text!r}: names more than one pair; use AGENT@SETTING")
        base, other = found[0]
        try:
            cmp = paired_comparison(
                table, other, base, fallback=fallback, bootstrap=bootstrap, seed=seed
            )
        except ValueError as exc:
            raise FieldError(where, f"{text!r}: {exc}") from None
        if cmp.n_matched == 0:
            raise FieldError(where, f"{text!r}: the two share no step (event, step, rollout)")
        out.append(cmp)
    return tuple(out)
