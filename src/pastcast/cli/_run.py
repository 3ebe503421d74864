"""`pastcast run` and `pastcast demo`: run agents over forecast steps and write a run log;
`pastcast plan`: what a plan will run and cost, before running it; `pastcast toolserver serve`:
one forecast step's episode served to an agent of any framework (``pastcast.app.serve_episode``)
over stdio (an MCP client starts this command) or HTTP on the loopback.

The options build the experiment plan a ``--config`` file would declare; both run through
``pastcast.app.run_plan``, which checks all it can before any work, so a usage error exits 2
before a progress bar starts or a run log is written."""

from __future__ import annotations

import signal
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from pastcast.app import (
    AGENT_GRAMMAR,
    DATASET_SPEC_HELP,
    Terminated,
    plan_estimate,
    plan_from_agents,
    read_plan,
    run_demo,
    run_plan,
    serve_episode,
)
from pastcast.cli._common import (
    EXIT_FAILED,
    ConfigOpt,
    CoverageDaysOpt,
    DayConventionOpt,
    JsonFlag,
    Retrieval,
    call_with_params,
    fail,
    fail_app,
    field_option,
    given_options,
    note,
    option_of,
    print_json,
    table_console,
)
from pastcast.cutoff import DayConvention
from pastcast.env import EnvConfig
from pastcast.errors import FieldError
from pastcast.records import Setting
from pastcast.runner import (
    MAX_ROLLOUTS,
    MAX_WORKERS,
    ExperimentPlan,
    PlanEstimate,
    RunConfig,
    RunResult,
    deep_merge,
)
from pastcast.scoring import Fallback

if TYPE_CHECKING:
    from rich.table import Table

# Plan fields (of RunConfig, EnvConfig and the plan) whose `run` option is not --field-name.
OPTION_NAMES = {
    "agents": "--agent",
    "python_timeout_s": "--python-timeout",
    "episodes": "--workers",
    "spec": "--corpus",
}

_ENV = EnvConfig()
_RUN = RunConfig.model_fields
# Where each option of `run` is in the experiment plan (None: not in it; others: same name).
_PLAN_FIELDS: dict[str, str | None] = {
    **dict.fromkeys(("setting", "config", "resume", "retry_failed", "as_json")),
    "agent": "agents",
    "corpus": "corpus.spec",
    "retrieval": "corpus.retrieval",
    "embedder": "corpus.embedder",
    "nprobe": "corpus.nprobe",
    "workers": "concurrency.episodes",
    **{name: f"budgets.{name}" for name in EnvConfig.model_fields},
}

MaxToolCallsOpt = Annotated[
    int, typer.Option("--max-tool-calls", help="Tool calls per forecast step.")
]
MaxModelCallsOpt = Annotated[
    int, typer.Option("--max-model-calls", help="Model calls per forecast step.")
]
PythonToolOpt = Annotated[
    bool,
    typer.Option(
        "--python-tool/--no-python-tool",
        help="Offer the python tool (needs an isolating sandbox: bubblewrap).",
    ),
]
ResumeOpt = Annotated[
    bool,
    typer.Option("--resume", help="Continue the run log at --out; refused if there is none."),
]
MaxStepsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-steps",
        min=1,
        help="Run at most N steps now, then stop with the run log resumable: the same command "
        "again runs N more (or, without it, the rest).",
    ),
]
RetryFailedOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Run again the recorded steps a provider failed (down, rate limited past every "
        "retry, model missing).",
    ),
]


def _fail_run(exc: FieldError) -> NoReturn:
    """``exc`` as `run` says it: one ``error:`` line naming the option that sets its field
    (``budgets.max_tool_calls`` is ``--max-tool-calls``)."""
    last = exc.field.split(".")[-1].split("[")[0]
    option = OPTION_NAMES.get(last) or option_of(last)
    fail(f"{option} {exc.reason}")


def _is_given(field: str, given: dict[str, Any]) -> bool:
    """Whether the plan's ``field`` (``budgets.max_tool_calls``, ``agents[0].model``) holds a
    value an option gave."""
    node: Any = given
    for part in field.split("."):
        if not isinstance(node, dict):
            return True
        if (key := part.split("[")[0]) not in node:
            return False
        node = node[key]
    return True


def _summary(result: RunResult) -> dict[str, Any]:
    return {
        "run_log": str(result.path),
        "run_id": result.run_id,
        "written": result.written,
        "resumed": result.skipped,
        "unusable": result.failures,
        "retried": result.retried,
        "waiting": result.waiting,
        "left": result.left,
        "accounting": result.accounting.model_dump(mode="json"),
    }


