"""`pastcast score` reads the step columns whatever its options: `--normalize-labels` streams by
offset only the forecasts that may read otherwise (unusable, or read after a retry), one at a
time, `--after-knowledge-cutoff` filters on the resolution times and `--paired` pairs the score
table, and the numbers are those of every record read in full and held in memory."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.agents import reparse_forecast
from pastcast.app import score_runs
from pastcast.app._compare import paired_comparisons
from pastcast.models import KnowledgeGap, remembered
from pastcast.runlog import RunLog, StepRecord, read_run_log
from pastcast.scoring import table_from_records

PAIR = "model-0@memory_free:model-1@memory_free"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("synthetic") / "run.jsonl", 500)


def _normalized(step: StepRecord) -> StepRecord:
    forecast = reparse_forecast(step.forecast, step.grading.labels, normalize_typography=True)
    return step.model_copy(update={"forecast": forecast})


def _may_change(step: StepRecord) -> bool:
    """Unusable, or read only after a retry: what normalized labels may read otherwise."""
    return not step.forecast.usable or "\n\n[reply to" in step.forecast.raw_text


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def test_score_options_stream_only_the_forecasts_read_again_and_keep_the_numbers(
    synthetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = read_run_log(synthetic)
    with records_streamed(monkeypatch) as seen:
        scored = score_runs(
            [synthetic],
            paired=[PAIR],
            normalize_labels=True,
            after_knowledge_cutoff=True,
            bootstrap=200,
            seed=1,
        )
    # no whole log read as records: only the forecasts that may read otherwise, one at a time
    candidates = sum(_may_change(s) for s in log.steps)
    assert 0 < seen.parsed == candidates < len(log.steps) / 5, seen
    assert seen.max_live <= MAX_LIVE, seen

    # every record in memory, each forecast read again, the remembered events left out
    from pastcast.reports import Runs, scorecard

    steps = tuple(_normalized(s) for s in log.steps)
    changed = sum(a.forecast != b.forecast for a, b in zip(log.steps, steps, strict=True))
    assert changed > 5  # the lower-case labels of the synthetic run now read
    latest = max(c for c in log.header.knowledge_cutoffs.values() if c is not None)
    kept = tuple(
        s
        for s in steps
        if s.grading.resolved_at is not None and not remembered(s.grading.resolved_at, latest)
    )
    assert 0 < len(kept) < len(steps)
    runs = Runs.from_logs([replace(log, steps=kept)])
    card = scorecard(runs, ("agent", "setting"), "uniform", bootstrap=200, seed=1)
    assert _json(scored.card.as_dict()) == _json(card.as_dict())
    pairs = paired_comparisons(runs.base_table, [PAIR], bootstrap=200, seed=1)
    assert _json(scored.pairs) == _json(pairs)
    dropped = {s.event_id for s in steps} - {s.event_id for s in kept}
    assert scored.cutoff_note == (
        f"left out {len(dropped)} events ({len(steps) - len(kept)} steps) resolved by "
        f"{latest.isoformat()} (knowledge cutoff of provider:m3)"
    )
    _same_gaps(scored.knowledge_gaps, log, steps)


def _same_gaps(gaps: Sequence[KnowledgeGap], log: RunLog, steps: Sequence[StepRecord]) -> None:
    """Each model's Brier before and after its cutoff, as its agents' records give it."""
    assert {g.model for g in gaps} == set(log.header.knowledge_cutoffs)
    for gap in gaps:
        agents = {a.name for a in log.header.agents if a.args.get("model") == gap.model}
        mine = [s for s in steps if s.agent in agents]
        brier = table_from_records(mine).metrics("uniform")["brier"]
        resolved = [s.grading.resolved_at for s in mine]
        before = np.array([r is not None and remembered(r, gap.knowledge_cutoff) for r in resolved])
        assert gap.agents == tuple(sorted(agents))
        assert gap.before_brier == pytest.approx(brier[before].mean())
        assert gap.after_brier == pytest.approx(brier[~before].mean())
        events = [s.event_id for s in mine]
        assert gap.before_events == len({e for e, b in zip(events, before, strict=True) if b})
        assert gap.after_events == len({e for e, b in zip(events, before, strict=True) if not b})
