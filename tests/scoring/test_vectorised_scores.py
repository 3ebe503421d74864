"""`pastcast score` scores whole columns at once: on a generated log (agents in three settings,
two rollouts, binary and multi-outcome events, unusable forecasts, forecasts naming outcomes not
offered or leaving some out, ties, steps without a market or whose market lacks the truth,
truths outside the offered labels), the score table read from the step columns holds, row by
row, what the per-forecast functions give for each record (within 1e-12), with the records'
keys; each group's means are the means of those per-forecast scores; the schedule counts what
the run headers and steps say was scheduled."""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from _streaming import REPO_ROOT
from pastcast.app import score_runs
from pastcast.records import evidence_label_of
from pastcast.reports import Runs
from pastcast.runlog import RunLog, StepRecord, read_run_log, read_step_columns
from pastcast.scoring import TABLE_INPUTS, event_kind, metric_list, step_scores, table_from_columns
from pastcast.scoring.analyses import NO_STOP

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def log_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bench = str(REPO_ROOT / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from synthetic_runs import write_scoring_run

    path = tmp_path_factory.mktemp("scores") / "run.jsonl"
    write_scoring_run(path, 1600, seed=3)
    return path


@pytest.fixture(scope="module")
def log(log_path: Path) -> RunLog:
    return read_run_log(log_path)


def _close(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or abs(got - want) <= TOLERANCE


def test_the_generated_log_has_what_scoring_must_get_right(log: RunLog) -> None:
    steps = log.steps
    kinds = {event_kind(s.grading.labels) for s in steps}
    assert kinds == {"binary", "multi"}
    assert len({(s.agent, s.setting) for s in steps}) >= 6
    assert any(not s.forecast.usable and s.forecast.probs for s in steps)
    assert any(not s.forecast.usable and not s.forecast.probs for s in steps)
    assert any(set(s.forecast.probs) - set(s.grading.labels) for s in steps)
    assert any(s.forecast.probs and set(s.grading.labels) - set(s.forecast.probs) for s in steps)
    assert any(s.grading.market_probs is None for s in steps)
    market = [s.grading.market_probs for s in steps if s.grading.market_probs]
    assert any(len(m) == 1 for m in market)
    assert any(s.grading.truth not in s.grading.labels for s in steps)
    assert any(sum(s.forecast.probs.values()) < 0.9 for s in steps if s.forecast.usable)


@pytest.mark.parametrize("fallback", ["uniform", "worst", "exclude"])
def test_every_row_is_what_the_per_forecast_functions_give(
    log: RunLog, log_path: Path, fallback: str
) -> None:
    columns = read_step_columns(log_path, TABLE_INPUTS).table
    table = table_from_columns(columns)
    got = table.metrics(fallback)  # type: ignore[arg-type]
    steps = log.steps
    assert len(table) == len(steps)
    listed = metric_list()
    per_step = "uniform" if fallback == "exclude" else fallback
    bad: list[tuple[int, str, float, float]] = []
    for i, s in enumerate(steps):
        want = step_scores(s.forecast, s.grading, per_step)  # type: ignore[arg-type]
        usable = bool(table.usable[i])
        for m in listed:
            # excluded: every metric of an unusable forecast is undefined
            expected = math.nan if fallback == "exclude" and not usable else want[m.name]
            if not _close(float(got[m.name][i]), expected):
                bad.append((i, m.name, float(got[m.name][i]), expected))
    assert not bad, bad[:5]
    _same_keys(table, steps)


def _same_keys(table: object, steps: tuple[StepRecord, ...]) -> None:
    from pastcast.scoring import ScoreTable

    assert isinstance(table, ScoreTable)
    for column, of in (
        ("agent", lambda s: s.agent),
        ("setting", lambda s: s.setting),
        ("role", lambda s: s.role),
        ("run_id", lambda s: s.run_id),
        ("event", lambda s: s.event_id),
        ("split", lambda s: s.split),
        ("category", lambda s: s.category),
        ("kind", lambda s: event_kind(s.grading.labels)),
    ):
        codes, names = table.keys[column]
        assert list(names) == sorted({of(s) for s in steps}), column
        assert [names[c] for c in codes] == [of(s) for s in steps], column
    assert table.step.tolist() == [s.step_index for s in steps]
    assert table.rollout.tolist() == [s.rollout for s in steps]
    usable = [s.forecast.usable and sum(s.forecast.probs.values()) > 0 for s in steps]
    assert table.usable.tolist() == usable
    n_labels = [len({*s.grading.labels, s.grading.truth}) for s in steps]
    assert table.n_labels.tolist() == n_labels
    first = [bool(s.grading.labels) and s.grading.labels[0] == s.grading.truth for s in steps]
    assert table.truth_first.tolist() == first


def test_group_means_are_the_means_of_the_per_forecast_scores(log: RunLog, log_path: Path) -> None:
    scored = score_runs([log_path], by="agent,setting,kind", bootstrap=50, seed=2)
    per_group: dict[tuple[str, ...], list[dict[str, float]]] = {}
    for s in log.steps:
        key = (s.agent, s.setting, event_kind(s.grading.labels))
        per_group.setdefault(key, []).append(step_scores(s.forecast, s.grading))
    groups = {g.group: g.summary for g in scored.card.groups}
    assert set(groups) == set(per_group)
    for key, rows in per_group.items():
        summary = groups[key]
        assert summary.n_recorded == len(rows)
        for m in metric_list():
            values = np.array([r[m.name] for r in rows])
            ok = np.isfinite(values)
            mean = float(values[ok].mean()) if ok.any() else math.nan
            assert _close(summary.metrics[m.name].mean, mean), (key, m.name)
            assert summary.metrics[m.name].n == int(ok.sum())


def _scheduled(log: RunLog, by: tuple[str, ...]) -> Counter[tuple[str, ...]]:
    """Every scheduled forecast listed one by one: each agent of the header or the steps, at
    each event-step recorded, for each configured rollout."""
    header, steps = log.header, log.steps
    agents = {(a.name, a.setting, a.role) for a in header.agents}
    agents |= {(s.agent, s.setting, s.role) for s in steps}
    models = {(a.name, a.setting): str(a.args.get("model") or "-") for a in header.agents}
    events: dict[str, tuple[str, str, str]] = {}
    for s in steps:
        events.setdefault(s.event_id, (s.split, s.category, event_kind(s.grading.labels)))
    event_steps = {(s.event_id, s.step_index) for s in steps}
    outcome = {
        s.key: (evidence_label_of(s.episode.evidence_tally), s.episode.stop_reason or NO_STOP)
        for s in steps
    }
    rollouts = header.config["rollouts"]
    counts: Counter[tuple[str, ...]] = Counter()
    for event, step in event_steps:
        split, category, kind = events[event]
        for agent, setting, role in agents:
            for rollout in range(rollouts):
                evidence, stop = outcome.get(
                    (agent, setting, event, step, rollout), ("(missing)", "(missing)")
                )
                row = {
                    "agent": agent, "model": models.get((agent, setting), "-"),
                    "setting": setting, "role": role, "run_id": header.run_id,
                    "event": event, "split": split, "category": category, "kind": kind,
                    "evidence": evidence, "stop": stop, "step": str(step),
                    "rollout": str(rollout),
                }  # fmt: skip
                counts[tuple(row[c] for c in by)] += 1
    return counts


@pytest.mark.parametrize(
    "by",
    [
        ("agent", "setting"),
        ("model", "kind", "split"),
        ("agent", "stop", "evidence"),
        ("event", "step", "rollout", "role", "category", "run_id"),
    ],
)
def test_the_schedule_counts_every_scheduled_forecast(log: RunLog, by: tuple[str, ...]) -> None:
    # a step never written: one agent's first event-step of the first rollout left out
    first = log.steps[0]
    kept = RunLog(log.path, log.header, tuple(s for s in log.steps if s.key != first.key))
    assert Runs.from_logs([kept]).scheduled(by) == dict(_scheduled(kept, by))
