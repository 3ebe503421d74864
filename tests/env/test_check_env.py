"""check_env: passes on the real environment, and each check catches a deliberately broken one."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from _tiny import T0, ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.corpus import SearchFilter, SearchHit
from pastcast.dataset import Dataset
from pastcast.env import EnvCheckError, EnvConfig, Episode, ForecastEnv, check_env
from pastcast.records import Document, StepSpec
from pastcast.runner import check_deterministic

STEP = StepSpec(event_id="ev-rocket", step_index=0, cutoff=T0 + timedelta(days=5))
FAR = datetime(9999, 1, 1, tzinfo=T0.tzinfo)


def _env(cls: type[ForecastEnv] = ForecastEnv, backend: Any = None, **cfg: Any) -> ForecastEnv:
    return cls(tiny_dataset(), backend or ListBackend(tiny_documents()), EnvConfig(**cfg))


def _problems(env: ForecastEnv, **kw: Any) -> list[str]:
    with pytest.raises(EnvCheckError) as err:
        check_env(env, STEP, **kw)
    assert str(err.value).startswith("check_env on step ev-rocket#0: ")
    return list(err.value.report.problems)


def test_the_environment_passes(tmp_path: Path) -> None:
    report = check_env(_env(), STEP)
    assert report.ok and report.problems == ()
    assert len(report.passed) == 7 and "deterministic runs" not in report.passed
    runs = check_deterministic(_env(), STEP, agent_spec("heuristic"), workdir=tmp_path)
    assert runs.ok and runs.passed == ("deterministic runs",)
    assert (tmp_path / "first.jsonl").is_file() and (tmp_path / "second.jsonl").is_file()
    assert check_env(_env(market_access=True), STEP).ok
    assert check_env(ForecastEnv(tiny_dataset(), None), STEP).ok  # the no-tools setting


class NoCutoffBackend(ListBackend):
    """Searches the whole archive, whatever the cutoff."""

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        return super().search(query, as_of=FAR, k=k, filters=filters)


def test_search_ignoring_the_cutoff_is_caught() -> None:
    problems = _problems(_env(backend=NoCutoffBackend(tiny_documents())))
    assert any(p.startswith("search before the cutoff: search ") for p in problems), problems
    assert any("'canary-rocket' dated 2024-03-22" in p for p in problems), problems


class LeakyQuestionEnv(ForecastEnv):
    """Puts the resolution in the question's description."""

    def reset(self, step: StepSpec, **kw: Any) -> Episode:
        ep = super().reset(step, **kw)
        label = self.dataset.resolutions[step.event_id].label
        ep.question = ep.question.model_copy(update={"description": f"(resolved {label})"})
        return ep


class HoldsTheDatasetEnv(ForecastEnv):
    """Hands the agent the dataset, resolutions included."""

    def reset(self, step: StepSpec, **kw: Any) -> Episode:
        ep = super().reset(step, **kw)
        ep.answers = self.dataset  # type: ignore[attr-defined]
        return ep


def test_a_leak_into_the_episode_is_caught() -> None:
    problems = _problems(_env(LeakyQuestionEnv))
    assert problems == [
        "question from the event alone: question field 'description' differs from the "
        "event's ('(resolved Yes)')"
    ]
    problems = _problems(_env(HoldsTheDatasetEnv))
    assert problems == ["question from the event alone: episode.answers holds a Dataset"]


class NoGuardEnv(ForecastEnv):
    """Forgets the resolutions while building episodes, so no step is refused."""

    def reset(self, step: StepSpec, **kw: Any) -> Episode:
        saved = self.dataset
        self.dataset = Dataset(saved.id, saved.events, {}, saved.beliefs, saved.steps)
        try:
            return super().reset(step, **kw)
        finally:
            self.dataset = saved


def test_a_step_at_resolution_accepted_is_caught() -> None:
    problems = _problems(_env(NoGuardEnv))
    assert problems[0].startswith(
        "steps at resolution refused: reset accepted a step at 2024-03-21T00:00:00+00:00"
    )


class ShowsEverythingEnv(ForecastEnv):
    """A toolbox that lets every id be read, shown or not."""

    def reset(self, step: StepSpec, **kw: Any) -> Episode:
        ep = super().reset(step, **kw)

        class Everything(set[str]):
            def __contains__(self, item: object) -> bool:
                return True

        ep.tools._shown = Everything()
        return ep


def test_reading_unshown_ids_is_caught() -> None:
    problems = _problems(_env(ShowsEverythingEnv))
    assert problems == [
        "read refuses unshown ids: read returned 'd1', which no tool had shown in this step"
    ]


class OwnConfigEnv(ForecastEnv):
    """Ignores the per-step config: the run's budgets and settings apply to every step."""

    def reset(self, step: StepSpec, *, config: EnvConfig | None = None, **kw: Any) -> Episode:
        return super().reset(step, **kw)


def test_budgets_and_market_access_are_checked() -> None:
    problems = _problems(_env(OwnConfigEnv))
    assert problems == [
        "budgets enforced: a tool call after max_tool_calls=2 was not refused as over budget",
        "budgets enforced: a model call after max_model_calls=1 was not refused",
    ]
    problems = _problems(_env(OwnConfigEnv, market_access=True))
    assert "market only with access: the market tool is offered without market access" in problems
    assert "market only with access: market_history answered without market access" in problems


class LateMarketEnv(ForecastEnv):
    """Shows the market's belief of the cutoff's own day, which has not ended yet."""

    def reset(self, step: StepSpec, **kw: Any) -> Episode:
        ep = super().reset(step, **kw)
        if ep.tools._market is not None:
            ep.tools._market = self.dataset.beliefs[step.event_id][:6]
        return ep


def test_market_days_not_ended_are_caught() -> None:
    problems = _problems(_env(LateMarketEnv))
    assert problems == [
        "market only with access: market_history showed day 2024-03-06, which had not ended "
        "before the cutoff and the resolution"
    ]


class ShufflingBackend(ListBackend):
    """Ranks documents with equal scores in a random order."""

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        hits = super().search(query, as_of=as_of, k=k, filters=filters)
        random.shuffle(hits)
        return hits


@pytest.fixture
def seeded() -> Iterator[None]:
    state = random.getstate()
    random.seed(3)
    yield
    random.setstate(state)


def test_a_nondeterministic_run_is_caught(tmp_path: Path, seeded: None) -> None:
    docs = tiny_documents() + tuple(
        Document(id=f"x{i}", timestamp=T0 + timedelta(days=1), title="Zephyr", text="Zephyr")
        for i in range(6)
    )
    env = _env(backend=ShufflingBackend(docs))
    with pytest.raises(EnvCheckError) as err:
        check_deterministic(env, STEP, agent_spec("heuristic"), workdir=tmp_path)
    assert str(err.value).startswith("check_env on step ev-rocket#0: ")
    problems = list(err.value.report.problems)
    assert problems and all(p.startswith("deterministic runs: step ev-rocket#") for p in problems)
    assert "differs between two identical runs at .episode.tool_calls[0]." in problems[0]


def test_a_report_without_raising() -> None:
    report = check_env(_env(LeakyQuestionEnv), STEP, strict=False)
    assert not report.ok and len(report.problems) == 1
    assert "reset binds the step" in report.passed
