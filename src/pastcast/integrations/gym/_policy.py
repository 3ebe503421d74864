"""The policy as the agent's model: the tool agent runs its own loop in a thread and each of its
model calls waits for the next action.

So the environment reuses the JSON-action tool agent whole (prompts, action parsing, tool
budgets, the final answer and its one repair, the notebook), and ``Episode.chat`` records the
transcript as in any run. Only one side runs at a time: the agent thread blocks in ``chat``
until ``step`` hands it an action, and ``step`` blocks until the agent asks again or ends.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

from pastcast.agents import Agent
from pastcast.env import Episode
from pastcast.models import ChatRequest, ChatResponse
from pastcast.records import Forecast, Termination
from pastcast.runner import play_episode


class _Stopped(BaseException):
    """Ends an agent thread whose episode was abandoned (a reset or close mid-episode). A
    BaseException, so that no agent's ``except Exception`` takes it for a model error."""


@dataclass(frozen=True)
class Ended:
    forecast: Forecast
    termination: Termination
    error: str | None


class PolicyModel:
    """A ``Model`` whose replies are the environment's actions."""

    name = "gym:policy"

    def __init__(self) -> None:
        self.events: queue.Queue[ChatRequest | Ended | None] = queue.Queue()
        """What the agent thread tells the environment: a request, its end, or None (stopped)."""
        self._replies: queue.Queue[str | None] = queue.Queue()

    def chat(self, request: ChatRequest) -> ChatResponse:
        self.events.put(request)
        reply = self._replies.get()
        if reply is None:
            raise _Stopped
        return ChatResponse(content=reply, model=self.name, finish_reason="stop")

    def answer(self, action: str | None) -> None:
        self._replies.put(action)


class PolicyRun:
    """One episode of ``agent`` (built on a ``PolicyModel``) in its thread."""

    def __init__(self, agent: Agent, model: PolicyModel, episode: Episode) -> None:
        self.episode = episode
        self._model = model
        self._events = model.events
        self._thread = threading.Thread(target=self._play, args=(agent,), daemon=True)
        self._thread.start()

    def _play(self, agent: Agent) -> None:
        outcome: Ended | None = None
        try:
            forecast, record = play_episode(agent, self.episode)
            outcome = Ended(forecast, record.termination, record.error)
        except _Stopped:
            pass
        finally:
            self._events.put(outcome)

    def next_event(self) -> ChatRequest | Ended:
        """The agent's next request, or how its episode ended."""
        event = self._events.get()
        if event is None:
            raise RuntimeError("the agent's episode was stopped")
        return event

    def act(self, action: str) -> ChatRequest | Ended:
        self._model.answer(action)
        return self.next_event()

    def stop(self) -> None:
        """End the thread, waiting in ``chat`` or not (idempotent)."""
        if self._thread.is_alive():
            self._model.answer(None)
            self._thread.join()
