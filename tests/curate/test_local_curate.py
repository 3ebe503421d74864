"""The whole curation pipeline on a real local model (SmolLM2-135M under llama.cpp), two real
ForecastBench questions and the WCEP archive of their last months.

SmolLM2's judgements are meaningless; this checks the plumbing end to end: schema-constrained
replies drive every stage, every event is accounted for in the funnel, every judgement is
recorded with its prompt, model, output and version, and re-curating is answered from the cache.
"""

from __future__ import annotations

import importlib.util
import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep
from pastcast.curate import Judgement, read_curation
from pastcast.dataset import Dataset, load_dataset, save_dataset
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import read_forecastbench
from pastcast.models import ModelError
from pastcast.models._packaged import smollm2_path

pytestmark = [pytest.mark.local_llm, pytest.mark.shared_data, pytest.mark.timeout(1800)]

# Will 2 Fed rate cuts happen in 2025? (No); Will Trump refrain from announcing a next Fed Chair
# in 2025? (Yes). Judged in December 2025. Two questions: constrained sampling on two cores
# takes seconds a token.
QUESTIONS = (
    "polymarket:0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc",
    "polymarket:0x21d5b50fd0bc5013be79a7cdb4b3f0917127071cf27a324804c030f6eb06f5b4",
)


def _model_available() -> None:
    for module, extra in (("openai", "llm"), ("llama_cpp", "local")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (extra {extra!r})")
    try:
        smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))


def _questions(shared: Path) -> Dataset:
    result = read_forecastbench(shared / "forecastbench")
    chosen = [h for h in result.histories if h.event.id in QUESTIONS]
    if len(chosen) != len(QUESTIONS):
        pytest.skip("the ForecastBench snapshot lacks the chosen questions")
    ds, _ = build_dataset(
        chosen, name="forecastbench", schedule=make_schedule("dojo", start_at_first_belief=True)
    )
    assert {e.id for e in ds.events} == set(QUESTIONS)
    return ds


def test_curation_end_to_end_on_real_questions_and_wcep(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    _model_available()
    dataset = save_dataset(_questions(shared_data_dir), tmp_path / "questions")
    docs = read_wcep(shared_data_dir / "wcep", since=date(2025, 10, 20), until=date(2025, 12, 31))
    index = tmp_path / "wcep"
    EmbeddedIndex.build(docs, index)
    out = tmp_path / "curated"
    args = ["data", "curate", str(dataset), "--corpus", str(index), "--judge", "local:smollm2"]
    args += ["--out", str(out), "--retrieval", "bm25", "--window-days", "45"]
    # Short caps: one coverage query per outcome, short replies (a reply cut short is a
    # judge error that removes its event: counted like any other reason).
    args += ["--coverage-queries", "1", "--max-tokens", "128", "--json"]

    first = CliRunner().invoke(app, args)
    # SmolLM2 may keep nothing: then nothing is written, the funnel still says why (exit 1).
    assert first.exit_code in (0, 1), first.stderr
    report = json.loads(first.stdout)
    funnel = report["funnel"]
    assert funnel[0]["remaining"] == 2
    assert [s["stage"] for s in funnel] == [
        "input",
        "forecast dates",
        "query decomposition",
        "evidence judge",
        "coverage probe",
        "outcome and topic balance",
    ]
    assert sum(s["removed"] for s in funnel) == 2 - report["events"]
    assert report["judgements"] >= 2  # at least the decomposition of each question
    cache = tmp_path / "curated.judge-cache"
    assert 1 <= len(list(cache.rglob("*.json"))) <= report["judgements"]
    if first.exit_code == 0:
        assert load_dataset(out).id == report["dataset_id"]
        events = read_curation(out)
        assert len(events) == 2
        for e in events:  # each event is kept or removed at a stage, with the reason
            assert e.kept or (e.stage and e.reason)
        lines = (out / "curation" / "judgements.jsonl").read_text().splitlines()
        judgements = [Judgement.model_validate_json(line) for line in lines]
        assert len(judgements) == report["judgements"]
        for j in judgements:
            assert j.model.startswith("local:SmolLM2") and j.version == "1"
            assert j.prompt.startswith("curate_") and len(j.prompt_sha256) == 64
            assert j.messages[-1].role == "user" and (j.output or j.error)
    else:
        assert first.stderr.startswith("error: no events are left to write")
        assert not out.exists()
    # Nothing a judge was sent names how a question resolved.
    sent = "\n".join(p.read_text() for p in cache.rglob("*.json"))
    assert "resolved to" not in sent.lower()

    again = CliRunner().invoke(app, args)  # replaces the dataset it wrote, if any
    assert again.exit_code == first.exit_code, again.stderr
    replay = json.loads(again.stdout)
    assert replay["cached"] == replay["judgements"] == report["judgements"]
    assert replay["dataset_id"] == report["dataset_id"] and replay["funnel"] == funnel
