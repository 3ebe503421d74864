"""A synthetic dataset and corpus big enough for concurrency, and the agents run on them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from _tiny import ListBackend
from pastcast.agents import agent_spec
from pastcast.dataset import Dataset
from pastcast.records import DailyBelief, Document, Event, Resolution, StepSpec
from pastcast.runlog import AgentSpec, StepRecord

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def synthetic_dataset(n_events: int = 12, n_steps: int = 3, *, spacing_days: int = 6) -> Dataset:
    """Events resolving one after another (event i resolves ``spacing_days * (i + 1)`` days
    plus 40 after T0), every third one multi-outcome, each with ``n_steps`` forecast dates."""
    events, resolutions, beliefs, steps = [], {}, {}, []
    for i in range(n_events):
        multi = i % 3 == 2
        labels = ("Red", "Green", "Blue") if multi else ("Yes", "No")
        end = T0 + timedelta(days=40 + spacing_days * (i + 1))
        eid = f"ev-{i:03d}"
        events.append(
            Event(
                id=eid,
                title=f"Will project {i} reach its goal",
                kind="multi" if multi else "binary",
                labels=labels,
                open_time=T0,
                close_time=end,
                category=("science", "politics", "sports")[i % 3],
            )
        )
        resolutions[eid] = Resolution(event_id=eid, label=labels[i % len(labels)], resolved_at=end)
        beliefs[eid] = tuple(
            DailyBelief(
                event_id=eid,
                day=date(2024, 1, 1) + timedelta(days=d),
                probs={lb: 1 / len(labels) for lb in labels},
            )
            for d in range(0, 40, 5)
        )
        steps += [
            StepSpec(event_id=eid, step_index=k, cutoff=T0 + timedelta(days=10 * (k + 1)))
            for k in range(n_steps)
        ]
    return Dataset("synthetic-v1", tuple(events), resolutions, beliefs, tuple(steps))


def synthetic_backend(n_events: int = 12) -> ListBackend:
    docs = [
        Document(
            id=f"d-{i:03d}-{j}",
            timestamp=T0 + timedelta(days=3 + 9 * j),
            title=f"Project {i} update {j}",
            text=f"Project {i} goal progress report number {j}.",
        )
        for i in range(n_events)
        for j in range(5)
    ]
    return ListBackend(tuple(docs))


def model_agents(
    url: str, *, settings: tuple[str, ...] = ("memory_free", "memory_on"), timeout_s: float = 1.0
) -> tuple[AgentSpec, ...]:
    model = f"openai-compatible:scripted@{url}"
    options = {"timeout_s": timeout_s}
    return tuple(
        agent_spec("tool-agent", setting=s, label="scripted", model=model, model_options=options)  # type: ignore[arg-type]
        for s in settings
    )


def outcomes(steps: tuple[StepRecord, ...] | list[StepRecord]) -> dict[tuple, tuple]:  # type: ignore[type-arg]
    """What must not depend on how a run went: each step's forecast and scores."""
    return {
        s.key: (s.forecast.probs, s.forecast.usable, s.scores, s.episode.notebook_out)
        for s in steps
    }
