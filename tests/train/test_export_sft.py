"""Chat fine-tuning exports: the schema, loading with ``datasets``, tool calls that round-trip,
the selection of rollouts, and the split guard with its manifest."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import jsonschema
import pytest

from pastcast.agents import agent_spec
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset, content_hash
from pastcast.errors import FieldError
from pastcast.records import Message
from pastcast.runlog import RunLog, StepRecord
from pastcast.runner import RunConfig, run_benchmark
from pastcast.train import (
    OpenAiRecord,
    SftRecord,
    SplitPolicy,
    conversations,
    export_sft,
    manifest_path,
    read_manifest,
    read_sft,
    sft_messages,
    sft_schema,
)
from pastcast.world import World


def _steps(log: RunLog) -> dict[tuple[str, str, int, int], StepRecord]:
    return {(s.agent, s.event_id, s.step_index, s.rollout): s for s in log.steps}


def _conversation(step: StepRecord, index: int) -> tuple[Message, ...]:
    return conversations(step.episode)[index].messages


def test_messages_export_validates_loads_with_datasets_and_round_trips(
    split_log: RunLog, split_world: Dataset, tmp_path: Path
) -> None:
    from datasets import load_dataset

    out = tmp_path / "sft.jsonl"
    manifest = export_sft([split_log.path], out, keep="all", datasets=[split_world])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == manifest.rows > 0
    schema = sft_schema("messages")
    for line in lines:
        jsonschema.validate(line, schema)
    # Hugging Face datasets reads the file as one table, without being told the schema.
    loaded = load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == len(lines)
    assert set(loaded.column_names) >= {"messages", "tools", "run_id", "forecast", "rewards"}
    steps = _steps(split_log)
    native_calls = 0
    for row, line in zip(loaded, lines, strict=True):
        for record in (SftRecord.model_validate(row), SftRecord.model_validate(line)):
            step = steps[(record.agent, record.event_id, record.step_index, record.rollout)]
            # Tool calls, their ids and arguments, and the tool results come back as logged.
            assert sft_messages(record) == _conversation(step, record.conversation)
            assert record.forecast == step.forecast.probs
        native_calls += sum(len(m["tool_calls"]) for m in line["messages"])
        assert line["split"] == "train"
        last = line["messages"][-1]
        assert last["role"] == "assistant" and "probabilities" in last["content"]
    assert native_calls > 0  # the native agent's tool calls are in the file
    tools = {t["function"]["name"] for line in lines for t in json.loads(line["tools"])}
    assert {"search", "read"} <= tools
    assert read_sft(out) == [SftRecord.model_validate(line) for line in lines]


def test_openai_shape_has_only_openai_keys_and_round_trips(
    split_log: RunLog, tmp_path: Path
) -> None:
    from datasets import load_dataset

    out = tmp_path / "openai.jsonl"
    manifest = export_sft([split_log.path], out, shape="openai", keep="all")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    schema = sft_schema("openai")
    steps = _steps(split_log)
    assert len(manifest.sources) == len(lines)
    for line, src in zip(lines, manifest.sources, strict=True):
        jsonschema.validate(line, schema)
        assert set(line) <= {"messages", "tools"}
        for m in line["messages"]:
            assert set(m) <= {"role", "content", "tool_calls", "tool_call_id"}
            if m["role"] == "tool":
                assert m["tool_call_id"]
        step = steps[(src.agent, src.event_id, src.step_index, src.rollout)]
        record = OpenAiRecord.model_validate(line)
        assert sft_messages(record) == _conversation(step, src.conversation)
    native = [line for line in lines if "tools" in line]
    assert native and all(t["type"] == "function" for t in native[0]["tools"])
    calls = [c for line in native for m in line["messages"] for c in m.get("tool_calls", [])]
    assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)
    loaded = load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == len(lines)


def test_best_keeps_one_rollout_per_step_the_best_one(split_log: RunLog, tmp_path: Path) -> None:
    every = export_sft([split_log.path], tmp_path / "all.jsonl", keep="all")
    best = export_sft([split_log.path], tmp_path / "best.jsonl", keep="best", score="neg_brier")
    records = [r for r in read_sft(tmp_path / "best.jsonl") if isinstance(r, SftRecord)]
    chosen = {(r.agent, r.event_id, r.step_index): r for r in records if r.final}
    assert len(chosen) == sum(1 for r in records if r.final)  # one rollout per step
    steps = _steps(split_log)
    for (agent, event, index), r in chosen.items():
        rivals = [steps[(agent, event, index, k)] for k in (0, 1)]
        assert r.rewards.neg_brier == max(-s.scores.brier for s in rivals)
    assert best.skipped["not_best"] == len(chosen)  # two rollouts each, one kept
    assert every.rows == 2 * best.rows
    assert best.options == {"keep": "best", "score": "neg_brier", "min_score": None}


def test_min_score_keeps_only_forecasts_beating_it(split_log: RunLog, tmp_path: Path) -> None:
    every = [r for r in read_sft_all(split_log, tmp_path) if isinstance(r, SftRecord)]
    values = sorted({r.rewards.accuracy for r in every})
    assert len(values) > 1  # the scripted rollouts differ
    threshold = values[0]
    manifest = export_sft(
        [split_log.path], tmp_path / "min.jsonl", keep="all", score="accuracy", min_score=threshold
    )
    kept = [r for r in read_sft(tmp_path / "min.jsonl") if isinstance(r, SftRecord)]
    assert kept and all(r.rewards.accuracy > threshold for r in kept)
    assert len(kept) < len(every)
    assert manifest.skipped["below_min_score"] > 0


def read_sft_all(log: RunLog, tmp_path: Path) -> list[SftRecord | OpenAiRecord]:
    export_sft([log.path], tmp_path / "every.jsonl", keep="all")
    return read_sft(tmp_path / "every.jsonl")


def test_only_training_split_by_default_and_the_manifest_says_so(
    split_log: RunLog, split_world: Dataset, tmp_path: Path
) -> None:
    out = tmp_path / "sft.jsonl"
    manifest = export_sft([split_log.path], out, datasets=[split_world])
    assert manifest_path(out) == tmp_path / "sft.manifest.json"
    assert read_manifest(out) == manifest
    train = {e for e, s in split_world.splits.items() if s == "train"}
    assert {r.event_id for r in read_sft(out) if isinstance(r, SftRecord)} <= train
    assert {src.event_id for src in manifest.sources} <= train
    eval_steps = sum(1 for s in split_log.steps if s.split == "eval")
    assert manifest.splits == ("train",) and manifest.left_out == {"eval": eval_steps}
    assert manifest.guarded and not manifest.force_eval
    assert [d.model_dump() for d in manifest.datasets] == [
        {"dataset_id": "world-split-test", "content_hash": content_hash(split_world)}
    ]
    assert [r.run_id for r in manifest.runs] == [split_log.header.run_id]
    assert manifest.runs[0].corpus_sha256 == split_log.header.corpus.content_sha256
    train_cutoffs = [s.cutoff for s in split_log.steps if s.split == "train"]
    assert manifest.first_cutoff >= min(train_cutoffs)
    assert manifest.last_cutoff <= max(train_cutoffs)
    assert manifest.sha256 == __import__("hashlib").sha256(out.read_bytes()).hexdigest()


def test_an_evaluation_split_is_refused_unless_forced(split_log: RunLog, tmp_path: Path) -> None:
    out = tmp_path / "eval.jsonl"
    with pytest.raises(FieldError, match="split 'eval' holds evaluation events"):
        export_sft([split_log.path], out, policy=SplitPolicy(splits=("eval",)))
    assert not out.exists() and not manifest_path(out).exists()
    forced = export_sft(
        [split_log.path], out, policy=SplitPolicy(splits=("eval",), force_eval=True)
    )
    assert forced.splits == ("eval",) and forced.force_eval
    assert all(r.split == "eval" for r in read_sft(out) if isinstance(r, SftRecord))


def test_unsplit_events_are_used_only_when_selected(world_log: RunLog, tmp_path: Path) -> None:
    out = tmp_path / "world.jsonl"
    with pytest.raises(FieldError, match=r"no steps of split train .*unsplit"):
        export_sft([world_log.path], out)
    assert not out.exists()
    manifest = export_sft([world_log.path], out, policy=SplitPolicy(splits=("unsplit",)))
    assert manifest.splits == ("unsplit",) and manifest.rows > 0
    # The embedded world is rebuilt from its id for the manifest's content hash.
    assert manifest.datasets[0].dataset_id == "world-v2:seed=0"
    assert manifest.datasets[0].content_hash is not None


def test_a_recorded_split_that_the_dataset_contradicts_is_refused(
    split_log: RunLog, split_world: Dataset, tmp_path: Path
) -> None:
    flipped = {e: ("eval" if s == "train" else "train") for e, s in split_world.splits.items()}
    other = Dataset(
        split_world.id,
        split_world.events,
        split_world.resolutions,
        split_world.beliefs,
        split_world.steps,
        flipped,
    )
    with pytest.raises(FieldError, match=r"is recorded in split 'train' but dataset"):
        export_sft([split_log.path], tmp_path / "x.jsonl", datasets=[other])


def test_conversations_follow_the_calls_that_extend_each_other(split_log: RunLog) -> None:
    step = next(s for s in split_log.steps if s.agent == "json-agent")
    convs = conversations(step.episode)
    assert len(convs) == 1 and convs[0].final
    calls = step.episode.model_calls
    assert convs[0].call == calls[-1]
    # the conversation holds every reply of the episode, in order
    replies = [step.episode.messages[c.reply] for c in calls if c.reply is not None]
    assert [m for m in convs[0].messages if m.role == "assistant"] == replies


def test_steps_of_agents_without_a_model_give_no_rows(split_log: RunLog, tmp_path: Path) -> None:
    manifest = export_sft([split_log.path], tmp_path / "x.jsonl", keep="all")
    agents = {src.agent for src in manifest.sources}
    assert agents == {"json-agent", "native-agent"}
    per_agent: dict[str, int] = defaultdict(int)
    for s in split_log.steps:
        per_agent[s.agent] += s.split == "train"
    assert manifest.skipped["no_model_calls"] == per_agent["uniform"]


def test_a_run_whose_forecasts_were_all_unusable_exports_nothing_and_says_why(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    """As the README's tour says: only usable forecasts become records, so the export exits 2
    counting the steps left out per reason, and writes no file."""
    from typer.testing import CliRunner

    from pastcast.cli._app import app

    log = tmp_path / "run.jsonl"
    spec = agent_spec("tool-agent", model="train-test:garbled", label="garbled")
    run_benchmark(world.dataset, world_index, RunConfig(agents=(spec,), max_events=2), log,
                  progress=False)  # fmt: skip
    out = tmp_path / "sft.jsonl"
    res = CliRunner().invoke(app, ["export", "sft", str(log), "--out", str(out), "--split",
                                   "unsplit"])  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "nothing to export" in res.stderr and "unusable" in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1
    assert not out.exists()
