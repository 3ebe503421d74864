"""`pastcast train sft`: the fine-tuning study (Forecast-Dojo 5.5, Table 4), end to end."""

from __future__ import annotations

import textwrap
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import typer

from pastcast.app import FinetunePlan, finetune
from pastcast.cli._common import (
    JsonFlag,
    fail_field,
    field_option,
    options_record,
    print_json,
    table_console,
    undone_on_usage_error,
)
from pastcast.errors import FieldError
from pastcast.reports import comparison_table, to_rich

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)
_field = partial(field_option, FinetunePlan)


@app.command("sft")
def sft(
    ctx: typer.Context,
    run_logs: Annotated[
        list[Path], typer.Argument(help="Run logs whose training-split trajectories are learnt.")
    ],
    out: Annotated[Path, _field("out", "--out")],
    dataset: Annotated[str, _field("dataset", "--dataset")],
    base: Annotated[str, _field("base", "--base")] = "tiny",
    keep: Annotated[Literal["best", "all"], _field("keep")] = "best",
    epochs: Annotated[float, _field("epochs", min=0.0)] = 1.0,
    max_steps: Annotated[int | None, _field("max_steps", min=1)] = None,
    max_length: Annotated[int, _field("max_length", min=16)] = 2048,
    batch_size: Annotated[int, _field("batch_size", min=1)] = 4,
    learning_rate: Annotated[float, _field("learning_rate")] = 1e-5,
    seed: Annotated[int, _field("seed")] = 0,
    split: Annotated[str, _field("split")] = "eval",
    corpus: Annotated[str | None, _field("corpus", "--corpus")] = None,
    retrieval: Annotated[str | None, _field("retrieval")] = None,
    embedder: Annotated[str | None, _field("embedder")] = None,
    max_events: Annotated[int | None, _field("max_events", min=1)] = None,
    rollouts: Annotated[int | None, _field("rollouts", min=1)] = None,
    max_new_tokens: Annotated[int, _field("max_new_tokens", min=1)] = 512,
    preset: Annotated[str | None, _field("preset")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Export the training split of RUN_LOGS, fine-tune the base model on it with TRL (CPU),
    run the base and the tuned model on the held-out split of --dataset, and print Table 4:
    Brier, accuracy, log loss, tool calls and parser acceptance, with the paired differences."""
    plan = options_record(ctx, FinetunePlan, {"as_json": None})
    with undone_on_usage_error(out):  # a refused study leaves no folder behind
        try:
            made = finetune(plan, progress=not as_json)
        except FieldError as exc:
            fail_field(exc, {"run_logs": "RUN_LOGS"})
    if as_json:
        print_json(made.as_dict())
        return
    losses = made.training.losses
    typer.echo(
        f"trained {made.training.model} on {made.training.rows} conversations: "
        f"{len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}"
        if losses
        else f"trained {made.training.model}: no logged step"
    )
    typer.echo("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in made.seconds.items()))
    table = comparison_table(made.compared.comparison, made.compared.title())
    console = table_console()
    console.print(to_rich(table, console.width))
    typer.echo(textwrap.fill(table.note, console.width))
