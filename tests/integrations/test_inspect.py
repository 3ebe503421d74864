"""pastcast inside Inspect: `inspect eval pastcast/forecast` with Inspect's mock model runs
offline on the embedded world, its solver researches with the cutoff-bound tools, its scorer
gives pastcast's scores, and `pastcast import inspect-log` turns the log into a run log that
`pastcast score` reads."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from _plugins import install_plugin
from pastcast.app import shared_replay as open_replay
from pastcast.cli import app
from pastcast.env import TOOLS
from pastcast.records import EpisodeRecord, Forecast
from pastcast.runlog import read_run_log
from pastcast.scoring import score_forecast

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
    from inspect_ai.tool import ToolChoice, ToolInfo

# Found, not imported: Inspect (and pastcast's integration, which imports it) is imported by the
# tests and fixtures that use it, so collecting this module stays cheap.
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("could not import 'inspect_ai'", allow_module_level=True)

runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"


class ScriptedResearcher:
    """Inspect mock-model outputs: search, read the first hit, then answer (native tools)."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.labels = labels
        self.tools_seen: list[list[ToolInfo]] = []

    def __call__(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        from inspect_ai.model import ChatMessageTool, ModelOutput

        self.tools_seen.append(tools)
        results = [m for m in input if isinstance(m, ChatMessageTool)]
        if not results:
            return ModelOutput.for_tool_call(
                "mockllm/model", "search", {"query": "election poll", "top_k": 3}
            )
        if len(results) == 1:
            hits = json.loads(results[0].text)
            return ModelOutput.for_tool_call("mockllm/model", "read", {"doc_id": hits[0]["id"]})
        probs = {label: round(1 / len(self.labels), 3) for label in self.labels}
        probs[self.labels[0]] += 0.1
        probs[self.labels[-1]] -= 0.1
        answer = {"probabilities": probs, "rationale": "scripted"}
        return ModelOutput.from_content(
            "mockllm/model", f"Done.\n```json\n{json.dumps(answer)}\n```"
        )


@pytest.fixture(scope="module")
def world_labels() -> tuple[str, ...]:
    replay = open_replay("world")
    first = replay.steps(max_events=1)[0]
    return replay.dataset.event(first.event_id).labels


@pytest.fixture(scope="module")
def scripted(world_labels: tuple[str, ...], tmp_path_factory: pytest.TempPathFactory) -> Any:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from pastcast.integrations.inspect import forecast

    script = ScriptedResearcher(world_labels)
    logs = inspect_eval(
        forecast(dataset="world", max_events=1),
        model=get_model("mockllm/model", custom_outputs=script),
        log_dir=str(tmp_path_factory.mktemp("inspect-logs")),
        display="none",
        limit=2,
    )
    return logs[0], script


def test_the_solver_researches_with_cutoff_bound_tools(scripted: Any) -> None:
    from inspect_ai.log import EvalLog

    from pastcast.integrations.inspect._task import STORE_KEY

    log, script = scripted
    assert isinstance(log, EvalLog) and log.status == "success"
    replay = open_replay("world")
    assert log.samples and len(log.samples) == 2
    offered = {t.name: t for t in TOOLS}
    for tools in script.tools_seen[:1]:
        # The tools the model is offered are pastcast's definitions, schemas included.
        assert [t.name for t in tools] == ["search", "read"]
        for t in tools:
            assert t.parameters.model_dump(exclude_none=True)["properties"].keys() == (
                offered[t.name].parameters["properties"].keys()
            )
            assert t.description == offered[t.name].description
    for sample in log.samples:
        stored = sample.store[STORE_KEY]
        episode = EpisodeRecord.model_validate(stored["episode"])
        step = replay.step(sample.metadata["event_id"], sample.metadata["step_index"])
        assert [c.name for c in episode.tool_calls] == ["search", "read"]
        exposed = {d for c in episode.tool_calls for d in c.doc_ids}
        assert exposed
        for doc_id in exposed:  # nothing published at or after the cutoff reached the model
            assert replay.backend is not None
            assert replay.backend.read(doc_id, as_of=step.cutoff).timestamp < step.cutoff
        # Every call Inspect made went through the episode, which recorded it exactly.
        inspect_calls = [e for e in sample.events if type(e).__name__ == "ModelEvent"]
        assert len(inspect_calls) == len(episode.model_calls) == 3
        assert episode.tool_calls[0].result == sample.messages[3].text  # what the model read


def test_the_scorer_gives_pastcast_scores(scripted: Any, world_labels: tuple[str, ...]) -> None:
    from pastcast.integrations.inspect._task import STORE_KEY

    log, _ = scripted
    replay = open_replay("world")
    for sample in log.samples:
        fc = Forecast.model_validate(sample.store[STORE_KEY]["forecast"])
        assert fc.usable and set(fc.probs) == set(world_labels)
        step = replay.step(sample.metadata["event_id"], sample.metadata["step_index"])
        expected = score_forecast(fc, replay.grading(step))
        (score,) = sample.scores.values()
        assert score.value["brier"] == pytest.approx(expected.brier)
        assert score.value["log_loss"] == pytest.approx(expected.log_loss)
        assert score.metadata["grading"]["truth"] == replay.grading(step).truth
    names = {s.name for s in log.results.scores}
    assert {"brier", "log_loss", "accuracy", "usable"} <= names


def test_samples_carry_no_outcome(world_labels: tuple[str, ...]) -> None:
    from pastcast.integrations.inspect import forecast

    task = forecast(dataset="world", max_events=3)
    replay = open_replay("world")
    for sample in task.dataset:
        assert set(sample.metadata) == {"event_id", "step_index", "cutoff", "split", "category"}
        assert not sample.target
        truth = replay.dataset.resolutions[sample.metadata["event_id"]]
        assert truth.resolved_at.isoformat() not in str(sample.input)


def test_the_log_converts_to_a_run_log_that_score_reads(scripted: Any, tmp_path: Path) -> None:
    from pastcast.integrations.inspect import import_inspect_log
    from pastcast.integrations.inspect._task import STORE_KEY

    log, _ = scripted
    out = tmp_path / "run.jsonl"
    result = runner.invoke(app, ["import", "inspect-log", log.location, "--out", str(out)])
    assert result.exit_code == 0, result.output
    run = read_run_log(out)
    assert len(run.steps) == 2 and run.header.dataset_id == "world-v2:seed=0"
    assert run.header.agents[0].args["model"] == "inspect:mockllm/model"
    assert run.header.prompts and run.header.corpus is not None
    for step, sample in zip(run.steps, log.samples, strict=True):
        assert step.episode.model_dump(mode="json") == sample.store[STORE_KEY]["episode"]
        (score,) = sample.scores.values()
        assert step.scores.brier == pytest.approx(score.value["brier"])
    scored = runner.invoke(app, ["score", str(out), "--json", "--bootstrap", "20"])
    assert scored.exit_code == 0, scored.output
    (group,) = json.loads(scored.stdout)["groups"]
    assert group["n_recorded"] == 2 and group["n_failures"] == 0
    mean_brier = sum(s.scores.brier for s in run.steps) / 2
    assert group["metrics"]["brier"]["mean"] == pytest.approx(mean_brier)
    again = import_inspect_log(log.location, out)  # appending the same steps adds none
    assert again.written == 0


def test_import_refuses_what_is_not_a_pastcast_log(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["import", "inspect-log", str(tmp_path / "nope.eval")])
    assert missing.exit_code == 2 and "no such Inspect log" in missing.stderr
    junk = tmp_path / "junk.eval"
    junk.write_text("not a log")
    bad = runner.invoke(app, ["import", "inspect-log", str(junk)])
    assert bad.exit_code == 2 and str(junk) in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_memory_on_is_refused_in_one_line() -> None:
    from pastcast.integrations.inspect import forecast

    with pytest.raises(ValueError, match="memory_free or no_tools"):
        forecast(dataset="world", setting="memory_on")
    with pytest.raises(ValueError, match="env: field max_tool_calls"):
        forecast(dataset="world", env={"max_tool_calls": -1})


def test_the_packaged_o200k_file_is_what_tiktoken_expects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pastcast.integrations.inspect import seed_tiktoken_cache
    from pastcast.integrations.inspect._tokens import O200K_SHA256, tiktoken_cache_path

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    path = seed_tiktoken_cache()
    assert path == tiktoken_cache_path() and path is not None and path.parent == tmp_path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == O200K_SHA256
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's "no cache": nothing to seed
    assert seed_tiktoken_cache() is None


def _entry_point_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The subprocess environment: this checkout's sources, an empty tiktoken cache, and
    Inspect's entry point for pastcast (declared by an installed pastcast; for a checkout run
    against another install, by a stand-in distribution declaring the same entry point)."""
    path = [str(SRC)]
    if not entry_points(group="inspect_ai", name="pastcast"):
        root = tmp_path / "eps"
        root.mkdir()
        install_plugin(
            root,
            monkeypatch,
            dist="pastcast_entry_point",
            modules={},
            entry_points={"inspect_ai": {"pastcast": "pastcast.integrations.inspect"}},
        )
        path.append(str(root))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")])
    env["TIKTOKEN_CACHE_DIR"] = str(tmp_path / "tiktoken")
    return env


def test_inspect_eval_with_the_mock_model_runs_offline_and_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    cmd = [
        *(sys.executable, "-m", "inspect_ai", "eval", "pastcast/forecast"),
        *("-T", "dataset=world", "-T", "max_events=1", "--limit", "2"),
        *("--model", "mockllm/model", "--log-dir", str(logs), "--display", "none"),
    ]
    env = _entry_point_env(tmp_path, monkeypatch)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (log_file,) = logs.glob("*.eval")
    # The mock model's default reply is no forecast: scored by the fallback, still a run log.
    out = tmp_path / "run" / "run.jsonl"
    converted = runner.invoke(app, ["import", "inspect-log", str(log_file), "--out", str(out)])
    assert converted.exit_code == 0, converted.output
    steps = read_run_log(out).steps
    assert len(steps) == 2
    assert all(s.forecast.failure_reason == "no_answer_block" for s in steps)
    assert all(s.scores.fallback_used for s in steps)
    scored = runner.invoke(app, ["score", str(out), "--json", "--bootstrap", "20"])
    assert scored.exit_code == 0, scored.output
    (group,) = json.loads(scored.stdout)["groups"]
    assert group["n_recorded"] == 2 and group["n_failures"] == 2


def test_the_inspect_provider_outside_an_evaluation_is_a_one_line_error() -> None:
    from pastcast.models import ChatRequest, ModelError, resolve_model
    from pastcast.records import Message

    model = resolve_model("inspect:mockllm/model")
    assert model.name == "inspect:mockllm/model"
    with pytest.raises(ModelError, match="inside an Inspect evaluation"):
        model.chat(ChatRequest(messages=(Message(role="user", content="hi"),)))
    with pytest.raises(ValueError, match="Inspect's"):
        resolve_model("inspect:mockllm/model", temperature=0.1)
