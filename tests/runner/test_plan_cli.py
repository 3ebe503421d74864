"""`pastcast plan`, `pastcast run --config` (the options given set over the plan), `--resume` and
`pastcast score --after-knowledge-cutoff`, with the README's example plan."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from scale_world import model_agents, synthetic_backend, synthetic_dataset
from scripted_provider import ProviderState
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.dataset import save_dataset
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark

README = Path(__file__).resolve().parents[2] / "README.md"
cli = CliRunner()


def _readme_plan(tmp_path: Path) -> Path:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```toml\n# plan.toml\n(.*?)```", text, re.S)
    assert block, "the README shows an example plan"
    path = tmp_path / "plan.toml"
    path.write_text(block.group(1))
    return path


def test_the_readme_plan_is_priced_then_runs_as_it_is(
    tmp_path: Path, provider: ProviderState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # its paths are relative, as in the README
    plan = _readme_plan(tmp_path)
    shown = cli.invoke(app, ["plan", str(plan)])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"model calls: ~[\d,]+ \(at most [\d,]+\)", shown.stdout)
    assert re.search(r"estimated cost: \$\d+\.\d\d \(at most \$\d+\.\d\d\)", shown.stdout)
    assert "warning: openai:gpt-4.1-mini: 4 of 4 events resolved by its knowledge cutoff" in (
        shown.stdout
    )
    episodes = int(re.search(r"= ([\d,]+) episodes", shown.stdout).group(1).replace(",", ""))
    assert episodes == (5 + 3 + 4 + 4) * 7 * 2  # the first four events' dates x agents x rollouts
    # The same plan runs: OpenAI's client reads its endpoint and key from the environment.
    monkeypatch.setenv("OPENAI_BASE_URL", provider.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ran = cli.invoke(app, ["run", "--config", str(plan), "--json"])
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout)
    log = read_run_log(tmp_path / "runs" / "plan" / "run.jsonl")
    assert summary["written"] == len(log.steps) == episodes
    assert summary["unusable"] == 0
    assert log.header.knowledge_cutoffs == {
        "openai:gpt-4o-mini": date(2023, 10, 31),
        "openai:gpt-4.1-mini": date(2024, 6, 30),
    }
    models = summary["accounting"]["by_model"]
    assert set(models) == {"openai:gpt-4o-mini", "openai:gpt-4.1-mini"}
    assert sum(m["model_calls"] for m in models.values()) == provider.served
    again = cli.invoke(app, ["run", "--config", str(plan), "--resume", "--json"])
    assert json.loads(again.stdout)["resumed"] == len(log.steps)


SMALL_WORLD = "world:0,n_events=2,n_documents=60"


def _small_plan(tmp_path: Path, extra: str = "") -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'dataset = "{SMALL_WORLD}"\nout = "{tmp_path / "run.jsonl"}"\nrollouts = 2\n{extra}'
        '[budgets]\nmax_tool_calls = 5\n[[agents]]\nname = "uniform"\n'
    )
    return plan


def test_run_with_a_plan_sets_the_options_given_over_its_fields(tmp_path: Path) -> None:
    plan = _small_plan(tmp_path)
    out = tmp_path / "elsewhere.jsonl"
    args = ["--rollouts", "3", "--agent", "heuristic@memory_on", "--max-tool-calls", "7"]
    result = cli.invoke(app, ["run", "--config", str(plan), *args, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "run.jsonl").exists()
    header = read_run_log(out).header
    recorded = header.plan
    assert recorded is not None
    assert (recorded["rollouts"], recorded["out"], recorded["dataset"]) == (
        3,
        str(out),
        SMALL_WORLD,
    )
    assert recorded["budgets"]["max_tool_calls"] == 7  # the option's ...
    assert recorded["budgets"]["max_search_k"] == header.config["env"]["max_search_k"]
    assert [(a["name"], a["setting"]) for a in recorded["agents"]] == [("heuristic", "memory_on")]
    # ... and without options the plan's own fields
    again = cli.invoke(app, ["run", "--config", str(plan), "--json"])
    assert again.exit_code == 0, again.output
    own = read_run_log(tmp_path / "run.jsonl").header.plan
    assert own is not None and own["rollouts"] == 2 and own["budgets"]["max_tool_calls"] == 5
    assert [a["name"] for a in own["agents"]] == ["uniform"]


@pytest.mark.parametrize(
    ("args", "extra", "message"),
    [
        (["--resume"], "", "error: --resume finds no run log at"),
        (["--rollouts", "0"], "", "error: --rollouts is invalid"),
        (["--split", "nosuch"], "", "error: --split 'nosuch': no event"),
        ([], 'split = "nosuch"\n', "error: {plan}: split: 'nosuch': no event"),
        (["--setting", "memory_on"], "", "error: --setting: sets the setting of --agent's"),
    ],
)
def test_a_problem_of_a_plan_run_names_the_option_or_else_the_file(
    tmp_path: Path, args: list[str], extra: str, message: str
) -> None:
    plan = _small_plan(tmp_path, extra)
    result = cli.invoke(app, ["run", "--config", str(plan), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("error: ") == 1, result.stderr  # after progress and warnings
    assert result.stderr.strip().splitlines()[-1].startswith(message.format(plan=plan))
    assert not (tmp_path / "run.jsonl").exists()


def test_plan_json_is_the_estimate(tmp_path: Path) -> None:
    save_dataset(synthetic_dataset(), tmp_path / "data")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'dataset = "{tmp_path / "data"}"\nsettings = ["no_tools"]\n'
        '[[models]]\nspec = "openai:gpt-4o-mini"\n[[agents]]\nname = "market"\n'
    )
    result = cli.invoke(app, ["plan", str(plan), "--json"])
    assert result.exit_code == 0, result.output
    est = json.loads(result.stdout)
    assert (est["events"], est["steps"], est["agents"], est["episodes"]) == (12, 36, 2, 72)
    assert est["model_calls"] == 36 and est["cost_usd"] > 0 and est["unpriced"] == []
    assert [r["agent"] for r in est["rows"]] == ["gpt-4o-mini", "market"]


def test_a_bad_plan_exits_2_naming_the_key(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[[models]]\nspec = "openai:gpt-4o-mini"\noptions = 3\n')
    for command in (["plan", str(plan)], ["run", "--config", str(plan)]):
        result = cli.invoke(app, command)
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: {plan}: field models[0].options: ")


def test_run_without_agents_or_plan_is_a_usage_error(tmp_path: Path) -> None:
    result = cli.invoke(app, ["run", "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert "--agent: give at least one agent (or --config FILE)" in result.stderr


def test_score_after_knowledge_cutoff_keeps_only_events_no_model_may_remember(
    tmp_path: Path, provider: ProviderState
) -> None:
    out = tmp_path / "run.jsonl"
    agents = model_agents(provider.url, settings=("memory_free",))
    model = str(agents[0].args["model"])
    config = RunConfig(agents=agents, workers=8)
    run_benchmark(
        synthetic_dataset(),
        synthetic_backend(),
        config,
        out,
        progress=False,
        knowledge_cutoffs={model: date(2024, 3, 15)},  # as a plan's `knowledge_cutoff` gives it
    )
    every = json.loads(cli.invoke(app, ["score", str(out), "--bootstrap", "0", "--json"]).stdout)
    clean = cli.invoke(
        app, ["score", str(out), "--bootstrap", "0", "--after-knowledge-cutoff", "--json"]
    )
    assert clean.exit_code == 0, clean.output
    kept = json.loads(clean.stdout)["groups"][0]["n_recorded"]
    assert every["groups"][0]["n_recorded"] == 36 and kept == 36 - 5 * 3  # 5 events out
    assert "left out 5 events (15 steps) resolved by 2024-03-15" in clean.stderr
    # ... and what remembering was worth: Brier by events resolved before and after the cutoff
    (gap,) = json.loads(clean.stdout)["knowledge_gaps"]
    assert (gap["model"], gap["knowledge_cutoff"], gap["before_events"]) == (model, "2024-03-15", 5)
    assert gap["gap"] == pytest.approx(gap["after_brier"] - gap["before_brier"])
    boot = cli.invoke(app, ["score", str(out), "--bootstrap", "300", "--after-knowledge-cutoff"])
    assert boot.exit_code == 0, boot.output
    line = next(ln for ln in boot.stderr.splitlines() if "events resolved by it" in ln)
    low, high = (float(x) for x in re.findall(r"\[([-+.\d]+), ([-+.\d]+)\]", line)[0])
    assert low <= gap["gap"] <= high
    # A model whose cutoff nobody knows cannot be judged: refused, naming it.
    unknown = tmp_path / "unknown.jsonl"
    run_benchmark(synthetic_dataset(), synthetic_backend(), config, unknown, progress=False)
    result = cli.invoke(app, ["score", str(unknown), "--after-knowledge-cutoff"])
    assert result.exit_code == 2
    assert f"no knowledge cutoff known for {model}" in result.stderr
