"""`stats memory-cost` reads a log's step columns and, split by new evidence, streams only the
notebooks the evidence index counts, one record at a time: the ratios of the full records to the
last bit, on a synthetic run and on logs whose notebooks give new evidence."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.app import memory_costs, read_runs
from pastcast.scoring import table_from_records
from pastcast.scoring.analyses import evidence_index, memory_cost, resource_rows


def _stats_logs(tmp_path: Path) -> list[str]:
    """The stats tests' logs: notebooks whose new evidence differs by model and step."""
    here = str(Path(__file__).resolve().parents[1] / "scoring")
    if here not in sys.path:
        sys.path.insert(0, here)
    from test_stats_cli import _logs, _steps

    return _logs(tmp_path, _steps())


@pytest.mark.parametrize("by_evidence", [False, True])
def test_memory_costs_stream_and_equal_the_ratios_of_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_evidence: bool
) -> None:
    runs = [[str(synthetic_run(tmp_path / "synthetic" / "run.jsonl", 300))], _stats_logs(tmp_path)]
    for paths in runs:
        steps = list(read_runs(paths).runs.records())
        index = evidence_index(steps) if by_evidence else None
        assert index is None or any(r.available is not None for r in index)
        table, usage = table_from_records(steps), resource_rows(steps)
        expected = memory_cost(table, bootstrap=200, seed=1, evidence=index, usage=usage)
        notebooks = sum(
            s.setting == "memory_on" and s.role == "agent" and s.step_index >= 1 for s in steps
        )
        with records_streamed(monkeypatch) as seen:
            got = memory_costs(paths, bootstrap=200, seed=1, by_evidence=by_evidence)
        assert seen.parsed == (notebooks if by_evidence else 0), seen
        assert seen.max_live <= MAX_LIVE, seen
        want = json.dumps([asdict(r) for r in expected], default=repr)
        assert json.dumps(got.values["ratios"], default=repr) == want
