"""`pastcast run` and `pastcast demo`: run agents over forecast steps and write a run log."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from pastcast.agents import clear_models
from pastcast.cli._common import fail
from pastcast.cli._corpus import open_corpus
from pastcast.cli._specs import parse_agent_option
from pastcast.corpus import EmbeddedIndex, OpenedCorpus, content_digest, redact_url
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig
from pastcast.runlog import AgentSpec
from pastcast.runner import RunConfig, RunResult, run_benchmark

__all__ = ["DEMO_AGENTS", "demo", "run"]

DEMO_AGENTS = ("uniform", "base-rate", "heuristic", "heuristic@memory_on", "market")


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
    from pastcast.world import build_world

    _, _, seed_text = spec.partition(":")
    try:
        seed = int(seed_text or 0)
    except ValueError:
        fail(f"--dataset {spec!r}: the world seed must be an integer (e.g. world:3)")
    world = build_world(seed)
    digest = content_digest(world.documents)
    if choice.spec is not None:
        backend = choice.open(choice.spec, "--corpus")
        got = backend.identity().content_sha256
        if got != digest:
            backend.close()
            fail(
                f"--corpus {redact_url(choice.spec)}: holds other documents than world:{seed} "
                f"(content hash {got[:12]}..., the world's {digest[:12]}...); build one with "
                f"'pastcast corpus build world:{seed} --out DIR'"
            )
        return _Loaded(world.dataset, backend)
    # The world's own index, rebuilt whenever it does not hold the world's documents.
    try:
        current = EmbeddedIndex.open(index_dir).identity().content_sha256
    except (OSError, ValueError):  # none yet, or unreadable: rebuilt
        current = None
    if current != digest:
        EmbeddedIndex.build(world.documents, index_dir, overwrite=True, progress=True)
    return _Loaded(world.dataset, choice.open(index_dir, "--retrieval"))


def _load(dataset: str, choice: CorpusChoice, index_dir: Path) -> _Loaded:
    if dataset == "world" or dataset.startswith("world:"):
        return _load_world(dataset, choice, index_dir)
    from pastcast.dataset import load_dataset

    path = Path(dataset)
    if not path.is_dir():
        fail(f"--dataset {dataset!r}: not a dataset directory (or 'world[:SEED]')")
    try:
        loaded = load_dataset(path)
    except ValueError as exc:
        fail(str(exc))
    if choice.spec is None:
        if choice.retrieval != "bm25" or choice.embedder is not None:
            fail("--retrieval/--embedder: need --corpus with a dataset directory")
        return _Loaded(loaded, None)
    return _Loaded(loaded, choice.open(choice.spec, "--corpus"))


def execute(
    dataset: str,
    agents: list[str],
    out: Path,
    *,
    corpus: CorpusChoice | None = None,
    setting: str = "memory_free",
    rollouts: int = 1,
    workers: int = 1,
    split: str | None = None,
    max_events: int | None = None,
    env: EnvConfig | None = None,
) -> RunResult:
    """Shared by ``run`` and ``demo``: parse options, load data, run, return the result."""
    try:
        specs: tuple[AgentSpec, ...] = tuple(parse_agent_option(a, setting) for a in agents)
    except ValueError as exc:
        fail(str(exc))
    keys = [(s.name, s.setting) for s in specs]
    if len(set(keys)) != len(keys):
        fail(f"--agent: the same agent and setting is given twice ({', '.join(agents)})")
    loaded = _load(dataset, corpus or CorpusChoice(), out.parent / "index")
    config = RunConfig(
        agents=specs,
        rollouts=rollouts,
        workers=workers,
        split=split,
        max_events=max_events,
        env=env or EnvConfig(),
    )
    try:
        return run_benchmark(loaded.dataset, loaded.backend, config, out)
    except (ValueError, RuntimeError) as exc:  # bad data, unavailable sandbox: one line
        fail(str(exc))
    finally:
        clear_models()  # stop local model servers started for this run
        if loaded.backend is not None:
            loaded.backend.close()


def run(
    dataset: str = typer.Option("world", help="'world[:SEED]' or a dataset directory."),
    agent: list[str] = typer.Option(
        ...,
        "--agent",
        "-a",
        help="Agent as NAME[:key=value,...][@memory_free|memory_on|no_tools]; repeatable.",
    ),
    out: Path = typer.Option(Path("runs/run.jsonl"), help="Run log to write (resumed if present)."),
    corpus: str | None = typer.Option(
        None,
        help="Corpus: an index directory or a PostgreSQL URL (postgresql://USER@HOST:PORT/DB"
        "[?schema=NAME]). The embedded world builds its own; given, it must hold the world's "
        "documents ('pastcast corpus build world:SEED').",
    ),
    retrieval: str = typer.Option(
        "bm25", help="bm25, dense or hybrid (dense and hybrid need the 'dense' extra)."
    ),
    embedder: str | None = typer.Option(
        None, help="dense/hybrid: the embedder by registered name (default all-minilm-l6-v2)."
    ),
    setting: str = typer.Option("memory_free", help="Default setting for agents without @."),
    rollouts: int = typer.Option(1, min=1, help="Rollouts per forecast step."),
    workers: int = typer.Option(1, min=1, help="Parallel (agent, event, rollout) chains."),
    split: str | None = typer.Option(None, help="Only events of this split (e.g. eval)."),
    max_events: int | None = typer.Option(None, min=1, help="Only the first N events."),
    max_tool_calls: int = typer.Option(400, min=0, help="Tool calls per forecast step."),
    python_tool: bool = typer.Option(False, help="Offer the sandboxed python tool."),
    unsafe_python: bool = typer.Option(
        False, help="Allow the python tool without isolation (trusted agents only)."
    ),
) -> None:
    """Run agents over a dataset's forecast steps and write a resumable run log."""
    env = EnvConfig(
        max_tool_calls=max_tool_calls, python_tool=python_tool, unsafe_python=unsafe_python
    )
    result = execute(
        dataset,
        agent,
        out,
        corpus=CorpusChoice(corpus, retrieval, embedder),
        setting=setting,
        rollouts=rollouts,
        workers=workers,
        split=split,
        max_events=max_events,
        env=env,
    )
    typer.echo(
        f"{result.path}: {result.written} steps written, {result.skipped} resumed, "
        f"{result.failures} unusable forecasts (run {result.run_id})"
    )


def demo(
    out: Path = typer.Option(Path("runs/demo"), help="Output directory."),
    seed: int = typer.Option(0, help="Seed of the embedded world."),
) -> None:
    """Build the embedded world and its index, run the baselines and the heuristic research
    agent, print the leaderboard and write a run log and a report."""
    from pastcast.reports import write_report

    out.mkdir(parents=True, exist_ok=True)
    log = out / "run.jsonl"
    result = execute(f"world:{seed}", list(DEMO_AGENTS), log)
    typer.echo(f"run log: {result.path} ({result.written} new steps, {result.skipped} resumed)")
    report = write_report([log], out / "report.md")
    typer.echo(f"report: {report}")
