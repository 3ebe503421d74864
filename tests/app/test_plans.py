"""The workflows' records: each reads back from its file as the same record (TOML, YAML, JSON),
a preset fills only the fields not given, and a bad file is refused naming the file and the
field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pastcast.app import (
    ConstructionAuditPlan,
    CorpusBuildPlan,
    CurationPlan,
    ForecastBenchImport,
    PolymarketImport,
    RunAuditPlan,
    read_plan,
    with_preset,
    write_plan,
)
from pastcast.curate import CurationConfig
from pastcast.errors import FieldError
from pastcast.runner import ExperimentPlan

RECORDS: list[Any] = [
    ExperimentPlan(preset="dojo", agents=({"name": "uniform"},), max_events=2),
    CurationPlan(
        dataset=Path("runs/fb"),
        corpus="runs/wcep",
        judge="openai:gpt-4o-mini",
        out="runs/curated",
        retrieval="bm25",
        config=CurationConfig(min_dates=2),
    ),
    ForecastBenchImport(
        path_or_url="fb",
        out="runs/fb",
        split="2025-01-01,2025-06-01,2025-09-01",
        corpus_end="2025-08-30",
        filters={"min_dates": 3, "multi": {"min_trades": 2}},
        sources=("polymarket",),
    ),
    PolymarketImport(out="runs/pm", preset="hindcast", max_events=5, trades=False),
    CorpusBuildPlan(
        source="wcep:data/wcep",
        out=Path("runs/wcep"),
        since="2025-01-01",
        quality=("english",),
        require_dates="published",
    ),
    ConstructionAuditPlan(datasets=("world:0", Path("runs/fb")), schedules=("dojo",), seed=3),
    RunAuditPlan(run_log=Path("runs/r/run.jsonl"), corpus="jsonl:docs.jsonl", examples=0),
]


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".json"])
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_a_record_reads_back_from_its_file(record: BaseModel, suffix: str, tmp_path: Path) -> None:
    path = write_plan(record, tmp_path / f"plan{suffix}")
    assert read_plan(path, type(record)) == record
    with pytest.raises(FieldError, match="exists"):  # a file is never replaced
        write_plan(record, path)


def test_the_preset_fills_only_the_fields_not_given() -> None:
    given = CurationPlan(
        dataset="world:0",
        corpus="idx",
        judge="scripted:x",
        out="out",
        window_days=30,
        config=CurationConfig(coverage_at="judging_date"),
    )
    merged = with_preset(given, "hindcast")
    assert merged.preset == "hindcast"
    assert (merged.window_days, merged.config.coverage_at) == (30, "judging_date")  # given
    assert merged.config.coverage_final == "judge"  # the preset's
    assert merged.config.coverage_queries == 5 and merged.config.min_dates == 3


def test_a_bad_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "curate.toml"
    path.write_text(
        'dataset = "world:0"\ncorpus = "idx"\njudge = "scripted:x"\nout = "o"\n'
        "[config]\nmin_dates = -1\n"
    )
    with pytest.raises(FieldError, match=rf"{path}: field config\.min_dates: "):
        read_plan(path, CurationPlan)
    path.write_text('dataset = "world:0"\npreset = "nope"\n')
    with pytest.raises(FieldError, match=rf"{path}: field preset: unknown 'nope'"):
        read_plan(path, CurationPlan)


def test_an_import_preset_sets_a_filter_only_where_none_is_given() -> None:
    given = ForecastBenchImport(path_or_url="fb", out="o", filters={"min_dates": 0})
    assert with_preset(given, "dojo").filters == {"min_dates": 0}
    bare = with_preset(ForecastBenchImport(path_or_url="fb", out="o"), "dojo")
    assert bare.filters == {"min_dates": 3} and bare.filter_config().min_dates == 3
    assert with_preset(bare, "hindcast").schedule == "hindcast"


def test_a_corpus_build_stores_the_record_it_ran_in_its_report(tmp_path: Path) -> None:
    """The index says how it was made: its build report holds the merged record."""
    from pastcast.app import build_corpus
    from pastcast.corpus import CorpusBuildReport

    repo = Path(__file__).resolve().parents[2]
    plan = CorpusBuildPlan(
        source=f"jsonl:{repo / 'examples' / 'docs.jsonl'}", out=tmp_path / "idx", workers=1
    )
    build_corpus(plan)
    report = CorpusBuildReport.load(tmp_path / "idx")
    assert report is not None
    assert report.plan == plan.model_dump(mode="json")
    assert CorpusBuildPlan.model_validate(report.plan) == plan
