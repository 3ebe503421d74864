"""A third-party plugin installed as a distribution: its agent, source, schedule, provider and
prompt, its command group and its report sections are found through entry points, with no change
to pastcast (the arena joins the CLI and the reports this way)."""

from __future__ import annotations

import json
import sys
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
from pastcast.cli._app import plugin_commands
from pastcast.corpus.sources import open_source, sources
from pastcast.errors import FieldError
from pastcast.markets import make_schedule, schedules
from pastcast.models import providers, resolve_model

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
    with pytest.raises(FieldError, match=r"'no'.*accepted arguments: yes"):
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


ADDITIONS = """
import typer

from pastcast.reports import TextTable
from pastcast.reports.html import ReportSection


group = typer.Typer(help="Greets from a plugin: a command group of an installed distribution.")


@group.command("hello")
def hello(name: str = typer.Option("world", help="Who is greeted.")) -> None:
    \"\"\"Say hello.\"\"\"
    typer.echo(f"hello {name}")


def sections(run_logs, folder):
    \"\"\"Counts the run logs, and names the folder it was given.\"\"\"
    rows = ((str(len(run_logs)), str(folder)),)
    table = TextTable("Seen", ("logs", "folder"), rows, 1, 1)
    return (ReportSection("Third party", "From a plugin.", (table,), (), "thirdparty"),)
"""


@pytest.fixture
def additions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from pastcast.app import report_sections

    target = "tests_pastcast_additions.more"
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="pastcast-test-additions",
        modules={target: ADDITIONS},
        entry_points={
            "pastcast.commands": {
                "thirdparty": f"{target}:group",
                "thirdparty-broken": "tests_pastcast_additions.missing:group",
                "run": f"{target}:group",  # a core command's name stays the core's
            },
            "pastcast.report_sections": {"thirdparty": f"{target}:sections"},
        },
        summary="Greets from a plugin: a command group of an installed distribution.",
    )
    plugin_commands.cache_clear()
    report_sections.reload_plugins()
    for name in [m for m in sys.modules if m.startswith("tests_pastcast_additions")]:
        del sys.modules[name]  # imported by an earlier test
    yield
    monkeypatch.undo()
    plugin_commands.cache_clear()
    report_sections.reload_plugins()


def test_a_plugin_command_group_runs_and_is_listed(additions: None) -> None:
    listed = runner.invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert listed.exit_code == 0, listed.output
    # listed by its distribution's summary: a plugin that does not load lists alike, importing
    # nothing, and says so in one line when it runs
    assert listed.stdout.count("Greets from a plugin: a command group") == 2
    assert not [m for m in sys.modules if m.startswith("tests_pastcast_additions")]
    ran = runner.invoke(app, ["thirdparty", "hello", "--name", "you"])
    assert ran.exit_code == 0 and ran.stdout == "hello you\n", ran.output
    broken = runner.invoke(app, ["thirdparty-broken", "hello"])
    assert broken.exit_code == 2 and broken.stderr.splitlines() == [
        "error: 'thirdparty-broken' comes from pastcast-test-additions, which cannot be imported"
        " (No module named 'tests_pastcast_additions.missing'): pip install"
        " pastcast-test-additions"
    ], broken.stderr
    assert "Run agents over a dataset" in listed.stdout  # `run` is the core's still
    assert {"thirdparty", "thirdparty-broken"} <= set(plugin_commands())
    assert "run" not in plugin_commands()


def test_an_uninstalled_plugin_command_is_gone(
    additions: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()
    plugin_commands.cache_clear()
    gone = runner.invoke(app, ["thirdparty", "hello"])
    assert gone.exit_code == 2 and "No such command 'thirdparty'" in gone.output


def test_the_arena_command_without_its_distribution_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pastcast.cli import _app

    monkeypatch.setattr(_app, "plugin_commands", lambda: {})  # as where it is not installed
    gone = runner.invoke(app, ["arena", "replay", "--help"])
    assert gone.exit_code == 2 and gone.stderr.splitlines() == [
        "error: No such command 'arena': it comes from the arena's distribution (arena/ in"
        " pastcast's repository): pip install -e arena"
    ], gone.stderr


def test_a_plugin_adds_report_sections(additions: None, tmp_path: Path) -> None:
    pytest.importorskip("jinja2", reason="the report needs the reports extra")
    from _tiny import ListBackend, tiny_dataset, tiny_documents
    from pastcast.app import report_runs
    from pastcast.errors import FieldError
    from pastcast.runner import RunConfig, run_benchmark

    log = tmp_path / "run" / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, log, progress=False)
    made = report_runs([log], tmp_path / "report", figures=["reliability"], bootstrap=0)
    html = made.written.html.read_text()
    assert 'id="section-thirdparty"' in html and ">None</td>" in html
    again = report_runs(
        [log], tmp_path / "again", figures=["reliability"], bootstrap=0,
        sections={"thirdparty": tmp_path / "given"},
    )  # fmt: skip
    assert str(tmp_path / "given") in again.written.html.read_text()
    with pytest.raises(FieldError) as err:
        report_runs([log], tmp_path / "x", bootstrap=0, sections={"nosuch": tmp_path})
    assert err.value.field == "nosuch" and "thirdparty" in err.value.reason
