"""A validation error in one line, the same way wherever a record is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from pastcast.errors import FieldError
from pastcast.runlog import read_run_log
from pastcast.validation import field_path, first_error, first_problem, problems


class Leg(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


class Market(BaseModel):
    legs: list[Leg]
    volume: float = 0.0


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Market.model_validate(data)
    return info.value


def test_the_field_path_puts_list_positions_in_brackets() -> None:
    assert field_path(("legs", 1, "name")) == "legs[1].name"
    assert field_path(()) == ""


def test_the_first_problem_names_where_the_field_and_the_message() -> None:
    exc = _error({"legs": [{"name": "a"}, {"name": ""}]})
    assert first_problem(exc, "m.jsonl:3") == "m.jsonl:3: field legs[1].name: must not be empty"
    assert first_problem(exc) == "field legs[1].name: must not be empty"
    assert first_error(exc) == (("legs", 1, "name"), "must not be empty")


def test_every_problem_is_listed_with_its_path_under_a_root() -> None:
    exc = _error({"legs": "x", "volume": "lots"})
    assert problems(exc, root=("params", "market")) == [
        "params.market.legs: Input should be a valid list",
        "params.market.volume: Input should be a valid number, unable to parse string as a number",
    ]


def test_a_run_log_line_names_the_list_position_without_pydantics_prefix(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    header = {
        "kind": "header",
        "schema_version": 1,
        "run_id": "r",
        "created_at": "2024-01-01T00:00:00Z",
        "dataset_id": "d",
        "config": {},
        "agents": [{"name": "heuristic", "setting": "memory_free", "args": {}}],
        "code_version": "0",
    }
    log.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(FieldError) as info:
        read_run_log(log)
    assert str(info.value) == f"{log}:1: field agents[0].factory: Field required"
