"""``ForecastGymEnv``: a forecast step as a Gymnasium episode with text actions (the JSON actions
of the tool agent) and text observations (what the agent is shown next). The outcome never
enters an observation: the reward and the final ``info`` are the only outcome feedback.
docs/training.md ("The Gymnasium environment")."""

from __future__ import annotations

import json
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces

from pastcast.agents import ToolAgent
from pastcast.app import shared_replay
from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.errors import FieldError
from pastcast.integrations.gym._policy import Ended, PolicyModel, PolicyRun
from pastcast.models import ChatRequest
from pastcast.records import Message, StepSpec
from pastcast.runner import grade_step
from pastcast.train import RewardMetric, SplitPolicy, StepRewards, chat_message, step_rewards

ENV_ID = "pastcast/Forecast-v0"
MAX_OBSERVATION = 1_000_000
"""Longest observation, in characters."""
MAX_ACTION = 32_768
"""Longest action, in characters (a JSON action, the final answer with a notebook)."""

_SAMPLED = "".join(chr(c) for c in range(32, 127)) + "\n"


class TextSpace(spaces.Text):
    """Any text up to ``max_length`` characters: prompts and documents hold any character, so
    membership is not limited to a character set. Samples are drawn from printable ASCII."""

    def __init__(self, max_length: int, *, min_length: int = 0) -> None:
        super().__init__(max_length, min_length=min_length, charset=_SAMPLED)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def _open(
    dataset: Dataset | str,
    backend: CorpusBackend | None,
    corpus: str | None,
    retrieval: str,
    embedder: str | None,
) -> tuple[Dataset, CorpusBackend | None]:
    if isinstance(dataset, Dataset):
        if corpus is not None:
            raise ValueError("corpus: a spec goes with a dataset spec; pass a Dataset's backend")
        return dataset, backend
    if backend is not None:
        raise ValueError("backend: goes with a Dataset; give a dataset spec a corpus spec")
    replay = shared_replay(dataset, corpus, retrieval, embedder)  # opened once per process
    return replay.dataset, replay.backend


class ForecastGymEnv(gymnasium.Env[str, str]):
    """Forecast steps of a dataset as episodes; text observations and actions.

    ``dataset``: a ``Dataset`` with its ``backend`` (None: no corpus), or a dataset spec as every
    command takes it with ``corpus`` searched by ``retrieval``; ``splits`` and ``force_eval`` are
    the exports' split guard (``SplitPolicy``). The other arguments: docs/training.md ("The
    Gymnasium environment").
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012  (Gymnasium's class attribute)

    def __init__(
        self,
        dataset: Dataset | str = "world",
        backend: CorpusBackend | None = None,
        *,
        corpus: str | None = None,
        retrieval: str = "bm25",
        embedder: str | None = None,
        splits: tuple[str, ...] | list[str] = ("train",),
        force_eval: bool = False,
        env_config: EnvConfig | None = None,
        max_turns: int = 20,
        reward: RewardMetric = "neg_brier",
        format_penalty: float = 1.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: expected None or 'ansi'")
        self.dataset, backend = _open(dataset, backend, corpus, retrieval, embedder)
        self.policy = SplitPolicy(splits=tuple(splits), force_eval=force_eval)
        self.steps: tuple[StepSpec, ...] = tuple(
            self.policy.select(
                self.dataset.steps,
                lambda s: self.dataset.splits.get(s.event_id, ""),
                f"dataset {self.dataset.id}",
            )[0]
        )
        self._env = ForecastEnv(self.dataset, backend, env_config or EnvConfig())
        self.max_turns = max_turns
        self.reward_metric: RewardMetric = reward
        self.format_penalty = format_penalty
        self.render_mode = render_mode
        self.observation_space = TextSpace(MAX_OBSERVATION)
        self.action_space = TextSpace(MAX_ACTION, min_length=1)
        self._run: PolicyRun | None = None
        self._step: StepSpec | None = None
        self._sent: tuple[Message, ...] = ()
        self._turn = 0
        self._last_obs = ""
        self.last_rewards: StepRewards | None = None

    # -- Gymnasium API --

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._stop()
        step = self._choose(options or {})
        episode = self._env.reset(step)
        model = PolicyModel()
        agent = ToolAgent(model, action_mode="json", max_iterations=self.max_turns)
        self._run = PolicyRun(agent, model, episode)
        self._step, self._sent, self._turn = step, (), 0
        self.last_rewards = None
        event = self._run.next_event()
        if isinstance(event, Ended):  # an agent that never asked (cannot happen with this one)
            raise RuntimeError(f"the agent ended step {step.event_id}#{step.step_index} at once")
        return self._observe(event), self._info(event)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._run is None or self._step is None:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        if not isinstance(action, str):
            raise TypeError(f"an action is text, not {type(action).__name__}")
        self._turn += 1
        self._sent = (*self._sent, Message(role="assistant", content=action))
        event = self._run.act(action)
        if isinstance(event, ChatRequest):
            return self._observe(event), 0.0, False, False, self._info(event)
        self._run = None
        rewards = step_rewards(
            event.forecast, grade_step(self.dataset, self._step), format_penalty=self.format_penalty
        )
        self.last_rewards = rewards
        self._last_obs = ""
        truncated = event.termination in ("tool_budget", "model_budget")
        info = self._base_info() | {
            "forecast": dict(event.forecast.probs),
            "usable": not rewards.fallback_used,
            "failure_reason": event.forecast.failure_reason,
            "termination": event.termination,
            "rewards": rewards.model_dump(),
        }
        reward = rewards.reward(self.reward_metric) or 0.0
        return "", reward, not truncated, truncated, info

    def render(self) -> str | None:
        return self._last_obs if self.render_mode == "ansi" else None

    def close(self) -> None:
        self._stop()
        super().close()

    # -- internals --

    def _choose(self, options: dict[str, Any]) -> StepSpec:
        if "event_id" in options:
            event_id, index = options["event_id"], int(options.get("step_index", 0))
            found = next(
                (s for s in self.steps if (s.event_id, s.step_index) == (event_id, index)), None
            )
            if found is None:
                raise FieldError(
                    "",
                    f"options: no admitted step {event_id}#{index} in "
                    f"{self.dataset.id} (splits {', '.join(self.policy.splits)})",
                )
            return found
        return self.steps[int(self.np_random.integers(len(self.steps)))]

    def _stop(self) -> None:
        if self._run is not None:
            self._run.stop()
            self._run = None

    def _observe(self, request: ChatRequest) -> str:
        """The messages the agent sends that the policy has not seen: after its own reply, the
        tool result or a request; for a conversation the agent starts anew, all of it."""
        sent = request.messages
        fresh = sent[len(self._sent) :] if sent[: len(self._sent)] == self._sent else sent
        self._sent = sent
        self._last_obs = "\n\n".join(m.content for m in fresh)
        return self._last_obs

    def _base_info(self) -> dict[str, Any]:
        assert self._step is not None
        event = self.dataset.event(self._step.event_id)
        return {
            "event_id": self._step.event_id,
            "step_index": self._step.step_index,
            "cutoff": self._step.cutoff.isoformat(),
            "labels": list(event.labels),
            "turn": self._turn,
        }

    def _info(self, request: ChatRequest) -> dict[str, Any]:
        schema = request.response_schema
        return self._base_info() | {
            "messages": [chat_message(m).model_dump(mode="json") for m in request.messages],
            "response_schema": "" if schema is None else json.dumps(schema),
        }


def register_env() -> None:
    """Register ``ENV_ID`` with Gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="pastcast.integrations.gym._env:ForecastGymEnv",
            disable_env_checker=False,
        )