def _report(result: RunResult, as_json: bool) -> None:
    """The run's summary on stdout (a line, or JSON); exit 1 if every new forecast is
    unusable."""
    if as_json:
        print_json(_summary(result))
    else:
        typer.echo(
            f"{result.path}: {result.written} steps written, {result.skipped} resumed, "
            f"{result.failures} unusable forecasts (run {result.run_id})"
        )
        acc = result.accounting
        if acc.by_model:
            typer.echo(
                f"model calls: {sum(a.model_calls for a in acc.by_model.values())}, tokens: "
                f"{acc.input_tokens:,} in, {acc.output_tokens:,} out, cost ${acc.cost_usd:,.4f}, "
                f"provider retries: {acc.retries}"
            )
    for provider, times in sorted(result.accounting.pauses.items()):
        note(f"provider {provider} was paused {times} time(s) by its circuit breaker", as_json)
    if result.capped:
        note(
            f"stopped at --max-steps after {result.written} steps: {result.left} steps left; "
            "run the same command again to go on",
            as_json,
        )
    if result.waiting:
        note(
            f"{result.waiting} steps of memory-on chains wait for a provider that failed earlier "
            "in their chain: run again with --retry-failed",
            as_json,
        )
    _exit_if_all_unusable(result)


def _exit_if_all_unusable(result: RunResult) -> None:
    """A run whose every new forecast is unusable failed (a model server down, a broken
    agent); some unusable forecasts are results, scored with the fallback."""
    if result.written and result.failures == result.written:
        fail(
            f"{result.path}: every one of the {result.written} new forecasts is unusable "
            "(see failure_reason in the run log)",
            EXIT_FAILED,
        )


