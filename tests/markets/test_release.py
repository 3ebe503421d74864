"""Forecast-Dojo release layout, on fixtures generated here in that shape."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from markets_factories import at
from release_factories import release_row as _row
from release_factories import write_release as _write

from pastcast.cutoff import DayConvention
from pastcast.errors import FieldError
from pastcast.markets.sources import load_release


def test_binary_and_multi_neg_risk_rows(tmp_path: Path) -> None:
    multi = _row(
        "m",
        options=["A", "B", "C"],
        belief_kind="multi_neg_risk",
        resolved_label="C",
        start_date=date(2026, 3, 2),
        close_date=date(2026, 4, 1),
        forecast_dates=[date(2026, 3, 10)],
        crowd_probabilities=[[0.5, None, 0.5]],
    )
    ds = load_release(_write(tmp_path, [_row("b")], [multi]))
    assert dict(ds.splits) == {"b": "train", "m": "eval"} and ds.id.startswith("forecast-dojo:")
    assert ds.event("m").kind == "multi" and ds.event("m").labels == ("A", "B", "C")
    assert ds.beliefs["m"][0].probs == {"A": 0.5, "C": 0.5}  # unpriced B stays undefined
    assert [s.cutoff for s in ds.steps_of("b")] == [at("2025-07-05"), at("2025-07-20")]
    assert ds.resolutions["b"].label == "No"
    inclusive = load_release(tmp_path, convention=DayConvention.INCLUSIVE)
    assert inclusive.steps_of("b")[0].cutoff == at("2025-07-06")


def test_bad_rows_name_file_row_and_field(tmp_path: Path) -> None:
    _write(tmp_path, [_row("b"), _row("x", resolved_label="Maybe")], [])
    with pytest.raises(FieldError, match=r"train\.parquet: row 1: field resolved_label"):
        load_release(tmp_path)
