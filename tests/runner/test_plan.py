"""Experiment plans: validation naming the key, models x settings as agents, the estimate of
calls, tokens and cost, and the knowledge-cutoff warnings."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError
from scale_world import synthetic_dataset

from pastcast.agents import agent_spec
from pastcast.errors import FieldError
from pastcast.runner import estimate_plan, load_plan, reschedule


def _write(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


MODEL = '[[models]]\nspec = "openai:gpt-4o-mini"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[models]]\nspec = 3\n", "models[0].spec: Input should be a valid string"),
        (MODEL + "[concurency]\nepisodes = 3\n", "concurency: Extra inputs are not permitted"),
        (MODEL + "[concurrency]\nepisodes = 0\n", "concurrency.episodes: Input should be greater"),
        ('settings = ["sleepy"]\n' + MODEL, "settings[0]: Input should be 'no_tools'"),
        (MODEL + "[budgets]\nmax_tool_calls = -1\n", "budgets.max_tool_calls"),
        ("rollouts = 0\n" + MODEL, "rollouts: Input should be greater than or equal to 1"),
        ('[[models]]\nspec = "gpt-4o"\n', "models[0].spec: 'gpt-4o' is not PROVIDER:NAME"),
        ('[[agents]]\nname = "nope"\n', "agents[0].name: unknown agent 'nope'"),
        (
            '[[agents]]\nname = "heuristic"\nargs = { max_redas = 4 }\n',
            "agents[0]: agent 'heuristic': no argument 'max_redas'",
        ),
        (
            MODEL + '[agent_args.tool-agent]\naction_mod = "native"\n',
            "models[0] (memory_free): agent 'tool-agent': no argument 'action_mod'",
        ),
        (
            '[[agents]]\nname = "two-stage"\nargs = { model = "openai:x", rounds = "three" }\n',
            "agents[0]: agent 'two-stage': argument 'rounds' must be int, not 'three'",
        ),
        (
            MODEL + '[agent_args.tool-agent]\nmax_iterations = "many"\n',
            "agent 'tool-agent': argument 'max_iterations' must be int | None, not 'many'",
        ),
        ("rollouts = 1000000000\n" + MODEL, "rollouts: Input should be less than or equal to 1"),
        (MODEL + "[concurrency]\nepisodes = 5000\n", "concurrency.episodes: Input should be less"),
        (MODEL + "[decoding]\ntop_p = 0\n", "decoding.top_p: Input should be greater than 0"),
        (
            MODEL + "[concurrency.providers.openai]\nrequests_per_minute = 0\n",
            "concurrency.providers.openai.requests_per_minute: Input should be greater than 0",
        ),
        (
            MODEL + "[concurrency.providers.openai]\ntokens_per_minute = 0\n",
            "concurrency.providers.openai.tokens_per_minute: Input should be greater than 0",
        ),
        (MODEL + '[concurrency]\nexecutor = "ray"\n', "concurrency.executor: unknown 'ray'"),
        ('schedule = "weekly"\n' + MODEL, "schedule: unknown 'weekly'"),
        ("rollouts = 2\n", "the plan runs nothing"),
        ('[[models]]\nspec = "openai:a"\n[[models]]\nspec = "openai:a"\n', "same label"),
        ("dataset = [\n", "not valid TOML"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(FieldError) as info:
        load_plan(_write(tmp_path, text))
    assert str(info.value).startswith(str(tmp_path / "plan.toml") + ": ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("plan.yaml", "rollouts: 2\nrollouts: 3\n", "key 'rollouts' is given twice (line 2)"),
        (
            "plan.yaml",
            "models:\n  - spec: openai:x\n    label: a\n    label: b\n",
            "key 'label' is given twice (line 4)",
        ),
        ("plan.json", '{"rollouts": 2, "rollouts": 3}', "key 'rollouts' is given twice"),
        ("plan.toml", "rollouts = 2\nrollouts = 3\n", "not valid TOML"),
        ("plan.yaml", "agents: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64"),
        ("plan.json", '{"agents": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than"),
        ("plan.toml", "agents = " + "[" * 5000 + "]" * 5000 + "\n", "not a plan: nested"),
    ],
)
def test_plan_files_refuse_repeated_keys_and_deep_nesting(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    with pytest.raises(FieldError) as info:
        load_plan(_write(tmp_path, text, name))
    assert str(info.value).startswith(str(tmp_path / name) + ": ")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_cli_bounds_are_the_records_bounds() -> None:
    from pastcast.cli._run import MAX_ROLLOUTS as CLI_ROLLOUTS
    from pastcast.runner import MAX_ROLLOUTS, MAX_WORKERS, RunConfig

    assert CLI_ROLLOUTS == MAX_ROLLOUTS == 10_000
    with pytest.raises(ValidationError, match="rollouts"):
        RunConfig(agents=(agent_spec("uniform"),), rollouts=MAX_ROLLOUTS + 1)
    with pytest.raises(ValidationError, match="workers"):
        RunConfig(agents=(agent_spec("uniform"),), workers=MAX_WORKERS + 1)


def test_yaml_plans_read_like_toml(tmp_path: Path) -> None:
    text = "models:\n  - spec: openai:gpt-4o-mini\nsettings: [no_tools, memory_on]\nrollouts: 3\n"
    plan = load_plan(_write(tmp_path, text, "plan.yaml"))
    assert plan.rollouts == 3 and plan.settings == ("no_tools", "memory_on")
    with pytest.raises(
        FieldError, match=r"plan.yml: field models\[0\].label: Input should be a valid"
    ):
        load_plan(_write(tmp_path, "models:\n  - spec: openai:x\n    label: [1]\n", "plan.yml"))


def test_models_in_settings_become_agents(tmp_path: Path) -> None:
    plan = load_plan(
        _write(
            tmp_path,
            """