def run(
    ctx: typer.Context,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            "-a",
            metavar="SPEC",
            help=f"Agent (repeatable): {AGENT_GRAMMAR}",
        ),
    ] = None,
    dataset: Annotated[str, field_option(ExperimentPlan, "dataset", "--dataset")] = "world",
    out: Annotated[
        Path, typer.Option("--out", help="Run log to write (resumed if present).")
    ] = Path("runs/run.jsonl"),
    corpus: Annotated[
        str | None,
        typer.Option(
            "--corpus",
            help="Corpus: an index directory or a PostgreSQL URL (postgresql://USER@HOST:PORT/DB"
            "[?schema=NAME]). The embedded world builds its own; given, it must hold the world's "
            "documents ('pastcast corpus build world:SEED').",
        ),
    ] = None,
    retrieval: Retrieval = "bm25",
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="dense/hybrid: the embedder by registered name (default all-minilm-l6-v2).",
        ),
    ] = None,
    nprobe: Annotated[
        int | None,
        typer.Option(
            "--nprobe",
            min=1,
            help="dense/hybrid over an index directory: search approximately (faiss IVF trained "
            "only on documents before the cutoff, this many lists probed; recorded in the run "
            "header). Default: exact.",
        ),
    ] = None,
    setting: Annotated[
        Setting, typer.Option("--setting", help="Setting of agents given without @SETTING.")
    ] = "memory_free",
    # Bounded: every (agent, event, rollout) chain is planned up front.
    rollouts: Annotated[
        int, typer.Option("--rollouts", max=MAX_ROLLOUTS, help="Rollouts per forecast step.")
    ] = _RUN["rollouts"].default,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            max=MAX_WORKERS,
            help="Episodes in flight at once (memory-on chains keep their order).",
        ),
    ] = _RUN["workers"].default,
    split: Annotated[
        str | None, typer.Option("--split", help="Only events of this split (e.g. eval).")
    ] = None,
    max_events: Annotated[
        int | None, typer.Option("--max-events", help="Only the first N events.")
    ] = None,
    fallback: Annotated[
        Fallback,
        typer.Option("--fallback", help="Score recorded for an unusable forecast in the log."),
    ] = _RUN["fallback"].default,
    max_tool_calls: MaxToolCallsOpt = _ENV.max_tool_calls,
    max_tool_iterations: Annotated[
        int,
        typer.Option("--max-tool-iterations", help="Model turns with tool calls per step."),
    ] = _ENV.max_tool_iterations,
    max_model_calls: MaxModelCallsOpt = _ENV.max_model_calls,
    max_search_k: Annotated[
        int, typer.Option("--max-search-k", help="Most hits one search may return.")
    ] = _ENV.max_search_k,
    snippet_chars: Annotated[
        int, typer.Option("--snippet-chars", help="Characters of text shown per search hit.")
    ] = _ENV.snippet_chars,
    read_max_chars: Annotated[
        int, typer.Option("--read-max-chars", help="Characters of a document one read returns.")
    ] = _ENV.read_max_chars,
    python_tool: PythonToolOpt = _ENV.python_tool,
    unsafe_python: Annotated[
        bool,
        typer.Option(
            "--unsafe-python/--no-unsafe-python",
            help="Allow the python tool without isolation (trusted agents only).",
        ),
    ] = _ENV.unsafe_python,
    python_timeout_s: Annotated[
        float, typer.Option("--python-timeout", help="Seconds one python tool call may run.")
    ] = _ENV.python_timeout_s,
    day_convention: DayConventionOpt = DayConvention.START_OF_DAY,
    covered_only: Annotated[
        bool, field_option(ExperimentPlan, "covered_only", "--covered-only")
    ] = False,
    coverage_days: CoverageDaysOpt = 7,
    preset: Annotated[str | None, field_option(ExperimentPlan, "preset", "--preset")] = None,
    config: ConfigOpt = None,
    resume: ResumeOpt = False,
    retry_failed: RetryFailedOpt = False,
    max_steps: MaxStepsOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Run agents over a dataset's forecast steps and write a resumable run log.

    Market prices go only to agents registered with market access (market, tool-agent-market).
    With --config FILE an experiment plan declares the run, the options given set over it.
    Progress goes to stderr: a bar on a terminal, else a line per completed step with the rate
    and ETA (at most one every $PASTCAST_PROGRESS_INTERVAL seconds, default 5). --max-steps N
    stops after N steps; Ctrl-C or SIGTERM stops the run and every model server it started.
    Either way the log keeps every finished step and the same command resumes.
    Exit codes: 0 done, 2 a usage error (nothing is run), 1 a failed run: an error during the
    run, or every new forecast unusable; 130 or 143 stopped by SIGINT or SIGTERM.
    """
    if config is None and not agent:
        fail("--agent: give at least one agent (or --config FILE)")
    if config is not None and not agent and "setting" in given_options(ctx):
        fail("--setting: sets the setting of --agent's agents; give --agent")
    # The plan's fields of the options given are set over the plan's file, else over what a run
    # without one takes: the log at --out, --workers' default (1), not a plan's; the other
    # fields are the plan's defaults, which a preset fills.
    given = given_options(ctx, _PLAN_FIELDS)
    if "out" in given:
        given["out"] = str(out)
    base = {"out": str(out), "concurrency": {"episodes": workers}}
    if config is not None:
        try:
            base = read_plan(config).model_dump(exclude_unset=True)
        except FieldError as exc:
            fail(exc.reason)
    try:
        plan = plan_from_agents(agent or (), setting=setting, **deep_merge(base, given))
    except FieldError as exc:
        _fail_run(exc)
    notes = partial(typer.echo, err=True)
    try:
        result = run_plan(plan, resume=resume, retry_failed=retry_failed, notes=notes)
    except FieldError as exc:  # named by the option that set its field, else by the plan's file
        if not exc.field:  # a lower layer's, raised once the run is under way
            fail(str(exc), EXIT_FAILED)
        if config is not None and exc.field != "resume" and not _is_given(exc.field, given):
            fail(f"{config}: {exc}")
        _fail_run(exc)
    except (ValueError, RuntimeError) as exc:  # bad data, a sandbox failing mid-run
        fail(str(exc), EXIT_FAILED)
    except KeyboardInterrupt as exc:  # the run and its model servers are stopped by now
        signum = signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT
        fail(
            f"stopped by {signum.name}: the run log keeps every finished step; run the same "
            "command again to resume",
            128 + signum,
        )
    _report(result, as_json)


def demo(
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("runs/demo"),
    seed: Annotated[int, typer.Option("--seed", help="Seed of the embedded world.")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Build the embedded world and its index, run the baselines and the heuristic research
    agent, print the leaderboard and write a run log and a report."""
    from pastcast.reports import leaderboard, to_rich

    try:
        made = run_demo(out, seed=seed, notes=partial(typer.echo, err=True))
    except FieldError as exc:
        _fail_run(exc)
    except FileExistsError as exc:  # a report folder pastcast did not make: nothing written
        fail(f"--out {exc}")
    except (ValueError, RuntimeError) as exc:  # bad data, a sandbox failing mid-run
        fail(str(exc), EXIT_FAILED)
    result = made.run
    note(f"run log: {result.path} ({result.written} new steps, {result.skipped} resumed)", as_json)
    console = table_console(stderr=as_json)  # with --json the leaderboard table is a note
    card = made.card
    title = (
        f"{card.n_forecasts} forecasts; {card.fallback} fallback for unusable outputs; "
        f"95% event-clustered bootstrap CIs ({card.bootstrap} draws)"
    )
    shown = leaderboard([g.summary for g in card.groups], card.by, title, card.titles)
    console.print(to_rich(shown, console.width))
    report = None if made.report is None else made.report.html
    if report is not None:
        note(f"report: {report}", as_json)
    if as_json:
        board = [g.summary.as_dict() for g in card.ranked()]
        print_json({**_summary(result), "report": report and str(report), "leaderboard": board})
    _exit_if_all_unusable(result)


