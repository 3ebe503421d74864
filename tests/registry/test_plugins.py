"""A third-party plugin installed as a distribution: its agent, source, schedule, provider and
prompt are found through entry points, with no change to pastcast."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _plugins import install_plugin
from pastcast.agents import (
    agent_spec,
    agents,
    build_agent,
    list_agents,
    load_prompt,
    prompt_registry,
    prompts_for,
)
from pastcast.cli import app
from pastcast.corpus.sources import open_source, sources
from pastcast.markets import make_schedule, schedules
from pastcast.models import providers, resolve_model
from pastcast.registry import RegistryError

runner = CliRunner()

PLUGIN = '''
from datetime import UTC, datetime

from pastcast.records import Document, Forecast


class SureAgent:
    def __init__(self, yes: float) -> None:
        self.yes = yes

    def forecast(self, episode):
        labels = episode.question.labels
        rest = (1.0 - self.yes) / (len(labels) - 1)
        return Forecast(probs={lb: self.yes if i == 0 else rest for i, lb in enumerate(labels)})


def sure_agent(yes: float = 0.9) -> SureAgent:
    """Puts most weight on the first outcome (a plugin agent)."""
    return SureAgent(yes)


def lines_source(path, *, prefix: str = "line"):
    """One document a line of a text file (a plugin source)."""
    for i, line in enumerate(path.read_text().splitlines()):
        yield Document(id=f"{prefix}-{i}", timestamp=datetime(2024, 3, 1, tzinfo=UTC),
                       title=line, text=line)


def every_step(**options):
    from pastcast.markets import LookbackSchedule
    return LookbackSchedule(fractions=(0.5,))


def echo_provider(rest: str):
    from pastcast.models import ScriptedModel
    return ScriptedModel(responder=lambda r: rest, name=f"echo:{rest}")


def short_prompt() -> str:
    return "[system]\\nBe brief.\\n[user]\\n{title}\\n"
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    target = "tests_pastcast_plugin.core"
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="pastcast-test-plugin",
        modules={target: PLUGIN},
        entry_points={
            "pastcast.agents": {"thirdparty-sure": f"{target}:sure_agent"},
            "pastcast.sources": {"thirdparty-lines": f"{target}:lines_source"},
            "pastcast.schedules": {"thirdparty-half": f"{target}:every_step"},
            "pastcast.model_providers": {"thirdparty-echo": f"{target}:echo_provider"},
            "pastcast.prompts": {"thirdparty_short.v1": f"{target}:short_prompt"},
        },
    )
    registries = (agents, sources, schedules, providers, prompt_registry)
    for reg in registries:
        reg.reload_plugins()
    yield
    monkeypatch.undo()
    for reg in registries:
        reg.reload_plugins()


def test_plugin_agent_is_listed_and_built(plugin: None) -> None:
    listed = runner.invoke(app, ["agents", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "thirdparty-sure")
    assert row["args"] == ["yes=0.9"] and row["role"] == "agent"
    assert row["description"].startswith("Puts most weight")
    assert "thirdparty-sure" in [a.name for a in list_agents()]
    spec = agent_spec("thirdparty-sure", yes=0.8)
    assert build_agent(spec).yes == 0.8  # type: ignore[attr-defined]
    assert prompts_for([spec]) == {}
    with pytest.raises(RegistryError, match=r"'no'.*accepted arguments: yes"):
        agent_spec("thirdparty-sure", no=0.1)


def test_plugin_source_schedule_provider_and_prompt(plugin: None, tmp_path: Path) -> None:
    text = tmp_path / "news.txt"
    text.write_text("rocket launch\nmayor race\n")
    run = open_source("thirdparty-lines", text, prefix="n")
    assert [d.id for d in run.documents] == ["n-0", "n-1"]
    out = tmp_path / "index"
    built = runner.invoke(app, ["corpus", "build", f"thirdparty-lines:{text}", "--out", str(out)])
    assert built.exit_code == 0 and "indexed 2 documents" in built.output, built.output
    assert make_schedule("thirdparty-half").fractions == (0.5,)  # type: ignore[attr-defined]
    assert resolve_model("thirdparty-echo:hi").name == "echo:hi"
    assert load_prompt("thirdparty_short").id == "thirdparty_short.v1"


def test_an_uninstalled_plugin_is_gone(plugin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "thirdparty-sure" in agents.names()
    monkeypatch.undo()
    agents.reload_plugins()
    assert "thirdparty-sure" not in agents.names()
