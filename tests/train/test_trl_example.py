"""The TRL example fine-tunes a tiny model on an SFT export, on a CPU, with nothing downloaded
(skipped without the train extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from pastcast.runlog import RunLog
from pastcast.train import export_sft

pytestmark = pytest.mark.train

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_sft.py"


def _example() -> ModuleType:
    pytest.importorskip("trl", reason="the train extra (TRL) is not installed")
    torch = pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("trl_sft_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.torch = torch
    return module


def test_the_toy_fine_tuning_example_lowers_training_loss(
    split_log: RunLog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = _example()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = tmp_path / "sft.jsonl"
    export_sft([split_log.path], data, keep="all")
    threads = example.torch.get_num_threads()
    example.torch.set_num_threads(1)  # a tiny model: threads only contend on a shared machine
    try:
        losses = example.train(data, tmp_path / "model", max_steps=12, batch_size=2)
    finally:
        example.torch.set_num_threads(threads)
    assert len(losses) == 12
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3
    assert (tmp_path / "model" / "config.json").is_file()
    tokenizer = example.AutoTokenizer.from_pretrained(tmp_path / "model", local_files_only=True)
    # the saved chat template renders the export's tool calls
    rows = example.load_export(data)
    row = next(r for r in rows if any(m["tool_calls"] for m in r["messages"]))
    text = tokenizer.apply_chat_template(row["messages"], tokenize=False)
    assert '<tool_call>{"name": "search", "arguments": {"query":' in text
