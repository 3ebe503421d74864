"""Plan files and agent arguments as a careless user or an attacker writes them: wrong types,
huge and non-finite numbers, negative budgets, keys given twice, deep nesting, alias bombs,
unknown fields and tags that would run code.

Every case is refused quickly, in one line naming the file (a plan) or the argument (an agent),
from the API, a plan file and the command line alike; nothing hangs, recurses or runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.agents import agent_spec
from pastcast.app import parse_agent_option
from pastcast.cli import app
from pastcast.errors import FieldError
from pastcast.runner import load_plan

MODEL = '[[models]]\nspec = "openai:gpt-4o-mini"\n'
YMODEL = "models:\n  - spec: openai:gpt-4o-mini\n"
TWO_STAGE = '[[agents]]\nname = "two-stage"\nargs = { model = "openai:x", '
DEEP = 5000

_LAUGHS = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)

PLANS: dict[str, tuple[str, str, str]] = {
    # name: (file name, text, what the one-line error says)
    "a billion rollouts": ("plan.toml", "rollouts = 1000000000\n" + MODEL, "rollouts: Input"),
    "negative rollouts": ("plan.toml", "rollouts = -1\n" + MODEL, "rollouts: Input"),
    "rollouts as words": ("plan.toml", 'rollouts = "many"\n' + MODEL, "rollouts: Input"),
    "rollouts NaN": ("plan.toml", "rollouts = nan\n" + MODEL, "rollouts: Input"),
    "rollouts infinite": ("plan.yaml", "rollouts: .inf\n" + YMODEL, "rollouts: Input"),
    "a billion workers": (
        "plan.toml",
        MODEL + "[concurrency]\nepisodes = 1000000000\n",
        "concurrency.episodes: Input should be less than or equal to 1024",
    ),
    "negative budget": (
        "plan.toml",
        MODEL + "[budgets]\nmax_model_calls = -5\n",
        "budgets.max_model_calls: Input",
    ),
    "temperature NaN": ("plan.toml", MODEL + "[decoding]\ntemperature = nan\n", "finite number"),
    "negative temperature": ("plan.toml", MODEL + "[decoding]\ntemperature = -1\n", "temperature"),
    "huge max_tokens": (
        "plan.toml",
        MODEL + "[decoding]\nmax_tokens = 9999999999999\n",
        "decoding.max_tokens: Input should be less than or equal to",
    ),
    "seed beyond 64 bits": (
        "plan.yaml",
        YMODEL + "decoding:\n  seed: 100000000000000000000000\n",
        "decoding.seed",
    ),
    "unknown top-level field": ("plan.toml", "rolouts = 2\n" + MODEL, "rolouts: Extra inputs"),
    "unknown decoding field": ("plan.toml", MODEL + "[decoding]\ntemp = 1\n", "decoding.temp"),
    "unknown agent argument": (
        "plan.toml",
        '[[agents]]\nname = "heuristic"\nargs = { depht = 2 }\n',
        "agents[0]: agent 'heuristic': no argument 'depht'",
    ),
    "agent argument of the wrong type": (
        "plan.toml",
        TWO_STAGE + 'rounds = "three" }\n',
        "agents[0]: agent 'two-stage': argument 'rounds' must be int, not 'three'",
    ),
    "a config field NaN": (
        "plan.toml",
        TWO_STAGE + "config = { stop_confidence = nan } }\n",
        "argument 'config' must be TwoStageConfig | None",
    ),
    "a trillion rounds": (
        "plan.toml",
        TWO_STAGE + "config = { rounds = 1000000000000 } }\n",
        "rounds: Input should be less than or equal to 100",
    ),
    "an unknown stage": (
        "plan.toml",
        TWO_STAGE + "stages = { think = { max_tokens = 5 } } }\n",
        "argument 'stages' must be dict[",
    ),
    "a key twice in YAML": ("plan.yaml", YMODEL + "rollouts: 2\nrollouts: 3\n", "line 4"),
    "a nested key twice in YAML": (
        "plan.yaml",
        YMODEL + "decoding:\n  seed: 1\n  seed: 2\n",
        "key 'seed' is given twice (line 5)",
    ),
    "a key twice in JSON": (
        "plan.json",
        '{"models": [{"spec": "openai:x", "spec": "openai:y"}]}',
        "key 'spec' is given twice",
    ),
    "deep YAML": ("plan.yaml", "agents: " + "[" * DEEP + "]" * DEEP + "\n", "nested deeper"),
    "deep YAML blocks": (
        "plan.yaml",
        "".join(" " * i + f"k{i}:\n" for i in range(200)),
        "nested deeper than 64 levels",
    ),
    "deep JSON": ("plan.json", '{"agents": ' + "[" * DEEP + "]" * DEEP + "}", "nested deeper"),
    "deep TOML": ("plan.toml", "agents = " + "[" * DEEP + "]" * DEEP + "\n", "nested"),
    "deep agent arguments": (
        "plan.json",
        '{"agents": [{"name": "uniform", "args": {"x": ' + "[" * 100 + "]" * 100 + "}}]}",
        "nested deeper than 64 levels",
    ),
    "an alias bomb": ("plan.yaml", _LAUGHS + YMODEL, "holds more than 100000 values"),
    "a tag that runs code": (
        "plan.yaml",
        YMODEL + 'rollouts: !!python/object/apply:os.system ["echo owned"]\n',
        "not valid YAML",
    ),
    "an integer of 5000 digits": ("plan.yaml", YMODEL + "rollouts: " + "9" * 5000 + "\n", "plan"),
    "a list at the top": ("plan.yaml", "- rollouts: 2\n", "expected a table of settings"),
    "NUL bytes": ("plan.toml", "rollouts = 2\x00\n" + MODEL, "not valid TOML"),
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", list(PLANS))
def test_a_nasty_plan_is_refused_in_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    name, text, message = PLANS[case]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FieldError) as info:
        load_plan(path)
    error = str(info.value)
    assert error.startswith(f"{path}: ") and "\n" not in error, error
    assert message in error, error
    assert len(error) < 600


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", ["a billion rollouts", "a key twice in YAML", "deep YAML"])
@pytest.mark.parametrize("command", [["plan"], ["run", "--config"]])
def test_the_commands_refuse_them_too(tmp_path: Path, case: str, command: list[str]) -> None:
    name, text, _ = PLANS[case]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, [*command, str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {path}: ")
    assert len(result.stderr.strip().splitlines()) == 1


ARGUMENTS: dict[str, tuple[str, dict[str, Any], str]] = {
    # name: (agent, arguments, what the one-line error names)
    "rounds as words": ("two-stage", {"rounds": "three"}, "argument 'rounds' must be int"),
    "a trillion rounds": ("two-stage", {"rounds": 10**12}, "argument 'rounds' must be int"),
    "negative rounds": ("two-stage", {"config": {"rounds": -1}}, "rounds: Input should be"),
    "NaN confidence": ("two-stage", {"stop_confidence": float("nan")}, "'stop_confidence'"),
    "an unknown config field": ("two-stage", {"config": {"round": 2}}, "round: Extra inputs"),
    "a config that is text": ("two-stage", {"config": "fast"}, "argument 'config' must be"),
    "NaN temperature": ("no-tools", {"decoding": {"temperature": float("nan")}}, "finite"),
    "infinite top_p": ("zero-shot", {"top_p": float("inf")}, "argument 'top_p' must be"),
    "a seed beyond 64 bits": ("tool-agent", {"seed": 2**80}, "argument 'seed' must be"),
    "no tokens": ("tool-agent", {"decoding": {"max_tokens": 0}}, "max_tokens: Input should"),
    "decoding as a list": ("no-tools", {"decoding": [0.1]}, "argument 'decoding' must be"),
    "negative iterations": ("tool-agent", {"max_iterations": -1}, "'max_iterations' must be"),
    "no result characters": ("tool-agent", {"max_result_chars": 0}, "'max_result_chars'"),
    "an unknown action mode": ("tool-agent", {"action_mode": "yaml"}, "'action_mode' must be"),
    "an unknown cache mode": ("no-tools", {"cache_mode": "sometimes"}, "'cache_mode' must be"),
    "an unknown reasoning effort": ("zero-shot", {"reasoning_effort": "huge"}, "reasoning"),
    "an unknown stage": ("zero-shot", {"stages": {"tally": {}}}, "argument 'stages' must be"),
    "deeply nested stages": (
        "two-stage",
        {"stages": {"report": {"temperature": [[[[[[[[[[0.1]]]]]]]]]]}}},
        "report.temperature: Input should be a valid number",
    ),
    "an unknown argument": ("two-stage", {"roudns": 2}, "no argument 'roudns'"),
    "the same setting twice": (
        "two-stage",
        {"seed": 1, "decoding": {"seed": 2}},
        "'seed' is given twice",
    ),
}


@pytest.mark.parametrize("case", list(ARGUMENTS))
def test_nasty_agent_arguments_are_refused_naming_the_argument(case: str) -> None:
    agent, args, message = ARGUMENTS[case]
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        agent_spec(agent, model="openai:x", **args)
    error = str(info.value)
    assert error.startswith(f"agent {agent!r}") and "\n" not in error and len(error) < 600


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("two-stage:model=openai:x,rounds=three", "argument 'rounds' must be int, not 'three'"),
        ("two-stage:model=openai:x,rounds=1e400", "argument 'rounds' must be int"),
        ('no-tools:model=openai:x,decoding={"temperature": NaN}', "argument 'decoding' must be"),
        ("tool-agent:model=openai:x,max_tool_calls=-3", "argument 'max_tool_calls' must be"),
        ('two-stage:model=openai:x,config={"stages": {}}', "stages: Extra inputs"),
    ],
)
def test_the_command_line_refuses_them_too(option: str, message: str) -> None:
    with pytest.raises(FieldError, match=re.escape(message)) as info:
        parse_agent_option(option)
    assert info.value.field == "agents" and info.value.reason.startswith(f"{option!r}: ")
