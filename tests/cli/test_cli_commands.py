"""The CLI: every command and option documented; bad arguments give one-line errors and exit 2
before any work; a failed run exits 1; `run` mirrors RunConfig and EnvConfig."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import pastcast
from _tiny import tiny_dataset
from pastcast.app import _runs as app_runs
from pastcast.cli import _run as cli_run
from pastcast.cli import app
from pastcast.dataset import save_dataset
from pastcast.env import EnvConfig
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig

runner = CliRunner()


def _walk(cmd: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        out.append(((*prefix, name), sub))
        out.extend(_walk(sub, (*prefix, name)))
    return out


def _command(*path: str) -> Any:
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return cmd


def test_every_command_has_help_text() -> None:
    commands = _walk(typer.main.get_command(app))
    names = {path for path, _ in commands}
    assert {("demo",), ("run",), ("score",), ("corpus", "search"), ("data", "info")} <= names
    for path, cmd in commands:
        assert (cmd.help or "").strip(), f"undocumented: {' '.join(path)}"
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, result.output


def test_every_option_and_argument_has_help_text() -> None:
    root = typer.main.get_command(app)
    for path, cmd in [((), root), *_walk(root)]:
        for param in cmd.params:
            assert (getattr(param, "help", None) or "").strip(), (
                f"pastcast {' '.join(path)}: {param.name} has no help text"
            )


def test_a_record_field_option_has_the_field_docstring_as_its_help() -> None:
    # Read from the record's source (its own field, and one it inherits), not from pydantic's
    # docstring extraction, which walks the call stack at every record class's creation.
    from pastcast.cli._common import field_help
    from pastcast.runner import ExperimentPlan

    assert field_help(ExperimentPlan, "max_steps") == (
        "The most steps one execution runs, then it stops with the log resumable: the same "
        "command again goes on (``Execution.max_steps``; not part of the run's definition)."
    )
    assert field_help(ExperimentPlan, "preset").startswith("Start from a paper's defaults")
    assert field_help(ExperimentPlan, "split") == ""  # no docstring: no help of its own
    assert ExperimentPlan.model_fields["max_steps"].description is None


def test_long_options_are_kebab_case_and_json_is_everywhere_something_is_reported() -> None:
    reporting = {
        ("run",),
        ("demo",),
        ("score",),
        ("agents", "list"),
        ("corpus", "build"),
        ("corpus", "search"),
        ("corpus", "read"),
        ("data", "import", "forecastbench"),
        ("data", "import", "polymarket"),
        ("data", "info"),
        ("stats", "power"),
        ("stats", "longitudinal"),
        ("stats", "memory-cost"),
        ("stats", "coverage"),
    }
    for path, cmd in _walk(typer.main.get_command(app)):
        opts = [o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
        for opt in opts:
            assert opt == opt.lower() and "_" not in opt, f"{' '.join(path)}: {opt}"
        if path in reporting:
            assert "--json" in opts, f"pastcast {' '.join(path)} lacks --json"


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"pastcast {pastcast.__version__}\n"


def test_choices_are_shown_in_help() -> None:
    run_help = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).stdout
    assert "memory_free|memory_on|no_tools" in run_help and "uniform|worst" in run_help
    assert "NAME[:key=value,...][@SETTING]" in run_help  # brackets are not taken as markup
    score_help = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "200"}).stdout
    assert "uniform|worst|exclude" in score_help


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nope"], "unknown agent 'nope'"),
        (["--agent", "heuristic@sleepy"], "unknown setting 'sleepy'"),
        (["--agent", "heuristic:max_reads"], "expected key=value"),
        (["--agent", "uniform", "--dataset", "/no/such/dir"], "not a dataset directory"),
        (["--agent", "uniform", "--dataset", "world:x"], "seed must be an integer"),
        (["--agent", "uniform", "--agent", "uniform"], "given twice"),
        (["--agent", "heuristic:max_reads=many"], "argument 'max_reads'"),
        (["--agent", "heuristic:setting=memory_on"], "as @SETTING"),
        (["--agent", "tool-agent"], "agent 'tool-agent': argument 'model' is required"),
        (["--agent", "no-tools:model=gpt-4o"], "PROVIDER:NAME"),
        (["--agent", "no-tools:model=nope:x"], "PROVIDER:NAME"),
        (["--agent", "uniform", "--max-tool-calls", "-1"], "--max-tool-calls"),
        (["--agent", "uniform", "--rollouts", "0"], "--rollouts"),
        (["--agent", "uniform", "--python-timeout", "0"], "--python-timeout"),
    ],
)
def test_run_rejects_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
    assert not (tmp_path / "r.jsonl").exists()


def test_misspelled_agent_argument_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["run", "--agent", "heuristic:max_redas=4", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --agent 'heuristic:max_redas=4': agent 'heuristic': no argument 'max_redas' "
        "(accepted arguments: max_reads, top_k, half_life_days, strength, relevance)\n"
    )
    assert "forecast steps" not in result.output  # no progress bar: nothing started
    assert not out.exists() and not (tmp_path / "index").exists()


def test_usage_errors_of_the_parser_exit_2(tmp_path: Path) -> None:
    for args in (["run", "--agent", "uniform", "--setting", "sleepy"], ["run", "--nope"], ["run"]):
        result = runner.invoke(app, [*args, "--out", str(tmp_path / "r.jsonl")])
        assert result.exit_code == 2, args
    assert not (tmp_path / "r.jsonl").exists()


def test_python_tool_without_a_sandbox_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pastcast.sandbox

    monkeypatch.setattr(pastcast.sandbox, "sandbox_available", lambda: (False, "no bwrap"))
    out = tmp_path / "r.jsonl"
    args = ["run", "--agent", "uniform", "--python-tool", "--max-events", "1", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --python-tool needs an isolating sandbox and there is none here (no bwrap)"
    )
    assert not out.exists()
    unsafe = runner.invoke(app, [*args, "--unsafe-python"])  # trusted agents: allowed
    assert unsafe.exit_code == 0, unsafe.output


def _non_default(name: str, field: Any) -> tuple[list[str], Any]:
    """A command-line value for ``field`` other than its default, and the value it becomes."""
    option = cli_run.OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
    default = field.default
    if isinstance(default, bool):
        return [option if not default else f"--no-{option[2:]}"], not default
    if isinstance(default, int):
        return [option, str(default + 3)], default + 3
    if isinstance(default, float):
        return [option, str(default * 2)], default * 2
    value = {"fallback": "worst", "split": "eval", "max_events": 2}[name]
    return [option, str(value)], value


# EnvConfig fields the runner sets per agent rather than per run: market prices go only to agents
# registered with market access (market, tool-agent-market), and never under @no_tools.
PER_AGENT_FIELDS = frozenset({"market_access"})


def test_every_run_and_env_config_field_is_a_run_option(tmp_path: Path) -> None:
    params = {p.name for p in _command("run").params}
    env_fields = set(EnvConfig.model_fields) - PER_AGENT_FIELDS
    run_fields = set(RunConfig.model_fields) - {"agents", "env"}
    assert "agent" in params
    assert not (env_fields | run_fields) - params, "fields without a `run` option"
    # ...and each option reaches the recorded config (the run log header).
    argv: list[str] = []
    expected: dict[str, Any] = {"env": {}}
    for name in sorted(env_fields):
        opts, value = _non_default(name, EnvConfig.model_fields[name])
        argv += opts
        expected["env"][name] = value
    for name in sorted(run_fields):
        opts, value = _non_default(name, RunConfig.model_fields[name])
        argv += opts
        expected[name] = value
    out = tmp_path / "r.jsonl"
    # A dataset with an eval split, so that --split eval selects events (an empty selection is
    # refused before the run).
    tiny = tiny_dataset()
    dataset = tmp_path / "tiny"
    save_dataset(replace(tiny, splits={e.id: "eval" for e in tiny.events}), dataset)
    args = ["run", "--agent", "uniform", *argv, "--dataset", str(dataset), "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    config = read_run_log(out).header.config
    for name, value in expected.items():
        if name == "env":
            for key, v in value.items():
                assert config["env"][key] == v, key
        else:
            assert config[name] == value, name


def test_run_json_is_one_object_on_stdout(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["run", "--agent", "uniform", "--max-events", "2", "--out", str(out), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    steps = read_run_log(out).steps
    counts = {k: summary[k] for k in ("run_log", "run_id", "written", "resumed", "unusable")}
    assert counts == {
        "run_log": str(out),
        "run_id": steps[0].run_id,
        "written": len(steps),
        "resumed": 0,
        "unusable": 0,
    }
    assert summary["accounting"]["steps_written"] == len(steps)  # and the run's accounting
    again = json.loads(runner.invoke(app, args).stdout)
    assert again["written"] == 0 and again["resumed"] == len(steps)


def test_a_run_whose_every_forecast_is_unusable_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    script = tmp_path / "outputs.json"  # a model that loads, and never gives an answer
    script.write_text(json.dumps(["I would rather not say."]))
    agent = f"no-tools:model=scripted:{script}"
    result = runner.invoke(
        app, ["run", "--agent", agent, "--max-events", "1", "--out", str(out), "--json"]
    )
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert summary["written"] == summary["unusable"] > 0
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "unusable" in result.stderr


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (RuntimeError("sandbox vanished"), "error: sandbox vanished"),
        (KeyError("boom"), "error: KeyError: 'boom'"),
    ],
)
def test_an_error_during_the_run_exits_1_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception, message: str
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise exc

    monkeypatch.setattr(app_runs, "run_benchmark", broken)
    monkeypatch.delenv("PASTCAST_DEBUG", raising=False)
    result = runner.invoke(
        app, ["run", "--agent", "uniform", "--max-events", "1", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()  # (the index build's progress may come first)
    errors = [line for line in lines if line.startswith("error")]
    assert len(errors) == 1 and errors[0] == lines[-1] and errors[0].startswith(message)
    assert "Traceback" not in result.output


def test_demo_runs_end_to_end_and_resumes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "market (reference)" in result.output
    report = tmp_path / "report" / "report.html"
    assert "heuristic" in report.read_text()
    assert "heuristic" in report.with_name("tables.md").read_text()
    # the demo's leakage card is filled: the served documents' leakage measured by the scripted
    # judge of the world's planted rewrites (its errors measured on them), the corpus dating
    (card,) = json.loads(report.with_name("leakage.json").read_text())
    assert card["served_leakage"] == 0.0  # the demo's corpus holds no planted rewrite
    assert "world-planted-documents" in card["served_leakage_note"]
    assert card["corpus_dating"]["dated_by"] == {"unrecorded": 5000}
    html = report.read_text()
    assert "not measured" not in html and "not recorded" not in html
    audit = json.loads((tmp_path / "run.retrieval-audit.json").read_text())
    accuracy = audit["judge_accuracy"]
    assert accuracy["positives"] == accuracy["true_positives"] > 0  # planted rewrites flagged
    assert accuracy["negatives"] == accuracy["true_negatives"] > 0  # clean articles not
    assert audit["overall"]["judged"] > 0
    again = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert again.exit_code == 0 and "(0 new steps" in again.output
    as_json = runner.invoke(app, ["demo", "--out", str(tmp_path), "--json"])
    assert as_json.exit_code == 0, as_json.output
    summary = json.loads(as_json.stdout)
    assert summary["written"] == 0 and summary["report"] == str(report)
    agents = {(g["agent"], g["setting"], g["role"]) for g in summary["leaderboard"]}
    assert ("market", "memory_free", "reference") in agents
    assert ("heuristic", "memory_on", "agent") in agents


def test_run_then_score_from_the_log(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "uniform",
            "--agent",
            "heuristic@memory_on",
            "--max-events",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    scored = runner.invoke(app, ["score", str(out), "--json", "--bootstrap", "50"])
    assert scored.exit_code == 0, scored.output
    assert '"memory_on"' in scored.output


@pytest.mark.parametrize("bad", [["--retrieval", "fuzzy"], ["--embedder", "x"], ["--nprobe", "4"]])
def test_a_bad_search_option_of_the_world_builds_no_index_first(
    bad: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the world's index is built beside the run log only once the search options hold
    monkeypatch.chdir(tmp_path)
    args = ["run", "--dataset", "world", "--agent", "uniform", "--out", "runs/r.jsonl", *bad]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert list(tmp_path.iterdir()) == []
