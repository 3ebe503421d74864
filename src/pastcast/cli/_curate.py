"""`pastcast data curate`: a new dataset of the events a judge finds fair and answerable from the
archive, with the funnel of what each stage removed and why."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import typer

from pastcast.app import (
    Curated,
    CurationPlan,
    curate_dataset,
)
from pastcast.cli._common import (
    EXIT_FAILED,
    ConfigOpt,
    JsonFlag,
    fail,
    field_errors,
    field_help,
    field_option,
    options_record,
    print_json,
)
from pastcast.curate import CurationConfig

# The curation's settings are the plan's ``config``; --json is no field.
_FIELDS: dict[str, str | None] = {
    **{name: f"config.{name}" for name in CurationConfig.model_fields},
    "as_json": None,
}


_field = partial(field_option, CurationPlan)


def curate(
    ctx: typer.Context,
    dataset: Annotated[str | None, typer.Argument(help=field_help(CurationPlan, "dataset"))] = None,
    corpus: Annotated[str | None, _field("corpus", "--corpus")] = None,
    judge: Annotated[str | None, _field("judge", "--judge")] = None,
    out: Annotated[Path | None, _field("out", "--out")] = None,
    retrieval: Annotated[str, _field("retrieval", "--retrieval")] = "bm25,dense",
    embedder: Annotated[str | None, _field("embedder")] = None,
    window_days: Annotated[int, _field("window_days", min=0, max=36500)] = 0,
    keep_coverage: Annotated[
        Literal["strong", "weak", "none"],
        typer.Option(help="The weakest coverage label kept by the coverage probe."),
    ] = "strong",
    coverage: Annotated[
        bool, typer.Option(help="Run the coverage probe (--no-coverage skips it).")
    ] = True,
    coverage_queries: Annotated[
        int, typer.Option(min=1, max=20, help="Coverage probe: queries (and blocks) per outcome.")
    ] = 5,
    coverage_final: Annotated[
        Literal["arithmetic", "judge"],
        typer.Option(
            help="Coverage probe's score and label: the arithmetic rule over the sides' labels, "
            "or a final judge step reading both tallies (Hindcast 4.1)."
        ),
    ] = "arithmetic",
    coverage_at: Annotated[
        Literal["judging_date", "close"],
        typer.Option(
            help="When the coverage probe queries the archive: at the judging date, or at the "
            "market's close (Hindcast; never after the last forecast date)."
        ),
    ] = "judging_date",
    balance: Annotated[
        bool, typer.Option(help="Balance YES/NO outcomes, then topics (--no-balance skips it).")
    ] = True,
    topics: Annotated[
        Literal["source", "judge", "auto"],
        typer.Option(
            help="Topics for balancing: the source's category or tag, the judge's classifier, "
            "or the source where it has one (auto)."
        ),
    ] = "auto",
    seed: Annotated[int, typer.Option(help="Seed of the balancing draw.")] = 0,
    min_dates: Annotated[
        int, typer.Option(min=0, max=10_000, help="Forecast dates an evaluation event must keep.")
    ] = 3,
    max_tokens: Annotated[int, _field("max_tokens", min=16, max=100_000)] = 512,
    cache: Annotated[Path | None, _field("cache", "--cache")] = None,
    preset: Annotated[str | None, _field("preset")] = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Curate a dataset: forecast dates, query decomposition, the evidence and leakage judge,
    the coverage probe and balancing; writes a new dataset with the funnel."""
    plan = options_record(ctx, CurationPlan, _FIELDS)
    with field_errors({"dataset": "DATASET"}):
        curated = curate_dataset(plan)
    result, cache_dir = curated.result, curated.cache
    _report(curated, Path(plan.out), as_json)
    if not result.dataset.events:
        last = next((f for f in reversed(result.funnel) if f.removed), result.funnel[0])
        fail(
            f"no events are left to write (the last removed at stage {last.stage!r}: "
            f"{last.note or 'none'}); nothing written; the judgements are cached in {cache_dir}",
            EXIT_FAILED,
        )


def _report(curated: Curated, out: Path, as_json: bool) -> None:
    """The funnel and the judgement counts (on stdout, written or not)."""
    result, cache_dir = curated.result, curated.cache
    ds = result.dataset
    served = curated.cached
    written = bool(ds.events)
    if as_json:
        print_json(
            {
                "dataset_id": ds.id,
                "out": str(out) if written else None,
                "events": len(ds.events),
                "steps": len(ds.steps),
                "funnel": [asdict(stage) for stage in result.funnel],
                "judgements": len(result.judgements),
                "cached": served,
            }
        )
        return
    if written:
        typer.echo(f"wrote {ds.id} to {out}: {len(ds.events)} events, {len(ds.steps)} steps")
    for stage in result.funnel:
        line = f"  {stage.stage:<28} -{stage.removed:<5} {stage.remaining:>5}  {stage.note}"
        typer.echo(line.rstrip())
    where = f"; recorded in {out / 'curation'}" if written else ""
    typer.echo(
        f"judgements: {len(result.judgements)} ({served} from the cache {cache_dir}, "
        f"{len(result.judgements) - served} new){where}"
    )
