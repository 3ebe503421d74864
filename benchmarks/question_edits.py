"""How many steps of the ForecastBench snapshot are shown their question text without a note dated
after their cutoff, shortened before their first note not dated before it, or dropped, under
three ways of choosing the text a step is shown: the latest
snapshot published before the cutoff (the import's default), the same with the steps before the
first snapshot kept (shown the first, written later), and the question's own text at every step
(as a source without snapshots, such as Polymarket, gives it).

    PYTHONPATH=src python benchmarks/question_edits.py [../shared/data/forecastbench]
"""

from __future__ import annotations

import sys
from typing import Any

from pastcast.audit import audit_texts
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import collected_at, read_forecastbench, read_text_versions


def main(root: str) -> None:
    read = read_forecastbench(root)
    texts = read_text_versions(root)
    schedule = make_schedule("causal-dojo", start_at_first_belief=True)
    ways: list[tuple[str, dict[str, Any]]] = [
        ("snapshots", {"texts": texts}),
        ("snapshots, unversioned steps kept", {"texts": texts, "keep_unversioned": True}),
        ("the question's own text", {"texts": {}}),
    ]
    for name, options in ways:
        ds, report = build_dataset(
            read.histories,
            name="fb",
            schedule=schedule,
            collected_at=collected_at(root, read.histories),
            **options,
        )
        stage = {s.stage: s for s in report.funnel}["question-text edits"]
        audit = audit_texts(ds)
        print(
            f"{name}: {len(ds.events)} events, {audit.steps} steps; "
            f"{audit.events_with_dated_edits} events with dated notes; {stage.note}; "
            f"{stage.removed} events removed"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/forecastbench")
