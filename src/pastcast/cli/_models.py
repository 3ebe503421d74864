"""`pastcast models ...`: what is known about models, measured where it can be."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import probe_model_cutoff
from pastcast.cli._common import (
    JsonFlag,
    call_with_params,
    draws_option,
    field_errors,
    print_json,
    seed_option,
)

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@app.command("probe-cutoff")
def probe_cutoff(
    ctx: typer.Context,
    model: Annotated[
        str, typer.Argument(help="The model spec (local:smollm2, openai:gpt-4o-mini, ...).")
    ],
    corpus: Annotated[str, typer.Option("--corpus", help="The dated corpus: an index directory.")],
    per_month: Annotated[
        int, typer.Option("--per-month", min=1, max=10_000, help="Questions per month.")
    ] = 20,
    since: Annotated[str | None, typer.Option("--since", help="First month (YYYY-MM).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Last month (YYYY-MM).")] = None,
    seed: Annotated[int, seed_option("Seed of the questions and intervals.")] = 0,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Where the questions and answers are kept (default: cutoff-probe in pastcast's "
            "cache folder).",
        ),
    ] = None,
    draws: Annotated[int, draws_option("Bootstrap and permutation draws.")] = 1000,
    register: Annotated[
        bool,
        typer.Option(
            "--register/--no-register",
            help="Keep the measured cutoff in the knowledge-cutoff registry ('plan' warns "
            "with it, 'score --after-knowledge-cutoff' uses it).",
        ),
    ] = True,
    registry: Annotated[
        Path | None,
        typer.Option(
            "--registry",
            help="The measured-cutoffs file (default: $PASTCAST_KNOWLEDGE_CUTOFFS, else "
            "knowledge-cutoffs.json in pastcast's cache folder).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Measure where a model's recall of dated news falls to chance: multiple-choice questions
    per month of the corpus (one real item against altered copies), accuracy by month, and the
    change point with its interval; kept in the knowledge-cutoff registry with its provenance."""
    with field_errors({"model": "MODEL"}):  # other fields: their option's name
        done = call_with_params(ctx, probe_model_cutoff, progress=not as_json)
    probe = done.probe
    if as_json:
        print_json(done.as_dict())
        return
    typer.echo(
        f"{probe.model}: {probe.questions} questions from {probe.corpus} ({probe.unusable} "
        f"without a usable answer, {probe.cached} of {probe.calls} answers cached); chance "
        f"{probe.estimate.chance:.0%}"
    )
    typer.echo(f"  {'month':<8} {'n':>4} {'correct':>7} {'accuracy':>8}  Wilson {probe.level:.0%}")
    for m in probe.months:
        typer.echo(
            f"  {m.month:<8} {m.questions:>4} {m.correct:>7} {m.accuracy:>8.0%}  "
            f"[{m.low:.0%}, {m.high:.0%}]"
        )
    est = probe.estimate
    if probe.knowledge_cutoff is None:
        split = f" (best split {est.best_split}, p = {est.p_value:.3f})" if est.best_split else ""
        typer.echo(f"no recall above chance detected: no cutoff estimated{split}")
    else:
        typer.echo(
            f"knowledge cutoff: {probe.knowledge_cutoff} ({probe.level:.0%} interval "
            f"{probe.low} .. {probe.high}); accuracy {est.before:.0%} through {est.month}, "
            f"{est.after:.0%} after; permutation p = {est.p_value:.3f}"
        )
    if done.registry is not None:
        typer.echo(f"registered in {done.registry}")
