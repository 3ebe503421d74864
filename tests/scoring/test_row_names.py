"""``score_matrix`` without keys names each row's event by its row number, lazily."""

from __future__ import annotations

import numpy as np
import pytest

from pastcast.scoring import score_matrix, summarize
from pastcast.scoring._table import RowNames


def test_row_names_are_made_only_when_asked_for() -> None:
    n = 2_000_000
    table = score_matrix(np.full((n, 2), 0.5), np.zeros(n, dtype=np.int64))
    codes, names = table.keys["event"]
    assert isinstance(names, RowNames)  # not two million strings
    assert len(names) == n and names[7] == "7" and names[-1] == str(n - 1)
    assert names.index("1999999") == n - 1 and table.name("event", 12) == "12"
    assert codes[:3].tolist() == [0, 1, 2]


def test_row_names_behave_like_the_tuple_they_stand_for() -> None:
    names, tup = RowNames(5), ("0", "1", "2", "3", "4")
    assert list(names) == list(tup) and names[1:4] == tup[1:4] and names == tup
    assert "3" in names and "5" not in names and "03" not in names
    assert [names.index(s) for s in tup] == [0, 1, 2, 3, 4]
    for bad in ("5", "-1", "03", "x", 3):
        with pytest.raises(ValueError):
            names.index(bad)
    with pytest.raises(IndexError):
        names[5]


def test_a_table_without_keys_summarises_by_event() -> None:
    table = score_matrix(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]), np.array([0, 0, 1]))
    out = summarize(table, by=("event",), bootstrap=0)
    assert [s.group for s in out] == [("0",), ("1",), ("2",)]
    assert table.take([2, 0]).keys["event"][1] == ("0", "1", "2")
