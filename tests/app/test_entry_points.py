"""Every entry point that opens a replay accepts the same dataset specs (a world spec with a
field, a dataset directory, a Forecast-Dojo release folder) and corpus specs (none, an index
directory): `pastcast run`, `pastcast plan`, `pastcast arena replay`, the Gymnasium
environment, the Inspect task and the verifiers environment."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from specs import CORPUS_CASES, DATASET_CASES, DatasetCase, Made
from typer.testing import CliRunner

from _plugins import ARENA_MISSING, plugin_command
from pastcast.cli import app

runner = CliRunner()


def _cli(args: list[str]) -> Any:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result


def _corpus_args(corpus: str | None) -> list[str]:
    return [] if corpus is None else ["--corpus", corpus]


def via_run(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    out = tmp / "run.jsonl"
    args = ["run", "--agent", "uniform", "--dataset", dataset, "--max-events", "1"]
    _cli([*args, *_corpus_args(corpus), "--out", str(out), "--json"])
    assert json.loads(out.with_name("run.header.json").read_text())["dataset_id"]


def via_plan(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    plan = tmp / "plan.json"
    body: dict[str, Any] = {"dataset": dataset, "agents": [{"name": "uniform"}], "max_events": 1}
    body["out"] = str(tmp / "plan-run" / "run.jsonl")
    if corpus is not None:
        body["corpus"] = {"spec": corpus}
    plan.write_text(json.dumps(body), encoding="utf-8")
    shown = json.loads(_cli(["plan", str(plan), "--json"]).stdout)
    assert shown["episodes"] >= 1
    _cli(["run", "--config", str(plan), "--json"])


def via_arena_replay(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    if not plugin_command("arena"):
        pytest.skip(ARENA_MISSING)
    args = ["arena", "replay", "--dataset", dataset, "--agent", "uniform", "--rounds", "1"]
    args += ["--markets", "1", "--out", str(tmp / "arena"), "--json"]
    assert json.loads(_cli([*args, *_corpus_args(corpus)]).stdout)["rounds"] == 1


def via_gymnasium(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    pytest.importorskip("gymnasium", reason="the gym extra is not installed")
    from pastcast.integrations.gym import ForecastGymEnv

    env = ForecastGymEnv(dataset, corpus=corpus, splits=(case.split,))
    obs, info = env.reset(seed=0)
    assert "Question:" in obs and info["event_id"]
    env.close()


def via_inspect(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    from pastcast.integrations.inspect import forecast

    task = forecast(dataset=dataset, corpus=corpus, agent="uniform", max_events=1)
    assert len(task.dataset) >= 1


def via_verifiers(dataset: str, corpus: str | None, case: DatasetCase, tmp: Path) -> None:
    pytest.importorskip("verifiers", reason="the verifiers extra is not installed")
    from pastcast.integrations.verifiers import load_environment

    env = load_environment(dataset=dataset, corpus=corpus, max_events=1)
    assert len(env.dataset) >= 1


ENTRY_POINTS: dict[str, Callable[[str, str | None, DatasetCase, Path], None]] = {
    "run": via_run,
    "plan": via_plan,
    "arena-replay": via_arena_replay,
    "gymnasium": via_gymnasium,
    "inspect": via_inspect,
    "verifiers": via_verifiers,
}


@pytest.mark.parametrize("corpus_case", CORPUS_CASES)
@pytest.mark.parametrize("case", DATASET_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_accepts_the_same_specs(
    made: Made, entry: str, case: DatasetCase, corpus_case: str, tmp_path: Path
) -> None:
    ENTRY_POINTS[entry](made.datasets[case.name], made.corpus(corpus_case), case, tmp_path)
