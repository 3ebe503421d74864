"""The model knowledge-cutoff registry and model names in provider specs."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from pastcast.models import (
    PriceTable,
    knowledge_cutoff,
    knowledge_cutoffs,
    load_knowledge_cutoffs,
    register_knowledge_cutoff,
    remembered,
    spec_model_name,
)


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("openai:gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4o"),
        ("openai-compatible:qwen2.5@http://127.0.0.1:8080/v1", "qwen2.5"),
        ("local:/models/x.gguf", "/models/x.gguf"),
    ],
)
def test_model_name_of_a_spec(spec: str, name: str) -> None:
    assert spec_model_name(spec) == name


def test_built_in_cutoffs_match_specs_and_dated_snapshots() -> None:
    assert knowledge_cutoff("openai:gpt-4o-mini") == date(2023, 10, 31)
    assert knowledge_cutoff("gpt-4o-mini-2024-07-18") == date(2023, 10, 31)  # the longest prefix
    assert knowledge_cutoff("openai:gpt-4.1-mini") == date(2024, 6, 30)
    assert knowledge_cutoff("openai-compatible:mystery@http://h/v1") is None


def test_users_register_cutoffs_through_the_registry(tmp_path: Path) -> None:
    try:
        register_knowledge_cutoff("openai-compatible:house-model@http://h/v1", "2024-02-29")
        assert knowledge_cutoff("house-model") == date(2024, 2, 29)
        assert "house-model" in knowledge_cutoffs.names()
        with pytest.raises(ValueError, match="already registered"):
            register_knowledge_cutoff("house-model", date(2024, 3, 1))
        f = tmp_path / "cutoffs.toml"
        f.write_text('house-model = 2024-05-31\n"other-model" = "2023-01-31"\n')
        loaded = load_knowledge_cutoffs(f)
        assert loaded == {"house-model": date(2024, 5, 31), "other-model": date(2023, 1, 31)}
        assert knowledge_cutoff("house-model-v2") == date(2024, 5, 31)
    finally:
        for name in ("house-model", "other-model"):
            knowledge_cutoffs._entries.pop(name, None)  # white-box: leave the registry as found


def test_a_bad_cutoff_file_names_the_file_and_model(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"m": "last spring"}')
    with pytest.raises(ValueError, match=r"c.json: m: not a date"):
        load_knowledge_cutoffs(f)


def test_an_outcome_is_remembered_up_to_the_end_of_the_cutoff_day() -> None:
    cut = date(2023, 10, 31)
    assert remembered(datetime(2023, 10, 31, 23, 59, tzinfo=UTC), cut)
    assert not remembered(datetime(2023, 11, 1, tzinfo=UTC), cut)


def test_prices_cover_the_specs_a_plan_names() -> None:
    table = PriceTable()
    assert table.price(spec_model_name("openai:gpt-4o-mini")) is not None
    assert table.price(spec_model_name("openai-compatible:mystery@http://h/v1")) is None
