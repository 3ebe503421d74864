"""A ``verifiers`` environment over pastcast's forecast steps, for RL trainers: one dataset row
per step, never its outcome, which grades the final answer after the rollout; each rollout gets
its own cutoff-bound episode. The reward is the first registered metric turned so that more is
better; the other paired metrics and a usable-format flag are reported as metrics.
docs/integrations.md ("verifiers")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import verifiers as vf
from datasets import Dataset as HFDataset

from pastcast.agents import parse_forecast, research_prompt
from pastcast.app import Replay, shared_replay
from pastcast.env import BudgetExceeded, EnvConfig, Episode
from pastcast.records import Forecast, Setting, StepSpec
from pastcast.scoring import Fallback, Metric, metric_list, step_scores

BUDGET_SPENT = json.dumps({"error": "tool call budget spent: reply now with your final answer"})


def _content_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    texts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in parts]
    return "".join(t for t in texts if isinstance(t, str))


class PastcastEnv(vf.MultiTurnEnv):  # type: ignore[misc]
    """Multi-turn tool use over one forecast step per row; see the module docstring."""

    def __init__(
        self,
        replay: Replay,
        steps: list[StepSpec],
        *,
        setting: Setting = "memory_free",
        env: EnvConfig | None = None,
        fallback: Fallback = "uniform",
        max_result_chars: int = 12_000,
        **kwargs: Any,
    ) -> None:
        if not steps:
            raise ValueError(f"dataset {replay.dataset.id}: no forecast steps selected")
        self.replay = replay
        self.setting: Setting = setting
        self.config = env or EnvConfig()
        self.fallback: Fallback = fallback
        self.max_result_chars = max_result_chars
        self._episodes: dict[str, Episode] = {}
        rows = [self._row(s) for s in steps]
        probe = self._episode(steps[0])
        tool_defs = [t.model_dump() for t in probe.tools.specs()]
        first, *rest = metric_list()
        rubric = vf.Rubric(funcs=[self._reward(first)], weights=[1.0])
        for metric in (*(self._reward(m) for m in rest if m.paired), self.usable):
            rubric.add_metric(metric)
        super().__init__(
            dataset=HFDataset.from_list(rows),
            tool_defs=tool_defs,
            rubric=rubric,
            # research turns, then the answer
            max_turns=self.config.max_tool_iterations + 1,
            **kwargs,
        )

    def _episode(self, step: StepSpec) -> Episode:
        return self.replay.episode(step, self.config, setting=self.setting)

    def _row(self, step: StepSpec) -> dict[str, Any]:
        messages = research_prompt(self._episode(step), action_mode="native")
        return {
            "prompt": [{"role": m.role, "content": m.content} for m in messages],
            "info": {
                "event_id": step.event_id,
                "step_index": step.step_index,
                "cutoff": step.cutoff.isoformat(),
            },
        }

    def _step(self, info: dict[str, Any]) -> StepSpec:
        return self.replay.step(info["event_id"], int(info["step_index"]))

    async def setup_state(self, state: vf.State) -> vf.State:
        self._episodes[state["trajectory_id"]] = self._episode(self._step(state["info"]))
        return state

    async def env_response(
        self, messages: vf.Messages, state: vf.State, **kwargs: Any
    ) -> vf.Messages:
        episode = self._episodes[state["trajectory_id"]]
        out: list[vf.ToolMessage] = []
        for call in messages[-1].tool_calls or []:
            try:
                arguments = json.loads(call.arguments or "{}")
                if not isinstance(arguments, dict):
                    raise ValueError("tool arguments are not a JSON object")
            except ValueError as exc:
                text = json.dumps({"error": f"{call.name}: invalid arguments: {exc}"})
            else:
                try:
                    text = await asyncio.to_thread(
                        episode.call_tool, call.name, arguments, max_chars=self.max_result_chars
                    )
                except BudgetExceeded:
                    text = BUDGET_SPENT
            out.append(vf.ToolMessage(role="tool", content=text, tool_call_id=call.id))
        return out

    @vf.stop  # type: ignore[untyped-decorator]  # verifiers ships no type hints
    async def answered(self, state: vf.State) -> bool:
        """A reply without tool calls is the final answer."""
        if not state["trajectory"]:
            return False
        last = state["trajectory"][-1]["completion"][-1]
        return last.role == "assistant" and not getattr(last, "tool_calls", None)

    @vf.cleanup  # type: ignore[untyped-decorator]
    async def record_episode(self, state: vf.State) -> None:
        """The episode's tool calls (results and exposed documents) go into the state."""
        episode = self._episodes.pop(state["trajectory_id"], None)
        if episode is not None:
            state["pastcast_episode"] = episode.record("forecast").model_dump(mode="json")

    # -- grading, after the rollout --

    def forecast_of(self, completion: vf.Messages, info: dict[str, Any]) -> Forecast:
        labels = self.replay.dataset.event(info["event_id"]).labels
        replies = [m for m in completion or [] if getattr(m, "role", None) == "assistant"]
        text = _content_text(replies[-1].content) if replies else ""
        return parse_forecast(text, labels)

    def scores_of(self, completion: vf.Messages, info: dict[str, Any]) -> dict[str, float]:
        """Every registered metric of the final answer (an unusable one scored by the fallback)."""
        grading = self.replay.grading(self._step(info))
        return step_scores(self.forecast_of(completion, info), grading, fallback=self.fallback)

    def _reward(self, metric: Metric) -> Callable[..., Awaitable[float]]:
        """``metric`` of the final answer turned so that more is better, named as a reward
        (``neg_brier``: the rubric reports a function by its name)."""

        async def reward(completion: vf.Messages, info: dict[str, Any]) -> float:
            return metric.as_reward(self.scores_of(completion, info)[metric.name])

        reward.__name__ = reward.__qualname__ = metric.reward_name
        return reward

    async def usable(self, completion: vf.Messages, info: dict[str, Any]) -> float:
        """1 when the final answer parses as a forecast (the format reward), else 0."""
        return float(self.forecast_of(completion, info).usable)


def load_environment(
    dataset: str = "world",
    corpus: str | None = None,
    retrieval: str = "bm25",
    embedder: str | None = None,
    split: str | None = None,
    max_events: int | None = None,
    setting: Setting = "memory_free",
    env: dict[str, Any] | None = None,
    fallback: Fallback = "uniform",
    max_result_chars: int = 12_000,
) -> PastcastEnv:
    """The environment over ``dataset``'s forecast steps (``world[:SEED][,FIELD=VALUE...]``, a
    dataset directory or a Forecast-Dojo release folder, with ``corpus`` searched by
    ``retrieval``), as ``verifiers.load_environment("pastcast.integrations.
    verifiers", ...)`` builds it. ``setting`` memory_free or no_tools (each row is played on
    its own); ``env`` the budgets (``EnvConfig`` fields)."""
    if setting not in ("memory_free", "no_tools"):
        raise ValueError(
            f"setting {setting!r}: choose memory_free or no_tools (each row is played on its own)"
        )
    replay = shared_replay(dataset, corpus, retrieval, embedder)
    return PastcastEnv(
        replay,
        replay.steps(split, max_events),
        setting=setting,
        env=EnvConfig.model_validate(env or {}),
        fallback=fallback,
        max_result_chars=max_result_chars,
    )
