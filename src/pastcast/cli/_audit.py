"""`pastcast audit ...`: leakage audits of how a benchmark was built and of what agents saw in a
run (both exit 1 when they find something, one line per finding), and the measured rate at
which a run's served documents reveal the future (``retrievals``: a measurement, exit 0); 2 on
a usage error. `pastcast models probe-cutoff` measures what a model remembers: its knowledge
cutoff."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from pastcast.app import (
    DATASET_SPEC_HELP,
    DEFAULT_CALIBRATION,
    ConstructionAuditPlan,
    RunAuditPlan,
    audit_dataset_texts,
    audit_datasets,
    audit_run_log,
    audit_run_retrievals,
    probe_model_cutoff,
)
from pastcast.cli._common import (
    EXIT_FAILED,
    ConfigOpt,
    JsonFlag,
    call_with_params,
    fail_app,
    fail_field,
    field_errors,
    field_option,
    options_record,
    print_json,
)
from pastcast.cli._score import print_notes
from pastcast.errors import FieldError

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


def seed_option(help: str) -> Any:
    """``--seed``, any seed numpy's generators take, as ``Annotated[int, seed_option(...)]``."""
    return typer.Option("--seed", min=0, max=2**63 - 1, help=help)


def draws_option(help: str) -> Any:
    """``--draws`` of a bootstrap or permutation test: bounded, since each draw costs a pass
    over the data and an absurd count would never finish."""
    return typer.Option("--draws", min=100, max=100_000, help=help)


RunLogArg = Annotated[Path, typer.Argument(help="The run log's step file (run.jsonl).")]


def _print_findings(findings: Sequence[str], total: int | None = None) -> None:
    """An audit's findings, one line each, and their count (``total``: all it found, of which
    ``findings`` are those listed)."""
    for line in findings:
        typer.echo(f"finding: {line}")
    n = len(findings) if total is None else total
    listed = f" ({len(findings)} listed)" if n > len(findings) else ""
    typer.echo(f"{n} finding(s){listed}" if n else "no findings")


