"""One forecast step as the agent lives it, and the environment that builds it."""

from __future__ import annotations

import json
import time
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from pastcast.corpus import CorpusBackend
from pastcast.cutoff import step_precedes_resolution
from pastcast.dataset import Dataset
from pastcast.env._config import EnvConfig
from pastcast.env._question import QuestionView, question_view
from pastcast.env._toolkit import BudgetExceeded, PythonResult, ToolError
from pastcast.env._tools import Toolbox
from pastcast.env._transcript import Transcript
from pastcast.models import ChatRequest, ChatResponse, Model, context_limits_of, fit_request
from pastcast.records import (
    BINARY_LABELS,
    EpisodeRecord,
    EvidenceTally,
    Notebook,
    NotebookProblem,
    Record,
    StepSpec,
    StopReason,
    Termination,
    Usage,
    tool_result_text,
)


class PublicHistory(Record):
    """Outcome counts of events already resolved before the cutoff (public knowledge then)."""

    binary_resolved: int = 0
    binary_yes: int = 0
    multi_resolved: int = 0


class Episode:
    """The agent's whole world for one step: question, tools, notebook, model access.

    It holds no reference to the dataset, the resolutions or future documents; the runner grades
    the forecast after the episode, outside of it. Agents call their model only through ``chat``
    (and run tools for it through ``call_tool``), so ``record`` holds exactly what was sent.
    """

    def __init__(
        self,
        question: QuestionView,
        tools: Toolbox,
        config: EnvConfig,
        history: PublicHistory,
        notebook_in: Notebook | None = None,
        rollout: int = 0,
    ) -> None:
        self.question = question
        self.tools = tools
        self.config = config
        self.history = history
        self.notebook_in = notebook_in
        self.rollout = rollout
        self.notebook_out: Notebook | None = None
        self.notebook_carried = False
        """The notebook written was rejected and ``notebook_in`` carried forward."""
        self.notebook_problems: tuple[NotebookProblem, ...] = ()
        self.evidence_tally: EvidenceTally | None = None
        """The agent's own evidence tally, recorded with the episode (the two-stage agent)."""
        self.stop_reason: StopReason | None = None
        """Why the agent's research loop stopped, recorded with the episode."""
        self._transcript = Transcript()
        self._usage = Usage()
        self._started = time.perf_counter()

    @property
    def usage(self) -> Usage:
        return self._usage

    def chat(self, model: Model, request: ChatRequest) -> ChatResponse:
        """Call a model through the episode: the budget is charged, usage counted, and the
        request (exactly as sent) and its reply or error kept in the transcript. A bounded
        model's request is fitted first (``fit_request``); one too long raises
        ``ContextOverflow`` before anything is sent or charged, so the agent can compact it."""
        limits = context_limits_of(model)
        if limits is not None:
            request = fit_request(request, limits)
        if self._usage.model_calls >= self.config.max_model_calls:
            raise BudgetExceeded("model", self.config.max_model_calls)
        # Count the call before sending it, so a failing call still uses budget.
        self._usage = self._usage.model_copy(update={"model_calls": self._usage.model_calls + 1})
        # Stamped here so agents need not know it: a cache keys on it, so rollouts of a step
        # sample independently instead of replaying the first rollout's outputs.
        request = request.model_copy(update={"rollout": self.rollout})
        seq = len(self._transcript.model_calls) + len(self.tools.calls)
        started = time.perf_counter()
        try:
            response = model.chat(request)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            self._transcript.add(seq, model.name, request, None, _since(started), error)
            raise
        self._transcript.add(seq, model.name, request, response, _since(started))
        self._add_usage(response.usage)
        return response

    def _add_usage(self, u: Usage, model_calls: int = 0) -> None:
        mine = self._usage
        self._usage = Usage(
            model_calls=mine.model_calls + model_calls,
            input_tokens=mine.input_tokens + u.input_tokens,
            output_tokens=mine.output_tokens + u.output_tokens,
            cost_usd=mine.cost_usd + u.cost_usd,
        )

    def call_tool(
        self, name: str, arguments: dict[str, Any], *, max_chars: int | None = None
    ) -> str:
        """Run a tool for a model: the result as the exact text the model is given (its JSON, cut
        to ``max_chars``; a refusal as ``{"error": ...}``), which is also what the logged call
        keeps. Raises ``BudgetExceeded`` when the tool budget is spent."""
        logged = len(self.tools.calls)
        try:
            text = tool_result_text(self.tools.call(name, arguments))
        except ToolError as exc:
            text = json.dumps({"error": str(exc)}, ensure_ascii=False)
        if max_chars is not None:
            text = text[:max_chars]
        if len(self.tools.calls) > logged:  # every call within budget is logged, once
            self.tools.calls[logged] = self.tools.calls[logged].model_copy(update={"result": text})
        return text

    def record(self, termination: Termination, error: str | None = None) -> EpisodeRecord:
        # Tool calls get their place among model calls: a model call's seq minus its index is
        # the number of tool calls made before it.
        before = [c.seq - j for j, c in enumerate(self._transcript.model_calls)]
        tool_calls = tuple(
            c.model_copy(update={"seq": i + bisect_right(before, i)})
            for i, c in enumerate(self.tools.calls)
        )
        return EpisodeRecord(
            messages=tuple(self._transcript.messages),
            model_calls=tuple(self._transcript.model_calls),
            tool_calls=tool_calls,
            notebook_in=self.notebook_in,
            notebook_out=self.notebook_out,
            notebook_carried=self.notebook_carried,
            notebook_problems=self.notebook_problems,
            usage=self._usage,
            wall_s=_since(self._started),
            termination=termination,
            error=error,
            evidence_tally=self.evidence_tally,
            stop_reason=self.stop_reason,
        )


