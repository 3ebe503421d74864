"""The fine-tuning study end to end, on a CPU with nothing downloaded (skipped without the train
extra): the training split exported, a tiny student tuned with TRL, the base and the tuned
checkpoint run as agents (``transformers:PATH``) on the held-out split, Table 4 printed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.app import FinetunePlan, build_corpus, finetune, with_preset
from pastcast.cli import app
from pastcast.dataset import Dataset, save_dataset
from pastcast.errors import FieldError
from pastcast.runlog import RunLog, read_run_log
from pastcast.world import World

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def torch_one_thread() -> object:
    pytest.importorskip("trl", reason="the train extra (TRL) is not installed")
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: threads only contend on a shared machine
    yield torch
    torch.set_num_threads(threads)


@pytest.fixture
def heldout(world: World, split_world: Dataset, tmp_path: Path) -> tuple[Path, Path]:
    """The split world on disk (its eval events held out) and the world's index."""
    data = save_dataset(split_world, tmp_path / "data")
    build_corpus("world:0", out=tmp_path / "index")
    return data, tmp_path / "index"


def test_the_study_tunes_a_student_and_compares_it_with_its_base_on_held_out_events(
    split_log: RunLog,
    heldout: tuple[Path, Path],
    tmp_path: Path,
    torch_one_thread: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data, index = heldout
    out = tmp_path / "study"
    plan = FinetunePlan(
        run_logs=(str(split_log.path),),
        out=out,
        dataset=data,
        corpus=index,
        keep="all",
        max_steps=1,
        batch_size=2,
        learning_rate=3e-3,
        max_events=1,
        max_new_tokens=24,
    )
    start = time.perf_counter()
    made = finetune(plan)
    print(f"study: {time.perf_counter() - start:.1f} s; stages {made.seconds}")
    assert len(made.training.losses) == 1
    # Trained only on the training split: every exported row is of a train step.
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    assert rows and {r["split"] for r in rows} == {"train"}
    # The tuned checkpoint is not the base: one step moved its weights.
    import torch
    from safetensors.torch import load_file

    before = load_file(out / "base" / "model.safetensors")
    after = load_file(out / "model" / "model.safetensors")
    assert any(not torch.equal(before[k], after[k]) for k in before)
    # Both ran as agents on the held-out split only, through the transformers provider.
    log = read_run_log(made.heldout.path)
    assert {s.agent for s in log.steps} == {"base", "sft"}
    assert {s.split for s in log.steps} == {"eval"}
    specs = {a.args["model"] for a in log.header.agents}
    assert specs == {f"transformers:{out / 'base'}", f"transformers:{out / 'model'}"}
    calls = [c for s in log.steps for c in s.episode.model_calls]
    assert calls and all(c.error is None and 0 < c.usage.output_tokens <= 24 for c in calls)
    # Table 4's rows: tuned against base on the same steps.
    table = made.compared.comparison
    assert (table.base_name, table.other_name) == ("base", "sft")
    assert table.overall.n_matched == len(log.steps) // 2
    # A finished study is not written over.
    with pytest.raises(FieldError, match=r"out: .* holds a finished study"):
        finetune(plan)


def test_the_tiny_student_renders_the_exported_tool_calls_and_learns_them(
    split_log: RunLog, tmp_path: Path, torch_one_thread: object
) -> None:
    from transformers import AutoTokenizer

    from pastcast.train import export_sft, load_export, sft_train, tiny_base

    data = tmp_path / "sft.jsonl"
    export_sft([split_log.path], data, keep="all")
    tiny_base(data, tmp_path / "base")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "base", local_files_only=True)
    row = next(r for r in load_export(data) if any(m["tool_calls"] for m in r["messages"]))
    text = tokenizer.apply_chat_template(row["messages"], tokenize=False)
    assert '<tool_call>{"name": "search", "arguments": {"query":' in text
    trained = sft_train(
        data, tmp_path / "base", tmp_path / "model", max_steps=12, batch_size=2, learning_rate=3e-3
    )
    losses = trained.losses
    assert len(losses) == 12
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3


def test_the_dojo_train_preset_sets_three_epochs_under_the_given_fields() -> None:
    plan = with_preset(FinetunePlan(run_logs=("r",), out="o", dataset="d", epochs=2), "dojo-train")
    assert plan.epochs == 2  # given, over the preset's
    assert (
        with_preset(FinetunePlan(run_logs=("r",), out="o", dataset="d"), "dojo-train").epochs == 3
    )


def test_the_command_refuses_a_base_that_is_no_model_before_any_work(
    split_log: RunLog, tmp_path: Path
) -> None:
    args = ["train", "sft", str(split_log.path), "--out", str(tmp_path / "s")]
    args += ["--dataset", "d", "--base", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"error: --base: {tmp_path}: not a Hugging Face model directory (no config.json)"
    )
    assert not (tmp_path / "s").exists()
