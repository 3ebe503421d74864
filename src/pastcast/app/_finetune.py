"""Forecast-Dojo's fine-tuning study (section 5.5, Table 4) as one workflow: the training
split's trajectories exported, a student tuned on them with TRL, the base and the tuned model run
as agents on held-out events, and the two compared on the steps both forecast."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from pastcast.app._compare import Compared, compare_runs
from pastcast.app._corpus_plan import PathText
from pastcast.app._exports import Exported, export_runs
from pastcast.app._open import check_search_options, open_corpus, open_dataset
from pastcast.app._runs import run_plan
from pastcast.errors import FieldError
from pastcast.owned import claim_dir
from pastcast.runner import ExperimentPlan, PresetRecord, RunResult, preset
from pastcast.train import SftTraining, sft_train, tiny_base
from pastcast.validation import field_path, first_error

BASE, TUNED = "base", "sft"
"""The two agents of the held-out run (their models' labels)."""


class FinetunePlan(PresetRecord):
    """A fine-tuning study (``finetune``): export the training split of ``run_logs``, tune
    ``base`` on it, run both on the held-out split of ``dataset`` and compare them (Table 4)."""

    PRESET_STAGE = "train"

    run_logs: tuple[PathText, ...] = Field(min_length=1)
    """Run logs whose training-split trajectories are the training data (the teacher's runs)."""
    out: PathText
    """The study's folder (a new one, or one pastcast made): sft.jsonl, base/ for the tiny
    student, model/, heldout/run.jsonl."""
    dataset: PathText
    """The held-out events' dataset (a dataset directory or a Forecast-Dojo release)."""
    base: str = "tiny"
    """The student: a local Hugging Face model directory, or tiny (a 2-layer GPT-2 and a
    tokenizer built from the export: the plumbing, not a forecaster)."""
    keep: Literal["best", "all"] = "best"
    """The export's rollouts: the best of each step (by negative Brier), or all."""
    epochs: float = Field(default=1.0, gt=0)
    """Passes over the export (Forecast-Dojo: three)."""
    max_steps: int | None = Field(default=None, ge=1)
    """Training steps (over epochs when given)."""
    max_length: int = Field(default=2048, ge=16)
    """Tokens of a training conversation (longer ones are cut)."""
    batch_size: int = Field(default=4, ge=1)
    """Conversations per training step."""
    learning_rate: float = Field(default=1e-5, gt=0)
    """The optimiser's step size (constant)."""
    seed: int = 0
    """Seeds the tiny student's weights and the training's data order."""
    split: str = "eval"
    """The held-out split."""
    corpus: PathText | None = None
    """The held-out run's corpus (an index directory or a database URL)."""
    retrieval: str | None = None
    """bm25, dense or hybrid (default: the run preset's, else bm25)."""
    embedder: str | None = None
    """The dense leg's embedder (default: the run preset's, else the index's own)."""
    max_events: int | None = Field(default=None, ge=1)
    """Held-out events played (default: all of the split)."""
    rollouts: int | None = Field(default=None, ge=1)
    """Rollouts of each held-out step (default: the run preset's, else 1)."""
    max_new_tokens: int = Field(default=512, ge=1)
    """Reply cap of a model call that names none."""


@dataclass(frozen=True)
class Finetuned:
    """What the study did: the export, the training, the held-out run and Table 4's rows."""

    plan: FinetunePlan
    export: Exported
    training: SftTraining
    base_model: Path
    heldout: RunResult
    compared: Compared
    seconds: dict[str, float]
    """Wall seconds of each stage: export, train, heldout, compare."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "sft": str(self.export.out),
            "rows": self.training.rows,
            "losses": list(self.training.losses),
            "base_model": str(self.base_model),
            "model": str(self.training.model),
            "heldout_log": str(self.heldout.path),
            "seconds": self.seconds,
            **self.compared.as_dict(),
        }


def _heldout_plan(plan: FinetunePlan, base: Path, tuned: Path, log: Path) -> ExperimentPlan:
    options = {"reply_cap": plan.max_new_tokens}
    corpus = plan.model_dump(include={"retrieval", "embedder"}, exclude_none=True)
    if plan.corpus is not None:
        corpus["spec"] = plan.corpus
    fields: dict[str, Any] = {
        "dataset": plan.dataset,
        "split": plan.split,
        "max_events": plan.max_events,
        "out": str(log),
        "settings": ["memory_free"],  # B.2: the training use case runs memory-free
        "models": [
            {"spec": f"transformers:{base}", "label": BASE, "options": options},
            {"spec": f"transformers:{tuned}", "label": TUNED, "options": options},
        ],
        **({"corpus": corpus} if corpus else {}),
        **({"rollouts": plan.rollouts} if plan.rollouts is not None else {}),
    }
    if plan.preset is not None and preset(plan.preset).of_stage("run"):
        fields["preset"] = plan.preset
    try:
        return ExperimentPlan.model_validate(fields)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise FieldError(field_path(loc) or "dataset", msg) from None


def finetune(plan: FinetunePlan, *, progress: bool = False) -> Finetuned:
    """Run the study ``plan`` declares into its folder; ``FieldError`` naming the field. The
    run preset of ``plan.preset`` (``dojo-train``: B.2's budgets and decoding) applies to the
    held-out run; the training data pass the split guard (training split only)."""
    out = Path(plan.out)
    log = out / "heldout" / "run.jsonl"
    base = out / "base" if plan.base == "tiny" else Path(plan.base)
    if plan.base != "tiny" and not (base / "config.json").is_file():
        raise FieldError("base", f"{base}: not a Hugging Face model directory (no config.json)")
    heldout_plan = _heldout_plan(plan, base, out / "model", log)  # checked before any work
    open_dataset(plan.dataset)
    corpus = heldout_plan.corpus  # the index (or database) is there, its embedder addressed
    check_search_options(corpus.retrieval, embedder=corpus.embedder, nprobe=corpus.nprobe)
    if corpus.spec is not None:
        open_corpus(corpus.spec).close()
    if log.exists():
        raise FieldError("out", f"{out} holds a finished study ({log}): give a new folder")
    try:
        claim_dir(out, "finetune")
    except (FileExistsError, NotADirectoryError) as exc:
        raise FieldError("out", str(exc)) from None
    clock = time.perf_counter()
    seconds: dict[str, float] = {}

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[stage] = round(now - clock, 3)
        clock = now

    exported = export_runs("sft", plan.run_logs, out / "sft.jsonl", keep=plan.keep)
    lap("export")
    if plan.base == "tiny":
        tiny_base(exported.out, base, seed=plan.seed)
    training = sft_train(
        exported.out,
        base,
        out / "model",
        epochs=plan.epochs,
        max_steps=plan.max_steps,
        max_length=plan.max_length,
        batch_size=plan.batch_size,
        learning_rate=plan.learning_rate,
        seed=plan.seed,
    )
    lap("train")
    heldout = run_plan(heldout_plan, progress=progress)
    lap("heldout")
    compared = compare_runs(log, base_agent=BASE, tuned_agent=TUNED)
    lap("compare")
    return Finetuned(plan, exported, training, base, heldout, compared, seconds)