def _cell(value: float | None, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


_field = partial(field_option, ConstructionAuditPlan)


@app.command("construction")
def construction(
    ctx: typer.Context,
    datasets: Annotated[
        list[str] | None,
        typer.Argument(
            help=f"Dataset: {DATASET_SPEC_HELP}. Several are pooled (each "
            "event kept apart), e.g. world:0 world:1 ... for more events.",
            metavar="DATASET...",
        ),
    ] = None,
    schedule: Annotated[list[str] | None, _field("schedules", "--schedule")] = None,
    dataset_only: Annotated[bool, _field("dataset_only", "--dataset-only")] = False,
    folds: Annotated[int, _field("folds", min=2, max=100)] = 5,
    draws: Annotated[int, _field("draws", "--draws", min=100, max=100_000)] = 2000,
    seed: Annotated[int, _field("seed", "--seed", min=0, max=2**63 - 1)] = 0,
    permutations: Annotated[int, _field("permutations", min=1, max=100_000)] = 500,
    alpha: Annotated[float, _field("alpha", min=0.0001, max=0.5)] = 0.05,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Can what agents see of the construction (cutoff, step index, spacing, open and close
    times) predict the outcome? Out-of-fold AUC against its permutation null, per schedule;
    exit 1 when the datasets as built leak, close after their data or lack text snapshots."""
    plan = options_record(ctx, ConstructionAuditPlan, {"schedule": "schedules", "as_json": None})
    try:
        audit = audit_datasets(plan)
    except FieldError as exc:
        if exc.field == "schedules":
            fail_field(exc, {"schedules": "--schedule"})
        fail_app(exc, {"datasets": "DATASET"})
    findings = audit.findings()
    if as_json:
        print_json(
            {
                **audit.model_dump(mode="json"),
                "findings": findings,
                "plan": plan.model_dump(mode="json"),
            }
        )
    else:
        built = audit.results[0]
        left = ", ".join(f"{k} {n}" for k, n in sorted(audit.skipped.items())) or "none"
        typer.echo(
            f"{len(plan.datasets)} dataset(s): {built.events} binary events with steps (left out: "
            f"{left}); {audit.folds}-fold AUC against {audit.permutations} permutations "
            f"(level {audit.alpha:g}), {audit.level:.0%} interval of {audit.draws} draws"
        )
        typer.echo(
            f"  {'schedule':<18} {'events':>6} {'yes':>5} {'steps':>6} {'AUC':>6}  "
            f"{'interval':<16} {'null':>6} {'p':>6} {'moves':>5}"
        )
        for r in audit.results:
            interval = "-" if r.ci_low is None else f"[{_cell(r.ci_low)}, {_cell(r.ci_high)}]"
            verdict = "LEAKS" if r.leaks else r.verdict
            typer.echo(
                f"  {r.schedule:<18} {r.events:>6} {r.yes_events:>5} {r.steps:>6} "
                f"{_cell(r.auc):>6}  {interval:<16} {_cell(r.null_median):>6} "
                f"{_cell(r.p_value, '.4f'):>6} {_cell(r.move_ratio, '.2f'):>5}  {verdict}"
            )
        _print_findings(findings)
    if findings:
        raise typer.Exit(EXIT_FAILED)


@app.command("dataset")
def dataset(
    spec: Annotated[str, typer.Argument(help=f"Dataset: {DATASET_SPEC_HELP}.", metavar="DATASET")],
    as_json: JsonFlag = False,
) -> None:
    """What the question texts tell: dated edits left out of each step, steps shown a text taken
    after their cutoff with an undated edit, and steps whose question, background or options
    name the resolved answer of another event still open at their cutoff (the rate and the
    pairs). Exit 1 when a step is shown an undated later edit or names a sibling's answer."""
    with field_errors({"dataset": "DATASET"}, fail_app):
        audit = audit_dataset_texts(spec)
    findings = audit.findings()
    if as_json:
        print_json(
            {**audit.model_dump(mode="json"), "sibling_rate": audit.sibling_rate,
             "findings": findings}
        )  # fmt: skip
    else:
        typer.echo(
            f"{audit.dataset_id}: {audit.steps} steps; {audit.events_with_dated_edits} events "
            f"with dated notes in their text; {audit.later_text_steps} steps shown a text taken "
            f"after their cutoff, {audit.shortened_steps} of them shortened before its first "
            f"note not dated before the cutoff; {len(audit.dropped_steps)} steps "
            f"whose question cannot be shown as of their cutoff; sibling answers: "
            f"{audit.sibling_steps} steps ({_cell(audit.sibling_rate, '.2%')}), "
            f"{len(audit.sibling_answers)} pairs"
        )
        _print_findings(findings)
    if findings:
        raise typer.Exit(EXIT_FAILED)


@app.command("run")
def run(
    ctx: typer.Context,
    run_log: Annotated[
        Path | None, typer.Argument(help="The run log's step file (run.jsonl).")
    ] = None,
    dataset: Annotated[str | None, field_option(RunAuditPlan, "dataset", "--dataset")] = None,
    corpus: Annotated[str | None, field_option(RunAuditPlan, "corpus", "--corpus")] = None,
    examples: Annotated[
        int | None, field_option(RunAuditPlan, "examples", min=0, max=1_000_000)
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Check that every document an agent saw was dated before its step's cutoff, that no prompt
    held the resolved label or post-cutoff prices, and that no output quotes post-cutoff text
    (exit 1 on any finding). Every finding is counted by check; the first --examples of each
    are listed."""
    plan = options_record(ctx, RunAuditPlan, {"as_json": None})
    with field_errors({"run_logs": ""}, fail_app):
        audited = audit_run_log(plan)
    print_notes(audited.read)
    audit = audited.audit
    if as_json:
        head = audit.model_dump(mode="json", exclude={"findings", "finding_counts"})
        listed = (f.model_dump(mode="json") for f in audit.findings)  # written one at a time
        counts = audit.counts()
        print_json(
            {
                **head,
                "findings": listed,
                "ok": audit.ok,
                "counts": counts,
                "plan": plan.model_dump(mode="json"),
            }
        )
    else:
        typer.echo(
            f"{plan.run_log}: {audit.steps} steps, {audit.documents_seen} documents seen, "
            f"{audit.texts_checked} texts given and {audit.outputs_checked} outputs checked "
            f"({', '.join(audit.checks)})"
        )
        _print_findings([f.line() for f in audit.findings], audit.total)
        if audit.total > len(audit.findings):
            by_check = ", ".join(f"{c} {n}" for c, n in audit.counts().items())
            typer.echo(f"by check: {by_check}; the first {audit.examples} of each listed")
    if not audit.ok:
        raise typer.Exit(EXIT_FAILED)


_DECIDED = {
    "verdict": "the judge's verdict",
    "grounded": "the code from the judge's quotes",
}


@app.command("retrievals")
def retrievals(
    ctx: typer.Context,
    run_log: RunLogArg,
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            help="The judge model (a model spec: openai:gpt-4o-mini, local:smollm2, "
            "scripted:FILE).",
        ),
    ],
    sample: Annotated[
        int,
        typer.Option(
            "--sample",
            min=1,
            max=100_000,
            help="Served documents to judge, stratified by source and closeness to the cutoff.",
        ),
    ] = 200,
    seed: Annotated[int, seed_option("Seed of the sample and the interval.")] = 0,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help=f"The dataset the run used ({DATASET_SPEC_HELP}): each step's question. "
            "Default: the embedded world the log names.",
        ),
    ] = None,
    corpus: Annotated[str | None, field_option(RunAuditPlan, "corpus", "--corpus")] = None,
    calibration: Annotated[
        str,
        typer.Option(
            "--calibration",
            help="The embedded world whose planted hindsight rewrites and evidence articles "
            "measure the judge's sensitivity and specificity.",
        ),
    ] = DEFAULT_CALIBRATION,
    positives: Annotated[
        int, typer.Option(min=1, max=10_000, help="Planted (leaking) documents to measure on.")
    ] = 20,
    negatives: Annotated[
        int, typer.Option(min=1, max=10_000, help="Clean documents to measure on.")
    ] = 20,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="The judgement cache (default: RUN.retrieval-judge-cache beside the log).",
        ),
    ] = None,
    draws: Annotated[int, draws_option("Bootstrap draws for the intervals.")] = 4000,
    max_tokens: Annotated[
        int,
        typer.Option(
            "--max-tokens",
            min=8,
            max=8192,
            help="Reply cap of each judgement (a v1/v2 reply cut short after its verdict still "
            "counts).",
        ),
    ] = 160,
    prompt: Annotated[
        str | None,
        typer.Option(
            "--prompt",
            help="The judge's prompt: audit_retrieval.v3 (the model quotes the outcome and the "
            "latest date the document states, the code decides) or audit_retrieval.v2 (the "
            "model's own verdict). Default: pastcast.audit.RETRIEVAL_PROMPT.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Measure how often the documents a run served reveal the future: a judge model reads a
    stratified sample (never the outcome), its own errors are measured on planted documents and
    the rate is corrected for them (Rogan-Gladen). Written beside the log as
    RUN.retrieval-audit.json."""
    with field_errors({"run_logs": "RUN_LOG"}):  # other fields: their option's name
        done = call_with_params(ctx, audit_run_retrievals, progress=not as_json)
    print_notes(done.read)
    audit = done.audit
    if as_json:
        print_json(done.as_dict())
        return
    acc = audit.judge_accuracy
    typer.echo(
        f"{run_log}: {audit.served} documents served, {audit.judged} judged by {audit.judge} "
        f"({audit.errors} without a verdict, {audit.cached} of {audit.calls} calls cached); "
        f"prompt {audit.prompt}, decided by {_DECIDED[audit.decision]}"
    )
    se_lo, se_hi = acc.sensitivity_exact
    sp_lo, sp_hi = acc.specificity_exact
    typer.echo(
        f"judge on {acc.calibration}: sensitivity {_cell(acc.sensitivity, '.1%')} "
        f"[{se_lo:.1%}, {se_hi:.1%}] ({acc.true_positives}/{acc.positives}), specificity "
        f"{_cell(acc.specificity, '.1%')} [{sp_lo:.1%}, {sp_hi:.1%}] "
        f"({acc.true_negatives}/{acc.negatives}); exact {audit.level:.0%} intervals"
    )
    if not acc.informative:
        typer.echo("the judge is no better than chance (Se + Sp <= 1): no corrected rate")
    typer.echo(
        f"  {'source':<24} {'served':>7} {'judged':>6} {'flagged':>7} {'apparent':>9}  "
        f"{'corrected':>9}  interval"
    )
    rows = [(s.source, s.rate) for s in audit.by_source] + [("overall", audit.overall)]
    for name, r in rows:
        interval = f"[{r.corrected_low:.1%}, {r.corrected_high:.1%}]"
        typer.echo(
            f"  {name[:24]:<24} {r.served:>7} {r.judged:>6} {r.flagged:>7} "
            f"{_cell(r.apparent, '.1%'):>9}  {_cell(r.corrected, '.1%'):>9}  {interval}"
        )
    for f in audit.flagged:
        typer.echo(
            f"flagged: {f.doc_id} ({f.source}, {f.date:%Y-%m-%d}, cutoff {f.cutoff:%Y-%m-%d}, "
            f"{f.bucket}) {f.excerpt[:100]!r}: {f.reason[:160]}"
        )
    typer.echo(f"written: {done.written}")


models_app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@models_app.command("probe-cutoff")
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