def _since(started: float) -> float:
    return time.perf_counter() - started


def sandboxed_python(config: EnvConfig) -> Callable[[str], dict[str, Any]]:
    """The python tool backed by ``pastcast.sandbox``; refuses early where isolation fails."""
    from pastcast.sandbox import SandboxUnavailable, run_python, sandbox_available

    ok, why = sandbox_available()
    if not ok and not config.unsafe_python:
        raise SandboxUnavailable(
            f"the python tool needs an isolating sandbox, which is unavailable here ({why}); "
            "install bubblewrap, turn the tool off, or allow unsafe execution explicitly"
        )

    def run(code: str) -> dict[str, Any]:
        res = run_python(code, timeout_s=config.python_timeout_s, allow_unsafe=config.unsafe_python)
        return res.model_dump(include=set(PythonResult.model_fields))

    return run


class ForecastEnv:
    """Builds episodes for forecast steps of a dataset over a corpus backend."""

    def __init__(
        self,
        dataset: Dataset,
        backend: CorpusBackend | None,
        config: EnvConfig | None = None,
        python_runner: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self.dataset = dataset
        self.backend = backend
        self.config = config or EnvConfig()
        if python_runner is None and self.config.python_tool:
            python_runner = sandboxed_python(self.config)
        self.python_runner = python_runner
        """What runs the python tool's code (None: the tool is off)."""

    def reset(
        self,
        step: StepSpec,
        *,
        notebook_in: Notebook | None = None,
        config: EnvConfig | None = None,
        rollout: int = 0,
    ) -> Episode:
        cfg = config or self.config
        event = self.dataset.event_at(step.event_id, step.cutoff)  # its text as of the cutoff
        resolution = self.dataset.resolutions.get(event.id)
        if resolution is not None and not step_precedes_resolution(
            step.cutoff, resolution.resolved_at
        ):
            raise ValueError(
                f"step {step.event_id}#{step.step_index}: cutoff {step.cutoff:%Y-%m-%d %H:%M} is "
                "not before the resolution; such a step would leak the outcome"
            )
        market = self.dataset.beliefs_before(event.id, step.cutoff) if cfg.market_access else None
        tools = Toolbox(
            self.backend, step.cutoff, cfg, market=market, python_runner=self.python_runner
        )
        view = question_view(event, step.cutoff, step.step_index)
        return Episode(view, tools, cfg, self._history(step), notebook_in, rollout)

    def _history(self, step: StepSpec) -> PublicHistory:
        binary = yes = multi = 0
        for res in self.dataset.resolved_before(step.cutoff):
            if res.event_id == step.event_id:
                continue
            ev = self.dataset.event(res.event_id)
            if ev.kind == "binary":
                binary += 1
                yes += res.label == BINARY_LABELS[0]
            else:
                multi += 1
        return PublicHistory(binary_resolved=binary, binary_yes=yes, multi_resolved=multi)
