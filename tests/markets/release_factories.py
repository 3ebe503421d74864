"""Forecast-Dojo release folders (``questions/{train,eval}.parquet``) written in that shape."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("slug", pa.string()),
        ("title", pa.string()),
        ("body", pa.string()),
        ("options", pa.list_(pa.string())),
        ("belief_kind", pa.string()),
        ("resolved_label", pa.string()),
        ("start_date", pa.date32()),
        ("close_date", pa.date32()),
        ("forecast_dates", pa.list_(pa.date32())),
        ("crowd_probabilities", pa.list_(pa.list_(pa.float64()))),
    ]
)


def release_row(eid: str, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "event_id": eid,
        "slug": f"slug-{eid}",
        "title": f"Title {eid}",
        "body": "Body.",
        "options": ["Yes", "No"],
        "belief_kind": "binary",
        "resolved_label": "No",
        "start_date": date(2025, 7, 1),
        "close_date": date(2025, 8, 1),
        "forecast_dates": [date(2025, 7, 5), date(2025, 7, 20)],
        "crowd_probabilities": [[0.4, 0.6], [0.2, 0.8]],
    }
    row.update(kw)
    return row


def write_release(root: Path, train: list[dict[str, Any]], ev: list[dict[str, Any]]) -> Path:
    (root / "questions").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(train, schema=SCHEMA), root / "questions" / "train.parquet")
    pq.write_table(pa.Table.from_pylist(ev, schema=SCHEMA), root / "questions" / "eval.parquet")
    return root
