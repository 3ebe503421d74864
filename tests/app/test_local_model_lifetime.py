"""A plan run from Python with a local llama.cpp model leaves no server process behind: the run
path owns its models' lifetime, as the CLI always did."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from pastcast.dataset import save_dataset
from pastcast.errors import FieldError
from pastcast.models import ModelError, packaged_models
from pastcast.runner import ExperimentPlan
from pastcast.world import world_from_spec

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(600)]

MODEL = "local:smollm2"


def _needs_the_local_model() -> None:
    for module, extra in (("openai", "llm"), ("llama_cpp", "local")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (extra {extra!r})")
    try:
        packaged_models.build(MODEL.removeprefix("local:"))
    except (ModelError, FieldError) as exc:
        pytest.skip(str(exc))


def llama_servers() -> list[int]:
    """Processes started by this one that run a llama.cpp server."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == me and b"llama_cpp.server" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_plan_with_a_local_model_stops_its_server(tmp_path: Path) -> None:
    _needs_the_local_model()
    from pastcast.app import run_plan

    world = world_from_spec("world:0,n_events=2,n_documents=60").dataset
    save_dataset(world.with_steps(world.steps[:1]), tmp_path / "one-step")  # one model call
    plan = ExperimentPlan.model_validate(
        {
            "dataset": str(tmp_path / "one-step"),
            "out": str(tmp_path / "run.jsonl"),
            "agents": [
                {
                    "name": "no-tools",
                    "args": {
                        "model": MODEL,
                        "model_options": {"n_ctx": 2048, "n_threads": 2, "timeout_s": 300},
                        "temperature": 0.0,
                        "max_tokens": 16,
                    },
                }
            ],
        }
    )
    assert llama_servers() == []
    result = run_plan(plan, progress=False)
    assert result.written >= 1
    assert llama_servers() == []  # the run stopped the server it started
