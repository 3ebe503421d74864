"""The one error type: a lower layer's check names the field, and the layers above pass the same
error on (with its path extended where they handed down a sub-record), never a translation."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from pastcast.agents import agent_spec
from pastcast.app import read_runs
from pastcast.env import ToolError
from pastcast.errors import FieldError, within
from pastcast.runlog import read_step_columns
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import WorldConfig, build_world


def test_within_extends_the_path_of_the_same_error() -> None:
    raised = FieldError("model", "unknown provider")
    with pytest.raises(FieldError) as caught, within("agents[0]"):
        raise raised
    assert caught.value is raised
    assert (raised.field, raised.reason) == ("agents[0].model", "unknown provider")
    assert str(raised) == "agents[0].model: unknown provider"
    with pytest.raises(FieldError) as caught, within("agents"), within("[1]"):
        raise FieldError("", "no such agent")
    assert caught.value.field == "agents[1]"


def test_the_error_is_one_line_and_survives_pickling() -> None:
    exc = FieldError("budgets.python_tool", "must be\n  at least 0")
    assert str(exc) == "budgets.python_tool: must be at least 0"
    assert str(FieldError("", "the whole value")) == "the whole value"
    back = pickle.loads(pickle.dumps(ToolError("no such document", "doc_id")))
    assert type(back) is ToolError
    assert (back.field, back.reason) == ("doc_id", "no such document")


def test_a_lower_layer_error_reaches_the_application_layer_unchanged(tmp_path: Path) -> None:
    missing = tmp_path / "run.jsonl"
    with pytest.raises(FieldError) as lower:
        read_step_columns(missing)
    assert lower.value.field == ""  # the value it was handed, named by its caller
    with pytest.raises(FieldError) as app:
        read_runs([missing])
    assert type(app.value) is FieldError
    assert (app.value.field, app.value.reason) == ("run_logs", lower.value.reason)


def test_the_runner_names_the_setting_that_leaves_nothing_to_run(tmp_path: Path) -> None:
    world = build_world(0, WorldConfig(n_events=4, n_documents=40))
    config = RunConfig(agents=(agent_spec("uniform"),), split="no-such-split")
    with pytest.raises(FieldError) as caught:
        run_benchmark(world.dataset, None, config, tmp_path / "run.jsonl")
    assert caught.value.field == "split"
    assert not (tmp_path / "run.jsonl").exists()
