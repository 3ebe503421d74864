"""Supervised fine-tuning on an SFT export with TRL's ``SFTTrainer`` (the ``train`` extra), on
the assistant turns only; ``tiny_base`` builds a student with nothing downloaded (a tokenizer
trained on the export, a 2-layer GPT-2 with random weights) that shows the plumbing, not a
forecaster. The heavy libraries are imported by the functions that use them. docs/training.md
("The fine-tuning study")."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]

# ChatML with tools: the tool definitions in a system turn, each tool call of an assistant turn
# as <tool_call>{"name": ..., "arguments": ...}</tool_call> (the form pastcast's transformers
# provider reads back), tool results as "tool" turns. The {% generation %} marks let TRL train
# on the assistant's turns only.
_CHAT_TEMPLATE = (
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


def _libraries(*names: str) -> list[Any]:
    """The training libraries, untyped at this boundary (their own annotations are partial)."""
    return [importlib.import_module(name) for name in names]


def load_export(path: str | Path) -> Any:
    """The export as TRL reads it (a ``datasets.Dataset``): ``messages`` and ``tools`` (JSON
    text, decoded by TRL); the other columns (keys, forecast, rewards) are for analysis."""
    from datasets import load_dataset

    dataset = load_dataset("json", data_files=str(path), split="train")
    return dataset.select_columns(["messages", "tools"])


def _texts(dataset: Any) -> list[str]:
    """Everything the template renders, for training the tokenizer."""
    out = []
    for row in dataset:
        out.append(row["tools"])
        for m in row["messages"]:
            out.append(m["content"] or "")
            for call in m["tool_calls"] or []:
                out.append(call["function"]["name"] + " " + call["function"]["arguments"])
    return out


def tiny_base(
    data: str | Path, out: str | Path, *, window: int = 4096, seed: int = 0, vocab: int = 2000
) -> Path:
    """A tiny student saved to ``out``: the tokenizer trained on the export at ``data`` (with
    the ChatML template above) and a 2-layer GPT-2 of ``window`` positions, random weights from
    ``seed``. The window holds a held-out episode's prompts; training cuts at its own length."""
    torch, tk, hf = _libraries("torch", "tokenizers", "transformers")
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=_SPECIAL,
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_texts(load_export(data)), trainer=trainer)
    tokenizer = hf.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<|pad|>",
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        additional_special_tokens=_SPECIAL[3:],
    )
    tokenizer.chat_template = _CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = hf.GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=window,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    hf.GPT2LMHeadModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return Path(out)


@dataclass(frozen=True)
class SftTraining:
    """What a fine-tuning run did: the loss at every logged step, and where the model is."""

    model: Path
    losses: tuple[float, ...]
    rows: int


def sft_train(
    data: str | Path,
    base: str | Path,
    out: str | Path,
    *,
    epochs: float = 1.0,
    max_steps: int | None = None,
    max_length: int = 512,
    batch_size: int = 4,
    learning_rate: float = 1e-5,
    seed: int = 0,
) -> SftTraining:
    """Fine-tune the model directory ``base`` on the SFT export at ``data`` (assistant turns
    only; ``max_steps`` over ``epochs``) on the CPU; the model and tokenizer go to ``out``. A
    conversation longer than ``max_length`` tokens is cut, one whose assistant turns are all cut
    off is dropped by TRL."""
    hf, trl = _libraries("transformers", "trl")
    dataset = load_export(data)
    tokenizer = hf.AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = hf.AutoModelForCausalLM.from_pretrained(base, local_files_only=True)
    config = trl.SFTConfig(
        output_dir=str(out),
        num_train_epochs=epochs,
        max_steps=-1 if max_steps is None else max_steps,
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
    trainer = trl.SFTTrainer(
        model=model, args=config, train_dataset=dataset, processing_class=tokenizer
    )
    # Without tqdm the trainer prints each logged step to stdout, the command's output: the
    # losses are read from its history instead.
    trainer.remove_callback(hf.trainer_callback.PrinterCallback)
    trainer.train()
    trainer.save_model(str(out))
    losses = tuple(float(h["loss"]) for h in trainer.state.log_history if "loss" in h)
    return SftTraining(Path(out), losses, len(dataset))