settings = ["no_tools", "memory_free", "memory_on", "two_stage", "market_access"]
prices = "prices.toml"
[[models]]
spec = "openai:gpt-4o-mini"
label = "mini"
options = { timeout_s = 30 }
[[agents]]
name = "market"
[decoding]
temperature = 0.5
seed = 7
[agent_args.tool-agent]
action_mode = "native"
""",
        )
    )
    specs = plan.agent_specs()
    got = [(s.name, s.factory, s.setting) for s in specs]
    assert got == [
        ("mini", "tool-agent", "no_tools"),
        ("mini", "tool-agent", "memory_free"),
        ("mini", "tool-agent", "memory_on"),
        ("mini+two-stage", "two-stage", "memory_free"),
        ("mini+market", "tool-agent-market", "memory_free"),
        ("market", "market", "memory_free"),
    ]
    tool = specs[1].args
    assert tool == {
        "model": "openai:gpt-4o-mini",
        "model_options": {"timeout_s": 30, "prices": "prices.toml"},
        "decoding": {"temperature": 0.5, "seed": 7},
        "action_mode": "native",
    }
    assert specs[4].args["action_mode"] == "native"  # the market variant shares them
    assert "action_mode" not in specs[3].args  # two-stage has none
    config = plan.run_config()
    assert config.workers == 16 and config.agents == specs


def _plan_on_synthetic(tmp_path: Path, extra: str = "") -> tuple:  # type: ignore[type-arg]
    plan = load_plan(
        _write(
            tmp_path,
            """
settings = ["no_tools"]
rollouts = 2
[[models]]
spec = "openai:gpt-4o-mini"
[[models]]
spec = "openai-compatible:house@http://127.0.0.1:9/v1"
knowledge_cutoff = 2024-03-15
[[agents]]
name = "uniform"
"""
            + extra,
        )
    )
    return plan, estimate_plan(plan, synthetic_dataset())


def test_the_estimate_counts_the_work_and_prices_it(tmp_path: Path) -> None:
    _, est = _plan_on_synthetic(tmp_path)
    assert (est.events, est.steps, est.agents, est.rollouts) == (12, 36, 3, 2)
    assert est.episodes == 36 * 3 * 2
    mini, house, uniform = est.rows
    assert mini.model_calls == 72 and mini.model_calls_max == 144  # one call, one repair at most
    assert uniform.model_calls == 0 and uniform.cost_usd == 0.0
    assert mini.cost_usd == pytest.approx(
        (mini.input_tokens * 0.15 + mini.output_tokens * 0.60) / 1e6
    )
    assert mini.input_tokens > 72 * 100  # the prompt and the question, every call
    assert house.cost_usd is None and est.unpriced == (
        "openai-compatible:house@http://127.0.0.1:9/v1",
    )
    assert est.cost_usd == pytest.approx(mini.cost_usd)


def test_a_research_step_costs_more_and_is_bounded_by_the_budgets(tmp_path: Path) -> None:
    budgets = "[budgets]\nmax_model_calls = 5\n[estimate]\ntool_turns = 3\n"
    plan, est = _plan_on_synthetic(tmp_path, budgets)
    research = plan.model_copy(update={"settings": ("memory_on",)})
    deep = estimate_plan(research, synthetic_dataset())
    assert deep.rows[0].model_calls == 72 * 3 and deep.rows[0].model_calls_max == 72 * 5
    assert deep.rows[0].input_tokens > 3 * est.rows[0].input_tokens  # the conversation grows


def test_events_a_model_may_remember_are_warned_about(tmp_path: Path) -> None:
    _, est = _plan_on_synthetic(tmp_path)
    assert est.knowledge_cutoffs == {
        "openai:gpt-4o-mini": date(2023, 10, 31),
        "openai-compatible:house@http://127.0.0.1:9/v1": date(2024, 3, 15),
    }
    warned = [w for w in est.warnings if w.startswith("openai-compatible:house")]
    # events resolve 46, 52, ... days after 2024-01-01: by the end of 2024-03-15 (day 74), five
    assert len(warned) == 2
    assert "5 of 12 events resolved by its knowledge cutoff 2024-03-15" in warned[0]
    assert "no price" in warned[1]
    assert not any(w.startswith("openai:gpt-4o-mini") for w in est.warnings)


@pytest.mark.parametrize("key", ["knowledge_cutoff", "cutoff"])
def test_a_models_knowledge_cutoff_is_read_by_its_name_and_its_first_name(
    tmp_path: Path, key: str
) -> None:
    plan = load_plan(_write(tmp_path, f'[[models]]\nspec = "openai:house"\n{key} = 2024-03-15\n'))
    assert plan.knowledge_cutoffs() == {"openai:house": date(2024, 3, 15)}


def test_a_schedule_remakes_the_forecast_dates_and_names_itself(tmp_path: Path) -> None:
    data = reschedule(synthetic_dataset(), "lookback")
    assert data.id == "synthetic-v1+schedule=lookback"
    assert {s.event_id for s in data.steps} == {e.id for e in data.events}
    assert all(s.cutoff < data.resolutions[s.event_id].resolved_at for s in data.steps)
