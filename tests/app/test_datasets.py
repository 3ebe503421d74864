"""One resolver for the dataset a string names, with errors that name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.app import open_dataset
from pastcast.cutoff import DayConvention
from pastcast.errors import FieldError


def test_a_world_spec_opens_the_embedded_world() -> None:
    dataset = open_dataset("world:3")
    assert dataset.id.startswith("world") and dataset.steps


def test_a_bad_world_field_names_the_field_not_a_flag() -> None:
    with pytest.raises(FieldError) as caught:
        open_dataset("world:0,no_such_field=1", field="plan.dataset")
    assert caught.value.field == "plan.dataset"
    assert "--" not in str(caught.value) and "no_such_field" in str(caught.value)


def test_a_missing_directory_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(FieldError, match="not a dataset directory"):
        open_dataset(tmp_path / "absent")


def test_the_day_convention_is_only_for_a_release() -> None:
    with pytest.raises(FieldError) as caught:
        open_dataset("world", convention=DayConvention.INCLUSIVE)
    assert caught.value.field == "day_convention"


def test_an_unreadable_directory_is_an_app_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(FieldError) as caught:
        open_dataset(tmp_path)
    assert caught.value.field == "dataset" and str(tmp_path) in str(caught.value)
