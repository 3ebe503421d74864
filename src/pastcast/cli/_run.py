"""`pastcast run` and `pastcast demo`: run agents over forecast steps and write a run log.

Everything that can be checked without running is checked first (agent names, arguments and
their types, settings, budgets, the sandbox for the python tool, the dataset), so a usage error
exits 2 before a progress bar starts or a run log is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from pastcast.agents import clear_models
from pastcast.cli._common import (
    EXIT_FAILED,
    DayConventionOpt,
    JsonFlag,
    fail,
    load_dataset_option,
    note,
    output_dir,
    print_json,
)
from pastcast.cli._corpus import Retrieval, open_corpus
from pastcast.cli._data_view import CoverageDaysOpt
from pastcast.cli._specs import AGENT_GRAMMAR, check_agents, parse_agent_option
from pastcast.cli._steps import StepChoice, select_steps
from pastcast.corpus import EmbeddedIndex, OpenedCorpus, content_digest, redact_url
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig
from pastcast.owned import check_replaceable
from pastcast.records import Setting
from pastcast.runlog import AgentSpec, RunLogError, header_path, read_run_log
from pastcast.runner import NothingToRun, RunConfig, RunResult, run_benchmark
from pastcast.scoring import Fallback, summarize
from pastcast.validation import first_error

__all__ = [
    "DEMO_AGENTS",
    "OPTION_NAMES",
    "PER_AGENT_FIELDS",
    "check_resume",
    "demo",
    "report",
    "run",
]

DEMO_AGENTS = ("uniform", "base-rate", "heuristic", "heuristic@memory_on", "market")

# RunConfig / EnvConfig fields whose `run` option is not --field-name.
OPTION_NAMES = {"agents": "--agent", "python_timeout_s": "--python-timeout"}
# EnvConfig fields the runner sets per agent rather than per run: market prices go only to agents
# registered with market access (market, tool-agent-market), and never under @no_tools.
PER_AGENT_FIELDS = frozenset({"market_access"})

MAX_ROLLOUTS = 10_000
MAX_WORKERS = 1024
# The kind (pastcast.owned) of the index a run builds for the embedded world beside its log.
WORLD_INDEX = "world-index"
_ENV = EnvConfig()
_RUN = RunConfig.model_fields

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Experiment plan (TOML or YAML) declaring the whole run; see `pastcast plan FILE`.",
    ),
]
ResumeOpt = Annotated[
    bool,
    typer.Option("--resume", help="Continue the run log at --out; refused if there is none."),
]
RetryFailedOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="Run again the recorded steps a provider failed (down, rate limited past every "
        "retry, model missing).",
    ),
]


def check_resume(out: Path, resume: bool) -> None:
    if resume and not (header_path(out).is_file() or (out.is_file() and out.stat().st_size)):
        fail(f"--resume: no run log at {out} to resume")


@dataclass(frozen=True)
class _Loaded:
    dataset: Dataset
    backend: OpenedCorpus | None


@dataclass(frozen=True)
class CorpusChoice:
    """The corpus options of ``pastcast run``: where (``--corpus``) and how it is searched."""

    spec: str | None = None
    retrieval: str = "bm25"
    embedder: str | None = None

    def open(self, spec: str | Path, option: str) -> OpenedCorpus:
        if self.embedder is not None and self.retrieval == "bm25":
            fail("--embedder: only with --retrieval dense or hybrid")
        return open_corpus(spec, self.retrieval, option, embedder=self.embedder)


def _load_world(spec: str, choice: CorpusChoice, index_dir: Path) -> _Loaded:
    """The embedded world and a corpus of its own documents: the index it builds for itself, or
    one given by ``--corpus`` if it holds exactly those documents (any other corpus would not
    match the world's events)."""
    from pastcast.world import world_from_spec

    try:
        world = world_from_spec(spec)
    except ValueError as exc:
        fail(f"--dataset {exc}")
    digest = content_digest(world.corpus_documents)
    if choice.spec is not None:
        backend = choice.open(choice.spec, "--corpus")
        got = backend.identity().content_sha256
        if not world.holds_its_documents(got):
            backend.close()
            fail(
                f"--corpus {redact_url(choice.spec)}: holds other documents than {spec} "
                f"(content hash {got[:12]}..., the world's {digest[:12]}...); build one with "
                f"'pastcast corpus build {spec} --out DIR'"
            )
        return _Loaded(world.dataset, backend)
    # The world's own index, rebuilt whenever it does not hold the world's documents.
    try:
        current = EmbeddedIndex.open(index_dir).identity().content_sha256
    except (OSError, ValueError):  # none yet, or unreadable: rebuilt
        current = None
    if current != digest:
        try:  # only an index a run built for the world is rebuilt (pastcast.owned)
            check_replaceable(index_dir, WORLD_INDEX)
        except FileExistsError as exc:
            fail(f"--out: the world's index goes beside the run log: {exc}")
        EmbeddedIndex.build(
            world.corpus_documents, index_dir, overwrite=True, progress=True, kind=WORLD_INDEX
        )
    return _Loaded(world.dataset, choice.open(index_dir, "--retrieval"))


def _load(
    dataset: str,
    choice: CorpusChoice,
    index_dir: Path,
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> _Loaded:
    from pastcast.world import is_world_spec

    if convention is DayConvention.START_OF_DAY and is_world_spec(dataset):
        return _load_world(dataset, choice, index_dir)
    loaded = load_dataset_option(dataset, "--dataset", convention)
    if choice.spec is None:
        if choice.retrieval != "bm25" or choice.embedder is not None:
            fail("--retrieval/--embedder: need --corpus with a dataset directory")
        return _Loaded(loaded, None)
    return _Loaded(loaded, choice.open(choice.spec, "--corpus"))


def _option(field: str) -> str:
    return OPTION_NAMES.get(field, "--" + field.replace("_", "-"))


def _invalid(exc: ValidationError) -> str:
    """The first problem of a config, named by its command-line option."""
    loc, msg = first_error(exc)
    fields = [p for p in loc if isinstance(p, str)]
    option = _option(fields[-1]) if fields else "options"
    return f"{option}: {msg}"


def plan(
    agents: list[str], setting: Setting, build: Callable[[tuple[AgentSpec, ...]], RunConfig]
) -> RunConfig:
    """Parse and check the agents, then ``build(specs)`` the RunConfig (a one-line exit 2 on
    any problem)."""
    try:
        specs: tuple[AgentSpec, ...] = tuple(parse_agent_option(a, setting) for a in agents)
    except ValueError as exc:
        fail(str(exc))
    keys = [(s.name, s.setting) for s in specs]
    if len(set(keys)) != len(keys):
        fail(f"--agent: the same agent and setting is given twice ({', '.join(agents)})")
    try:
        config = build(specs)
    except ValidationError as exc:
        fail(_invalid(exc))
    return config


def _check_sandbox(env: EnvConfig) -> None:
    if not env.python_tool or env.unsafe_python:
        return
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        fail(
            f"--python-tool: no isolating sandbox here ({why}); install bubblewrap, or pass "
            "--unsafe-python for trusted agents only"
        )


def execute(
    dataset: str,
    config: RunConfig,
    out: Path,
    corpus: CorpusChoice | None = None,
    *,
    retry_failed: bool = False,
    steps: StepChoice | None = None,
    as_json: bool = False,
) -> RunResult:
    """Shared by ``run`` and ``demo``: load the data, run, return the result. Problems found
    before the work starts exit 2; an exception during the run exits 1."""
    if (out.exists() or out.is_symlink()) and (not out.is_file() or out.is_symlink()):
        fail(f"--out {out}: exists and is not a regular file (a run log is one)")
    _check_sandbox(config.env)
    check_agents(config.agents)
    choice = steps or StepChoice()
    loaded = _load(dataset, corpus or CorpusChoice(), out.parent / "index", choice.convention)
    try:
        data = select_steps(loaded.dataset, loaded.backend, choice, as_json)
    except BaseException:  # a usage error (exit 2) before the run: the corpus is closed
        if loaded.backend is not None:
            loaded.backend.close()
        raise
    try:
        return run_benchmark(data, loaded.backend, config, out, retry_failed=retry_failed)
    except (RunLogError, NothingToRun) as exc:  # another run's log there, or nothing to run
        fail(str(exc))
    except (ValueError, RuntimeError) as exc:  # bad data, a sandbox failing mid-run
        fail(str(exc), EXIT_FAILED)
    finally:
        clear_models()  # stop local model servers started for this run
        if loaded.backend is not None:
            loaded.backend.close()


def _summary(result: RunResult) -> dict[str, Any]:
    return {
        "run_log": str(result.path),
        "run_id": result.run_id,
        "written": result.written,
        "resumed": result.skipped,
        "unusable": result.failures,
        "retried": result.retried,
        "waiting": result.waiting,
        "accounting": result.accounting.model_dump(mode="json"),
    }


def report(result: RunResult, as_json: bool) -> None:
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
            help=escape(f"Agent (repeatable): {AGENT_GRAMMAR}"),  # [..] is not rich markup
        ),
    ] = None,
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            help="'world[:SEED][,FIELD=VALUE...]' (docs/world.md), a dataset directory, or a "
            "Forecast-Dojo release folder (questions/train.parquet, questions/eval.parquet).",
        ),
    ] = "world",
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
    max_tool_calls: Annotated[
        int, typer.Option("--max-tool-calls", help="Tool calls per forecast step.")
    ] = _ENV.max_tool_calls,
    max_tool_iterations: Annotated[
        int,
        typer.Option("--max-tool-iterations", help="Model turns with tool calls per step."),
    ] = _ENV.max_tool_iterations,
    max_model_calls: Annotated[
        int, typer.Option("--max-model-calls", help="Model calls per forecast step.")
    ] = _ENV.max_model_calls,
    max_search_k: Annotated[
        int, typer.Option("--max-search-k", help="Most hits one search may return.")
    ] = _ENV.max_search_k,
    snippet_chars: Annotated[
        int, typer.Option("--snippet-chars", help="Characters of text shown per search hit.")
    ] = _ENV.snippet_chars,
    read_max_chars: Annotated[
        int, typer.Option("--read-max-chars", help="Characters of a document one read returns.")
    ] = _ENV.read_max_chars,
    python_tool: Annotated[
        bool,
        typer.Option(
            "--python-tool/--no-python-tool",
            help="Offer the python tool (needs an isolating sandbox: bubblewrap).",
        ),
    ] = _ENV.python_tool,
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
        bool,
        typer.Option(
            "--covered-only",
            help="Play only the steps the corpus covers (a document in the --coverage-days "
            "before the cutoff); uncovered steps are always reported on stderr.",
        ),
    ] = False,
    coverage_days: CoverageDaysOpt = 7,
    config: ConfigOpt = None,
    resume: ResumeOpt = False,
    retry_failed: RetryFailedOpt = False,
    as_json: JsonFlag = False,
) -> None:
    """Run agents over a dataset's forecast steps and write a resumable run log.

    Market prices go only to agents registered with market access (market, tool-agent-market).
    With --config FILE an experiment plan declares the whole run (see `pastcast plan FILE`).
    Exit codes: 0 done, 2 a usage error (nothing is run), 1 a failed run: an error during the
    run, or every new forecast unusable.
    """
    if config is not None:
        from pastcast.cli._run_plan import run_plan  # it builds on this module

        run_plan(ctx, config, out, resume=resume, retry_failed=retry_failed, as_json=as_json)
        return
    if not agent:
        fail("--agent: give at least one agent (or --config FILE)")
    check_resume(out, resume)

    def build(specs: tuple[AgentSpec, ...]) -> RunConfig:
        env = EnvConfig(
            max_tool_calls=max_tool_calls,
            max_tool_iterations=max_tool_iterations,
            max_model_calls=max_model_calls,
            max_search_k=max_search_k,
            snippet_chars=snippet_chars,
            read_max_chars=read_max_chars,
            python_tool=python_tool,
            unsafe_python=unsafe_python,
            python_timeout_s=python_timeout_s,
        )
        return RunConfig(
            agents=specs,
            rollouts=rollouts,
            env=env,
            fallback=fallback,
            workers=workers,
            split=split,
            max_events=max_events,
        )

    run_config = plan(agent, setting, build)
    result = execute(
        dataset,
        run_config,
        out,
        CorpusChoice(corpus, retrieval, embedder),
        retry_failed=retry_failed,
        steps=StepChoice(day_convention, covered_only, coverage_days),
        as_json=as_json,
    )
    report(result, as_json)


def demo(
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("runs/demo"),
    seed: Annotated[int, typer.Option("--seed", help="Seed of the embedded world.")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Build the embedded world and its index, run the baselines and the heuristic research
    agent, print the leaderboard and write a run log and a report."""
    from pastcast.reports import write_report

    config = plan(list(DEMO_AGENTS), "memory_free", lambda specs: RunConfig(agents=specs))
    output_dir(out, "--out", "demo")
    log = out / "run.jsonl"
    result = execute(f"world:{seed}", config, log)
    note(f"run log: {result.path} ({result.written} new steps, {result.skipped} resumed)", as_json)
    console = Console(stderr=True) if as_json else None  # the leaderboard table is a note then
    report = write_report([log], out / "report.md", console=console)
    note(f"report: {report}", as_json)
    if as_json:
        board = [s.as_dict() for s in summarize(read_run_log(log).steps)]  # as in the report
        print_json({**_summary(result), "report": str(report), "leaderboard": board})
    _exit_if_all_unusable(result)
