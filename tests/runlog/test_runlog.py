"""The run-log layout: steps in the JSONL file, the header beside it, notebooks as records;
schema-1 and schema-2 logs still read (and rescored), never resumed."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.errors import FieldError
from pastcast.records import Notebook
from pastcast.runlog import (
    SCHEMA_VERSION,
    AgentSpec,
    RunHeader,
    RunLogWriter,
    header_path,
    read_run_log,
    run_fingerprint,
    step_schema,
)
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import score_step
from pastcast.scoring.analyses import notebook_failures

V1 = Path(__file__).parent / "fixtures" / "run_v1.jsonl"
V2 = Path(__file__).parent / "fixtures" / "run_v2.jsonl"
"""Written by schema 2: heuristic and a scripted tool agent under memory_on on the tiny dataset;
the tool agent's notebook of each event's second step is dated after the cutoff (rejected)."""


def _header(**kw: object) -> RunHeader:
    base: dict[str, object] = {
        "run_id": "r1",
        "created_at": datetime(2025, 1, 1, tzinfo=UTC),
        "dataset_id": "d",
        "config": {"rollouts": 1, "workers": 1, "env": {"max_tool_calls": 400}},
        "agents": (AgentSpec(name="m", factory="f"),),
        "code_version": "test",
    }
    return RunHeader(**(base | kw))  # type: ignore[arg-type]


def test_header_path_is_derived_from_the_step_file() -> None:
    assert header_path("runs/x/run.jsonl") == Path("runs/x/run.header.json")
    assert header_path(Path("a/b.c.jsonl")) == Path("a/b.c.header.json")


def test_header_is_written_beside_the_steps_before_any_step(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with RunLogWriter(out, _header()):
        assert json.loads(header_path(out).read_text())["schema_version"] == SCHEMA_VERSION == 3
        assert out.read_text() == ""
        assert not list(tmp_path.glob("*.tmp*"))
    log = read_run_log(out)
    assert log.header == _header() and log.steps == ()


def test_a_header_written_before_knowledge_cutoffs_had_its_name_is_read(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    with RunLogWriter(out, _header(knowledge_cutoffs={"openai:m": "2024-01-31"})):
        pass
    stored = json.loads(header_path(out).read_text(encoding="utf-8"))
    stored["model_cutoffs"] = stored.pop("knowledge_cutoffs")
    header_path(out).write_text(json.dumps(stored), encoding="utf-8")
    assert read_run_log(out).header.knowledge_cutoffs == {"openai:m": date(2024, 1, 31)}


def test_a_run_writes_steps_only_and_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"), agent_spec("heuristic")))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    lines = out.read_text().splitlines()
    log = read_run_log(out)
    assert len(lines) == len(log.steps) == 8
    assert all("run_id" in json.loads(line) and "schema_version" not in line for line in lines)


def test_a_step_file_without_its_header_is_refused_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    header_path(out).unlink()
    with pytest.raises(FieldError, match=r"run\.jsonl:1: no run header: run\.header\.json"):
        read_run_log(out)
    with pytest.raises(FieldError, match=r"run\.jsonl:1: no run header"):
        run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    with pytest.raises(FieldError, match=r"run\.header\.json: pass the step file"):
        read_run_log(tmp_path / "run.header.json")


def test_schema_1_logs_are_read_and_rescore_identically() -> None:
    log = read_run_log(V1)
    assert log.header.schema_version == 1 and log.header.dataset_id == "tiny-v1"
    assert len(log.steps) == 16
    for rec in log.steps:
        assert score_step(rec) == rec.scores
    heuristic = [r for r in log.steps if r.agent == "heuristic"]
    calls = [c for r in heuristic for c in r.episode.tool_calls]
    assert {c.name for c in calls} == {"search", "read"}
    search = next(c for c in calls if c.name == "search")
    assert isinstance(search.result, str) and json.loads(search.result)[0]["id"] in search.doc_ids
    assert any(r.episode.messages for r in log.steps)


def test_a_schema_1_log_is_not_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    shutil.copy(V1, out)
    before = out.read_text()
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    with pytest.raises(FieldError, match=r"run-log schema 1; this run writes schema 3"):
        run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    assert out.read_text() == before and not header_path(out).exists()


def test_a_memory_on_run_records_notebooks_as_objects(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("heuristic", setting="memory_on"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    lines = [json.loads(line)["episode"] for line in out.read_text().splitlines()]
    assert all(isinstance(e["notebook_out"], dict) for e in lines)
    assert all(isinstance(e["notebook_out"]["assessment"]["probabilities"], list) for e in lines)
    assert all(e["notebook_carried"] is False and e["notebook_problems"] == [] for e in lines)
    steps = {(r.event_id, r.step_index): r.episode for r in read_run_log(out).steps}
    first, second = steps[("ev-rocket", 0)], steps[("ev-rocket", 1)]
    assert first.notebook_in is None and isinstance(first.notebook_out, Notebook)
    assert second.notebook_in == first.notebook_out
    # What the agent was shown is the record's canonical text.
    assert "probabilities" in first.notebook_out.text()


def test_schema_2_logs_are_read_with_typed_notebooks_and_rescore_identically() -> None:
    log = read_run_log(V2)
    assert log.header.schema_version == 2 and len(log.steps) == 8
    for rec in log.steps:
        assert score_step(rec) == rec.scores
        assert "[notebook carried forward" not in rec.forecast.rationale
        ep = rec.episode
        assert ep.notebook_out is not None and isinstance(ep.notebook_out, Notebook)
        assert (ep.notebook_in is None) == (rec.step_index == 0)
    carried = [r for r in log.steps if r.episode.notebook_carried]
    assert [(r.agent, r.step_index) for r in carried] == [("tool-agent", 1)] * 2
    for rec in carried:
        assert rec.episode.notebook_out == rec.episode.notebook_in
        (problem,) = rec.episode.notebook_problems
        assert problem.kind == "future_dates" and "['E1']" in problem.detail
    assert notebook_failures(log.steps) == {"future_dates": 2}


def test_a_schema_2_log_is_not_resumed(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    shutil.copy(V2, out)
    shutil.copy(header_path(V2), header_path(out))
    before = out.read_text()
    cfg = RunConfig(agents=(agent_spec("heuristic", setting="memory_on"),))
    with pytest.raises(FieldError, match=r"run-log schema 2; this run writes schema 3") as err:
        run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    assert "\n" not in str(err.value)
    assert out.read_text() == before


def test_step_schema_types_the_notebooks() -> None:
    episode = step_schema().field("episode").type
    notebook = episode.field("notebook_out").type
    assert notebook.field("assessment").type.field("probabilities").type == pa.list_(
        pa.struct([("label", pa.string()), ("p", pa.float64())])
    )
    assert pa.types.is_list(notebook.field("evidence_ledger").type)
    assert episode.field("notebook_in").type == notebook
    assert episode.field("notebook_carried").type == pa.bool_()
    problem = episode.field("notebook_problems").type.value_type
    assert [f.name for f in problem] == ["kind", "detail"]


def test_fingerprint_ignores_run_identity_and_workers_only() -> None:
    same = _header(
        run_id="r2",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        code_version="other",
        config={"rollouts": 1, "workers": 8, "env": {"max_tool_calls": 400}},
    )
    assert run_fingerprint(same) == run_fingerprint(_header())
    budget = _header(config={"rollouts": 1, "workers": 1, "env": {"max_tool_calls": 3}})
    assert run_fingerprint(budget) != run_fingerprint(_header())
    assert run_fingerprint(_header(prompts={"p.v1": "x"})) != run_fingerprint(_header())


def test_step_schema_refuses_a_field_of_two_types() -> None:
    from pydantic import BaseModel

    from pastcast.runlog._arrow import _arrow_type

    class TwoTypes(BaseModel):
        value: int | str

    with pytest.raises(TypeError, match="one type"):
        _arrow_type(TwoTypes)


def test_a_log_written_before_the_evidence_tally_still_reads(tmp_path: Path) -> None:
    """``evidence_tally`` and ``stop_reason`` are optional: lines without them (schema 2, or a
    schema-3 log written before the fields) read with None, and the Arrow schema types them."""
    assert all(
        r.episode.evidence_tally is None and r.episode.stop_reason is None
        for r in read_run_log(V2).steps
    )
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("heuristic"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        assert line["episode"]["evidence_tally"] is None
        del line["episode"]["evidence_tally"], line["episode"]["stop_reason"]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    steps = read_run_log(out).steps
    assert len(steps) == len(lines) and all(s.episode.evidence_tally is None for s in steps)
    tally = step_schema().field("episode").type.field("evidence_tally").type
    assert [f.name for f in tally] == ["sides", "documents", "quality"]
    side = tally.field("sides").type.value_type
    assert [f.name for f in side] == ["label", "strong", "weak", "irrel", "contra"]
