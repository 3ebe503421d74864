"""Steps of live questions graded before they resolved (``PENDING_TRUTH``) are left out of every
score, from the full records and from the columns alike, and said in a note: their zero or
garbage scores never reach a leaderboard."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.agents import agent_spec
from pastcast.app import open_dataset, read_runs, score_runs
from pastcast.runlog import PENDING_TRUTH, RunLogWriter, read_run_log
from pastcast.runner import RunConfig, run_benchmark


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """The same run twice: with some steps turned pending, as a live round writes them before
    its markets resolve, and with those steps removed."""
    folder = tmp_path_factory.mktemp("pending")
    resolved = folder / "resolved" / "run.jsonl"
    config = RunConfig(agents=(agent_spec("base-rate"), agent_spec("market")), max_events=8)
    run_benchmark(open_dataset("world"), None, config, resolved, progress=False)
    log = read_run_log(resolved)
    pending_events = sorted({s.event_id for s in log.steps})[:3]
    live, kept = folder / "live" / "run.jsonl", folder / "kept" / "run.jsonl"
    live.parent.mkdir()
    kept.parent.mkdir()
    pending = 0
    with RunLogWriter(live, log.header) as writer, RunLogWriter(kept, log.header) as only:
        for step in log.steps:
            if step.event_id in pending_events:
                grading = step.grading.model_copy(update={"truth": PENDING_TRUTH})
                writer.write(step.model_copy(update={"grading": grading}))
                pending += 1
            else:
                writer.write(step)
                only.write(step)
    assert 0 < pending < len(log.steps)
    return kept, live, pending


def _groups(log: Path) -> tuple[int, object]:
    card = score_runs([log]).card
    return card.n_forecasts, card.as_dict()["groups"]


def test_pending_steps_are_left_out_of_the_columns_and_records_and_said(
    logs: tuple[Path, Path, int],
) -> None:
    kept, live, pending = logs
    read = read_runs([live])
    truths = [t for log in read.runs.logs for t in log.table.column("truth").to_pylist()]
    assert PENDING_TRUTH not in truths
    assert len(truths) == len(read_run_log(live).steps) - pending
    assert all(s.grading.truth != PENDING_TRUTH for s in read.runs.records())
    assert any("not resolved yet" in n for n in read.notes)
    assert not any("not resolved yet" in n for n in read_runs([kept]).notes)


def test_scores_of_a_log_with_pending_steps_count_only_its_resolved_ones(
    logs: tuple[Path, Path, int],
) -> None:
    kept, live, pending = logs
    n, groups = _groups(live)
    assert n == len(read_run_log(live).steps) - pending
    # exactly the scores of the log without those steps: nothing pending reaches a mean
    assert (n, groups) == _groups(kept)
