"""The one run path: an experiment plan (from a file, or from ``pastcast run``'s options) checked
in full before any work, then run with its models' lifetime owned here.

``run_plan`` checks everything that can be checked without running (the out path and resume,
the agents by the registry with their argument types, every model loaded, the sandbox for the
python tool, the executor, the dataset and corpus, the schedule, the step selection) and raises
``FieldError`` naming the field of the first problem; then it runs, and stops every local model
server started for the run however the run ends. The demo (``run_demo``) and one step served
to an agent of any framework (``serve_episode``) are runs too, below.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, overload

from pydantic import ValidationError

from pastcast.app._agents import check_agents, models_session, parse_agent_options
from pastcast.app._fields import as_field
from pastcast.app._open import open_dataset
from pastcast.app._replays import open_replay
from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.errors import FieldError, within
from pastcast.models import resolve_model
from pastcast.owned import check_new_file, claim_dir, write_new_file
from pastcast.records import EpisodeRecord, Forecast, Record, Setting
from pastcast.runlog import header_path
from pastcast.runner import (
    ExperimentPlan,
    PlanEstimate,
    Preset,
    RunConfig,
    RunResult,
    estimate_plan,
    executors,
    load_plan,
    load_record,
    play_episode,
    preset_names,
    reschedule,
    run_benchmark,
    write_record,
)
from pastcast.runner import preset as get_preset
from pastcast.validation import field_path, first_error

if TYPE_CHECKING:
    from pastcast.reports import Scorecard
    from pastcast.reports.html import WrittenReport
    from pastcast.toolserver import EpisodeServer

_log = logging.getLogger("pastcast")


R = TypeVar("R", bound=Record)


@overload
def read_plan(path: str | Path) -> ExperimentPlan: ...
@overload
def read_plan(path: str | Path, kind: type[R]) -> R: ...
def read_plan(path: str | Path, kind: type[Record] = ExperimentPlan) -> Record:
    """The record ``kind`` (a workflow's: ``ExperimentPlan``, ``CurationPlan``, ...) in the file
    at ``path`` (TOML, YAML or JSON); ``FieldError`` (field ``plan``) naming the file and the
    field of the first problem."""
    with within("plan"):
        if kind is ExperimentPlan:  # its agents are checked by the registry too
            return load_plan(path)
        return load_record(kind, path)


def write_plan(record: Record, path: str | Path) -> Path:
    """``record`` written to the new file ``path`` (JSON, YAML, else TOML by its suffix), which
    ``read_plan`` reads back as the same record; ``FieldError`` (field ``plan``) otherwise."""
    with as_field("plan", OSError), within("plan"):
        return write_record(record, path)


def plan_from_agents(
    agents: Sequence[str], /, *, setting: Setting = "memory_free", **fields: Any
) -> ExperimentPlan:
    """The plan that ``agents`` (each ``NAME[:key=value,...][@SETTING]``, ``setting`` for those
    without one; given, they replace the ``agents`` of ``fields``) and ``fields`` (any of
    ``ExperimentPlan``: ``dataset``, ``corpus``, ``budgets``, ``preset``, ...) declare: what
    ``pastcast run``'s options build (a ``preset`` fills the fields not given). ``FieldError``
    naming the field (``budgets.max_tool_calls``) of the first problem."""
    if agents:
        parsed = parse_agent_options(agents, setting)
        fields["agents"] = [
            {"name": p.name, "label": p.label, "setting": p.setting, "args": p.args} for p in parsed
        ]
    try:
        return ExperimentPlan.model_validate(fields)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise FieldError(field_path(loc) or "plan", f"is invalid: {msg}") from None


def preset_settings(name: str | None = None) -> tuple[Preset, ...]:
    """Every registered preset, or the one named (``FieldError`` field ``preset`` if unknown)."""
    if name is None:
        return tuple(get_preset(n) for n in preset_names())
    if name not in preset_names():
        raise FieldError("preset", f"unknown {name!r} (one of {', '.join(preset_names())})")
    return (get_preset(name),)


def check_sandbox(env: EnvConfig, field: str = "budgets.python_tool") -> None:
    """An isolating sandbox is needed for the python tool unless it is allowed unsafe."""
    if not env.python_tool or env.unsafe_python:
        return
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        raise FieldError(
            field,
            f"needs an isolating sandbox and there is none here ({why}): install bubblewrap, "
            "or allow unsafe python for trusted agents only",
        )


def _rescheduled(dataset: Dataset, schedule: str | None) -> Dataset:
    with as_field("schedule"):
        return reschedule(dataset, schedule)


def steps_to_play(
    dataset: Dataset,
    backend: CorpusBackend | None,
    *,
    covered_only: bool = False,
    coverage_days: int = 7,
    notes: Callable[[str], None],
) -> Dataset:
    """``dataset`` with only the steps the corpus covers (a document in the ``coverage_days``
    before the cutoff) when ``covered_only``; a ``warning: ...`` line to ``notes`` per split
    with uncovered steps either way."""
    if backend is None:
        if covered_only:
            raise FieldError("covered_only", "needs a corpus (coverage is measured against one)")
        return dataset
    from pastcast.markets import step_coverage

    report = step_coverage(dataset, backend, window_days=coverage_days)
    hint = "" if covered_only else " (covered_only leaves them out)"
    for line in report.warnings():
        notes(f"warning: {line}{hint}")
    if not covered_only:
        return dataset
    kept = [s for s in dataset.steps if report.is_covered(s)]
    if not kept:
        raise FieldError(
            "covered_only", "leaves nothing: no step of the dataset is covered by the corpus"
        )
    notes(f"covered_only: {len(kept)} of {len(dataset.steps)} steps kept")
    return dataset.with_steps(kept)


def run_plan(
    plan: ExperimentPlan,
    out: str | Path | None = None,
    *,
    resume: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
    notes: Callable[[str], None] | None = None,
) -> RunResult:
    """Run ``plan``, writing its run log to ``out`` (default: the plan's ``out``; resumed when
    present: ``resume`` requires one), checked first as the module says. ``notes`` gets the
    lines worth showing before the run (coverage warnings; default: the ``pastcast`` logger).
    Errors of the run itself propagate (``ValueError``, ``RuntimeError``)."""
    log = Path(out if out is not None else plan.out)
    tell = notes or _log.warning
    if (log.exists() or log.is_symlink()) and (not log.is_file() or log.is_symlink()):
        raise FieldError("out", f"{log}: exists and is not a regular file (a run log is one)")
    if resume and not (header_path(log).is_file() or (log.is_file() and log.stat().st_size)):
        raise FieldError("resume", f"finds no run log at {log} to resume")
    with as_field("agents", FieldError, ValidationError):
        config = plan.run_config()
    with as_field("concurrency.executor", RuntimeError, ValueError):
        executor = executors.build(plan.concurrency.executor, **plan.concurrency.executor_args)
    check_sandbox(config.env)
    with models_session():
        check_agents(config.agents)
        corpus = plan.corpus
        with open_replay(
            plan.dataset,
            corpus.spec,
            corpus.retrieval,
            corpus.embedder,
            index_dir=log.parent / "index",
            convention=plan.day_convention,
            nprobe=corpus.nprobe,
        ) as replay:
            dataset = _rescheduled(replay.dataset, plan.schedule)
            dataset = steps_to_play(
                dataset,
                replay.backend,
                covered_only=plan.covered_only,
                coverage_days=plan.coverage_days,
                notes=tell,
            )
            return run_benchmark(
                dataset,
                replay.backend,
                config,
                log,
                progress=progress,
                execution=plan.execution(),
                executor=executor,
                corpus_ref=replay.corpus_ref,
                retry_failed=retry_failed,
                knowledge_cutoffs=plan.knowledge_cutoffs(),
                # the header says where this log is, not the plan's default
                plan={**plan.model_dump(mode="json"), "out": str(log)},
            )


def plan_estimate(plan: ExperimentPlan) -> PlanEstimate:
    """What ``plan`` will run and cost, on its dataset as the run opens it (a world, a dataset
    directory or a Forecast-Dojo release, rescheduled); ``FieldError`` naming the field."""
    dataset = _rescheduled(
        open_dataset(plan.dataset, convention=plan.day_convention), plan.schedule
    )
    with as_field("prices"):  # a price file that cannot be read
        return estimate_plan(plan, dataset)


# The demo (``run_demo``): the embedded world and its index, the baselines and the heuristic
# research agent run over it, the retrieval audit of what it served, and the report of that
# run, in one folder.
DEMO_AGENTS = ("uniform", "base-rate", "heuristic", "heuristic@memory_on", "market")

_log = logging.getLogger("pastcast")


@dataclass(frozen=True)
class Demo:
    """The demo's run, the scorecard of its leaderboard and its report (None without the
    reports extra: a note says so)."""

    run: RunResult
    card: Scorecard
    report: WrittenReport | None


def run_demo(out: str | Path, *, seed: int = 0, notes: Callable[[str], None] | None = None) -> Demo:
    """Run ``DEMO_AGENTS`` over the embedded world of ``seed`` into the folder ``out`` (made
    and marked as a demo's, resumed when it holds one): the run log ``run.jsonl``, the world's
    index ``index/`` and the report ``report/`` (``report_runs``; without the reports extra, only
    the scorecard). ``notes`` gets the lines worth showing (default: the ``pastcast`` logger).
    ``FieldError`` names the field of a problem found before the run; errors of the run itself
    propagate (``ValueError``, ``RuntimeError``), as from ``run_plan``."""
    from pastcast.app._reports import report_runs, score_runs  # the demo's report, not a run's

    tell = notes or _log.warning
    dataset = f"world:{seed}"
    plan = plan_from_agents(
        DEMO_AGENTS,
        dataset=dataset,
        concurrency={"episodes": RunConfig.model_fields["workers"].default},
    )
    folder = Path(out)
    try:
        claim_dir(folder, "demo")
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    except OSError as exc:
        raise FieldError(
            "out", f"{folder}: cannot make the folder ({exc.strerror or exc})"
        ) from None
    log = folder / "run.jsonl"
    result = run_plan(plan, log, notes=tell)
    _audit_served(log, dataset)
    try:
        made = report_runs([log], folder / "report", dataset=dataset)
    except FieldError as exc:
        if exc.field:
            raise
        tell(f"note: no HTML report: {exc.reason}")  # the reports extra is missing
        return Demo(result, score_runs([log], dataset=dataset).card, None)
    return Demo(result, made.written.card, made.written)


PLANTED_JUDGE = "world-planted-documents"
"""The demo's retrieval judge: the embedded worlds' own record of the rewrites they planted."""


def _audit_served(log: Path, spec: str) -> None:
    """The served-document leakage of the demo's run, written beside its log for the leakage
    card (``pastcast audit retrievals``): a stratified sample of the documents the run served,
    judged by a scripted judge that flags exactly the hindsight rewrites the world generator
    planted (it knows them; no model), its errors measured on the planted rewrites and clean
    articles of the calibration world. The rate is measured, not assumed: a corpus that let a
    planted rewrite through would show it."""
    from pastcast.app._audits import DEFAULT_CALIBRATION
    from pastcast.app._reading import read_runs
    from pastcast.audit import (
        audit_served,
        calibration_items,
        served_documents,
        write_retrieval_audit,
    )
    from pastcast.curate import Judge
    from pastcast.models import ChatRequest, ScriptedModel
    from pastcast.world import world_from_spec

    world, known = world_from_spec(spec), world_from_spec(DEFAULT_CALIBRATION)
    planted = [d.text[:200] for w in (world, known) for d in w.documents if d.id in w.hindsight_ids]

    def verdict(request: ChatRequest) -> str:
        shown = request.messages[-1].content  # the question and the document's opening text
        found = any(text in shown for text in planted)
        reason = "a planted hindsight rewrite" if found else "not a planted rewrite"
        return json.dumps({"reveals_later": found, "reason": reason})

    items = calibration_items(known.dataset, known.documents, known.hindsight_ids, known.evidence)
    read = read_runs([log], columns=(), require_steps=False)
    served, docs, unknown = served_documents(read.logs[0], world.documents)
    audit = audit_served(
        served,
        docs,
        world.dataset,
        Judge(ScriptedModel(responder=verdict, name=PLANTED_JUDGE)),
        items,
        run_log=str(read.logs[0].path),
        unknown_documents=len(unknown),
        calibration_name=DEFAULT_CALIBRATION,
        prompt="audit_retrieval.v2",  # the verdict prompt: the judge answers reveals_later
    )
    write_retrieval_audit(audit, log)


# One forecast step's episode served to an agent of any framework (``serve_episode``): over
# stdio (the Model Context Protocol's own transport: the agent's MCP client talks on this
# process's stdin/stdout) or over HTTP/JSON on the loopback interface. The episode is built as a
# run builds it, with its cutoff bound in the server, and ends by the runner's one rule
# (``pastcast.runner.play_episode``), recorded as a run records it.
@dataclass(frozen=True)
class ServedEpisode:
    """How a served episode ended: the forecast (unusable, saying why, when none came) and the
    episode's record."""

    forecast: Forecast
    episode: EpisodeRecord

    def as_dict(self) -> dict[str, object]:
        return {
            "forecast": self.forecast.model_dump(mode="json"),
            "episode": self.episode.model_dump(mode="json"),
        }


class _ServedAgent:
    """The agent on the other side of the server, as ``play_episode`` plays an agent."""

    def __init__(self, server: EpisodeServer, serve: Callable[[EpisodeServer], None]) -> None:
        self.server = server
        self.serve = serve

    def forecast(self, episode: Episode) -> Forecast:
        self.serve(self.server)
        forecast = self.server.outcome()
        if forecast is None:
            raise EOFError("the agent left without a forecast")
        return forecast


def serve_episode(
    event: str,
    step: int = 0,
    *,
    dataset: str | Path = "world",
    corpus: str | Path | None = None,
    retrieval: str = "bm25",
    index_dir: Path | None = None,
    env: EnvConfig | None = None,
    model: str | None = None,
    rollout: int = 0,
    http: bool = False,
    port: int = 0,
    record: Path | None = None,
    stdio: tuple[IO[bytes], IO[bytes]] | None = None,
    notes: Callable[[str], None] | None = None,
) -> ServedEpisode:
    """Serve step ``step`` of ``event`` until the agent sends its forecast or leaves, as
    `pastcast toolserver serve` does (docs/isolation.md; the options are its parameters), on
    ``stdio`` (default: this process's) or over ``http``; where, and the token, go to ``notes``.
    ``record``, a new file, is checked before serving; ``OSError`` if it cannot be written
    after. Every problem found before serving is a ``FieldError`` naming its field."""
    from pastcast.toolserver import EpisodeServer, HttpToolServer, serve_stdio

    config = env or EnvConfig()
    check_sandbox(config, field="python_tool")
    if record is not None:
        try:
            check_new_file(record)
        except FileExistsError as exc:
            raise FieldError("record", str(exc)) from None
        except OSError as exc:
            why = exc.strerror or exc
            raise FieldError("record", f"{record}: cannot write there ({why})") from None
    with as_field("model"):
        served_model = None if model is None else resolve_model(model)
    tell = notes or _log.warning
    # the step is found before the replay opens (which may build the world's index)
    if step not in {s.step_index for s in open_dataset(dataset).steps_of(event)}:
        raise FieldError("step", f"{step}: event {event!r} has no such step in {dataset}")
    with open_replay(dataset, corpus, retrieval, index_dir=index_dir) as replay:
        steps = {s.step_index: s for s in replay.dataset.steps_of(event)}  # found above
        try:
            episode = ForecastEnv(replay.dataset, replay.backend, config).reset(
                steps[step], rollout=rollout
            )
        except ValueError as exc:
            raise FieldError("step", f"{step}: {exc}") from None

        def serve(server: EpisodeServer) -> None:
            if http:
                web = HttpToolServer(server, port=port)
                tell(f"serving {event}#{step} at {web.url} (token {web.token})")
                with contextlib.suppress(KeyboardInterrupt):  # stopped by hand: still recorded
                    web.serve_until_finished()
            else:
                reader, writer = stdio or (sys.stdin.buffer, sys.stdout.buffer)
                serve_stdio(server, reader, writer)

        agent = _ServedAgent(EpisodeServer(episode, served_model), serve)
        served = ServedEpisode(*play_episode(agent, episode))
    if record is not None:
        body = json.dumps(served.as_dict(), ensure_ascii=False, indent=1)
        write_new_file(record, body.encode("utf-8"))
    return served