def _money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.2f}"


def _table(est: PlanEstimate) -> Table:
    from rich.table import Table

    table = Table(title=f"{est.episodes:,} episodes of {est.agents} agents on {est.dataset_id}")
    for col in ("agent", "setting", "model", "episodes", "calls", "calls max", "tokens in",
                "tokens out", "cost", "cost max"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("agent", "setting", "model") else "right")
    for r in est.rows:
        table.add_row(
            r.agent,
            r.setting,
            r.model or "-",
            f"{r.episodes:,}",
            f"{r.model_calls:,}",
            f"{r.model_calls_max:,}",
            f"{r.input_tokens:,}",
            f"{r.output_tokens:,}",
            _money(r.cost_usd),
            _money(r.cost_max_usd),
        )
    return table


def plan(
    file: Annotated[Path, typer.Argument(help="Experiment plan (TOML, or YAML for .yaml/.yml).")],
    as_json: JsonFlag = False,
) -> None:
    """Show what a plan runs before running it: the work, the model calls, an estimated token
    count and cost from the price table, and events a model may remember (resolved before its
    knowledge cutoff). Run it with `pastcast run --config FILE`."""
    try:
        checked = read_plan(file)
    except FieldError as exc:
        fail(exc.reason)
    try:
        est = plan_estimate(checked)
    except FieldError as exc:  # a dataset that cannot be read, a price file
        fail(f"{file}: {exc}")
    if as_json:
        print_json(est.model_dump(mode="json"))
        return
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # keep the table readable in logs and pipes
    console.print(_table(est))
    typer.echo(
        f"{est.events} events, {est.steps} forecast steps, {est.agents} agents x "
        f"{est.rollouts} rollouts = {est.episodes:,} episodes"
    )
    typer.echo(
        f"model calls: ~{est.model_calls:,} (at most {est.model_calls_max:,}); tokens: "
        f"~{est.input_tokens:,} in, ~{est.output_tokens:,} out"
    )
    typer.echo(
        f"estimated cost: ${est.cost_usd:,.2f} (at most ${est.cost_max_usd:,.2f})"
        + (f"; unpriced: {', '.join(est.unpriced)}" if est.unpriced else "")
    )
    for warning in est.warnings:
        typer.echo(f"warning: {warning}")


toolserver_app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@toolserver_app.command("serve")
def serve(
    ctx: typer.Context,
    event: Annotated[str, typer.Option("--event", help="Event id of the step to serve.")],
    step: Annotated[int, typer.Option("--step", help="Step index of that event.")] = 0,
    dataset: Annotated[
        str, typer.Option("--dataset", help=f"The dataset: {DATASET_SPEC_HELP}.")
    ] = "world",
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help="Corpus: an index directory or a PostgreSQL URL."),
    ] = None,
    retrieval: Retrieval = "bm25",
    index_dir: Annotated[
        Path, typer.Option("--index-dir", help="Where the embedded world keeps its index.")
    ] = Path("runs/index"),
    http: Annotated[
        bool, typer.Option("--http", help="Serve HTTP/JSON on the loopback instead of stdio.")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="HTTP port (0: any free one).")] = 0,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model the agent may call through the server (SPEC)."),
    ] = None,
    market_access: Annotated[
        bool, typer.Option("--market-access", help="Offer the market price history tool.")
    ] = False,
    python_tool: PythonToolOpt = _ENV.python_tool,
    max_tool_calls: MaxToolCallsOpt = _ENV.max_tool_calls,
    max_model_calls: MaxModelCallsOpt = _ENV.max_model_calls,
    rollout: Annotated[int, typer.Option("--rollout", help="Rollout number of the episode.")] = 0,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Write the forecast and the episode's record here (JSON)."),
    ] = None,
) -> None:
    """Serve one step's episode until the agent sends its forecast (or the input ends)."""
    env = ("market_access", "python_tool", "max_tool_calls", "max_model_calls")
    config = EnvConfig(**{name: ctx.params.pop(name) for name in env})  # the rest: the step's
    try:
        call_with_params(ctx, serve_episode, env=config, notes=lambda s: typer.echo(s, err=True))
    except FieldError as exc:
        fail_app(exc, {"out": "--index-dir"})
    except FileExistsError as exc:
        fail(f"--record {exc}", EXIT_FAILED)
    except OSError as exc:
        fail(f"--record {record}: cannot write it ({exc.strerror or exc})", EXIT_FAILED)
