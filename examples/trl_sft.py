"""Fine-tune a causal language model on pastcast's SFT export with TRL's SFT trainer.

    pastcast export sft runs/mine/run.jsonl --out runs/mine/sft.jsonl
    python examples/trl_sft.py runs/mine/sft.jsonl --out runs/mine/sft-model --max-steps 30

``--model tiny`` (the default) builds everything here, with nothing downloaded: a word-piece
tokenizer trained on the export itself, a ChatML chat template that renders tool calls and tool
results, and a 2-layer GPT-2 from a config. It runs on a CPU in seconds and shows the plumbing
(the export loads, the trainer reads its ``messages`` and ``tools``, the loss goes down), not a
useful forecaster. ``--model DIR`` fine-tunes a local Hugging Face model instead (its own
tokenizer and chat template).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset, load_dataset
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
)
from trl import SFTConfig, SFTTrainer

SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]

# ChatML with tools: the tool definitions in a system turn, each tool call of an assistant turn
# as <tool_call>{"name": ..., "arguments": ...}</tool_call>, tool results as "tool" turns. The
# {% generation %} marks let TRL train on the assistant's turns only.
CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n{{ tools | tojson }}<|im_end|>\n{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' %}<|im_start|>assistant\n{% generation %}"
    "{{ message.content or '' }}"
    "{%- for call in message.tool_calls or [] %}<tool_call>"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments }}}'
    "</tool_call>{%- endfor %}<|im_end|>{% endgeneration %}\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _texts(dataset: Dataset) -> list[str]:
    """Everything the template renders, for training the tokenizer."""
    out = []
    for row in dataset:
        out.append(row["tools"])
        for m in row["messages"]:
            out.append(m["content"] or "")
            for call in m["tool_calls"] or []:
                out.append(call["function"]["name"] + " " + call["function"]["arguments"])
    return out


def tiny_tokenizer(dataset: Dataset, vocab_size: int = 2000) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on the export, with the chat template above."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_texts(dataset), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<|pad|>",
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        additional_special_tokens=SPECIAL[3:],
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(tokenizer: PreTrainedTokenizerFast, max_length: int) -> GPT2LMHeadModel:
    """A 2-layer GPT-2 built from a config (random weights, nothing downloaded)."""
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=max_length,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)


def load_export(path: str | Path) -> Dataset:
    """The export as TRL reads it: ``messages`` and ``tools`` (JSON text, decoded by TRL); the
    other columns (the step's keys, forecast, rewards) stay for analysis and are dropped here."""
    dataset = load_dataset("json", data_files=str(path), split="train")
    return dataset.select_columns(["messages", "tools"])


def train(
    data: str | Path,
    out: str | Path,
    *,
    model: str = "tiny",
    max_steps: int = 30,
    max_length: int = 512,
    batch_size: int = 4,
    learning_rate: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Fine-tune on the export at ``data``; the model goes to ``out``. Returns the training
    loss at every step."""
    dataset = load_export(data)
    if model == "tiny":
        tokenizer = tiny_tokenizer(dataset)
        lm: Any = tiny_model(tokenizer, max_length)
    else:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
        lm = AutoModelForCausalLM.from_pretrained(model, local_files_only=True)
    config = SFTConfig(
        output_dir=str(out),
        max_steps=max_steps,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        max_length=max_length,
        assistant_only_loss=True,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=seed,
        data_seed=seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(model=lm, args=config, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    trainer.save_model(str(out))
    return [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="an SFT export in the messages shape (JSONL)")
    parser.add_argument("--out", required=True, help="where the fine-tuned model goes")
    parser.add_argument("--model", default="tiny", help="'tiny' or a local model directory")
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    losses = train(
        args.data,
        args.out,
        model=args.model,
        max_steps=args.max_steps,
        max_length=args.max_length,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        seed=args.seed,
    )
    k = max(1, len(losses) // 5)
    first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
    print(json.dumps({"steps": len(losses), "first_loss": first, "last_loss": last}))
    return 0 if math.isfinite(last) else 1


if __name__ == "__main__":
    raise SystemExit(main())
