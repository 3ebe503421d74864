"""The round-level benchmark agent in arena replays: one conversation per round over all its
markets, its forecasts committed, revealed and scored beside the step agents'."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from arena_helpers import needs_evm, synthetic_dataset
from pastcast.agents import agent_spec
from pastcast.cli import app
from pastcast.models import ChatRequest, ChatResponse, ScriptedModel, register_provider
from pastcast.records import RequestedToolCall
from pastcast.runlog import read_run_log
from pastcast_arena import ROUND_LOG, LedgerArena, RoundPlan, replay

needs_evm()

START = datetime(2025, 1, 20, 16, 0, tzinfo=UTC)
PLAN = RoundPlan(markets=4, rounds=4, start=START, interval_days=4)
BUILT: list[ScriptedModel] = []


def _count(request: ChatRequest) -> int:
    m = re.search(r"indexed 0 to (\d+)", request.messages[1].content)
    assert m, request.messages[1].content
    return int(m.group(1)) + 1


def _respond(submit: Any) -> Any:
    def respond(request: ChatRequest) -> ChatResponse:
        n, turn = _count(request), sum(m.role == "assistant" for m in request.messages)
        if turn == 0:
            calls = [("getMarketDetails", {"index": i}) for i in range(n)]
            calls += [("getPriceHistory", {"index": i}) for i in range(n)]
        else:
            calls = [("submitPredictions", {"probabilities": submit(n)})]
        return ChatResponse(
            content="",
            tool_calls=tuple(
                RequestedToolCall(id=f"c{turn}-{i}", name=name, arguments=args)
                for i, (name, args) in enumerate(calls)
            ),
        )

    return respond


RESPONDERS = {"good": _respond(lambda n: [0.6] * n), "short": _respond(lambda n: [0.6] * (n - 1))}


@register_provider("arena-round-test")
def _provider(rest: str, **options: Any) -> ScriptedModel:
    model = ScriptedModel(responder=RESPONDERS[rest], name=f"arena-round-test:{rest}")
    BUILT.append(model)
    return model


def test_the_benchmark_agent_plays_each_round_in_one_conversation(tmp_path: Path) -> None:
    BUILT.clear()
    arena = LedgerArena.create(tmp_path / "ledger.jsonl", clock=lambda: 1_750_000_000)
    agents = (
        agent_spec("market"),
        agent_spec("arena-benchmark", model="arena-round-test:good"),
        agent_spec("arena-benchmark", model="arena-round-test:short", label="short"),
    )
    ds = synthetic_dataset()
    result = replay(ds, None, agents, tmp_path, arena, plan=PLAN)  # type: ignore[arg-type]
    assert len(result.results) == 4
    for res in result.results:
        assert res.predictions["arena-benchmark"] == (6000,) * 4
        # a submission one short is refused every time: the fallback, counted
        assert res.predictions["short"] == (5000,) * 4
    assert result.failures == {"market": 0, "arena-benchmark": 0, "short": 16}
    board = {r.agent for r in result.report.leaderboard}
    assert {"market", "arena-benchmark", "short"} <= board
    # the step agents' run log and the round-level agents' own, both ordinary run logs
    assert result.round_log == tmp_path / ROUND_LOG
    assert {s.agent for s in read_run_log(tmp_path / "run.jsonl").steps} == {"market"}
    log = read_run_log(result.round_log)
    assert {h.factory for h in log.header.agents} == {"arena-benchmark"}
    steps = [s for s in log.steps if s.agent == "arena-benchmark"]
    assert len(steps) == 16 and all(s.forecast.usable for s in steps)
    assert {s.grading.truth for s in steps} <= {"Yes", "No"}
    # one conversation per round (two model calls), kept on the round's first market
    with_calls = [s for s in steps if s.episode.model_calls]
    assert len(with_calls) == 4 and all(len(s.episode.model_calls) == 2 for s in with_calls)
    calls = {
        name: sum(len(m.requests) for m in BUILT if m.name.endswith(name)) for name in RESPONDERS
    }
    # the short one corrects nothing: 20 turns, then the last ask, per round
    assert calls == {"good": 4 * 2, "short": 4 * 21}
    failed = [s for s in log.steps if s.agent == "short"]
    assert {s.forecast.failure_reason for s in failed} == {"no_answer_block"}
    # every price the model saw is of a day that ended by the round's deadline
    deadlines = {r.round.commit_deadline for r in result.results}
    for model in BUILT:
        for request in model.requests:
            cutoff = next(
                d for d in deadlines if f"{d:%Y-%m-%d %H:%M} UTC" in request.messages[1].content
            )
            for m in request.messages:
                if m.role != "tool" or not m.content.startswith("["):
                    continue
                for day in json.loads(m.content):
                    end = datetime.fromisoformat(day["day"]).replace(tzinfo=UTC) + timedelta(days=1)
                    assert end <= cutoff, (day, cutoff)


def test_the_replay_command_takes_the_benchmark_agent(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset

    data = tmp_path / "ds"
    save_dataset(synthetic_dataset(), data)  # type: ignore[arg-type]
    out = tmp_path / "out"
    args = [
        "arena", "replay", "--dataset", str(data),
        "--agent", "arena-benchmark:model=arena-round-test:good", "--agent", "random",
        "--out", str(out), "--rounds", "2", "--markets", "3", "--start", "2025-01-21",
        "--selector", "random:seed=2", "--json",
    ]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    data_out = json.loads(r.output)
    assert data_out["round_log"] == str(out / ROUND_LOG)
    name = "arena-benchmark:model=arena-round-test:good"  # an agent is named as given
    assert {row["agent"] for row in data_out["leaderboard"]} == {name, "random"}
    assert data_out["failures"] == {name: 0, "random": 0}
    # a bad argument is one error line naming the option
    bad_agent = "arena-benchmark:model=arena-round-test:good,max_turns=0"
    bad = CliRunner().invoke(
        app, [*args[:5], bad_agent, *args[6:9], str(tmp_path / "bad"), *args[10:-1]]
    )
    assert bad.exit_code == 2 and "--agent" in bad.output and "max_turns" in bad.output
    assert bad.output.strip().count("\n") == 0


def test_flipping_every_outcome_changes_nothing_the_model_is_sent(tmp_path: Path) -> None:
    from pastcast.dataset import Dataset
    from pastcast.records import Resolution

    ds: Dataset = synthetic_dataset()  # type: ignore[assignment]
    flipped = Dataset(
        ds.id,
        ds.events,
        {
            k: Resolution(
                event_id=k, label="No" if r.label == "Yes" else "Yes", resolved_at=r.resolved_at
            )
            for k, r in ds.resolutions.items()
        },
        ds.beliefs,
        ds.steps,
    )
    sent = []
    for i, dataset in enumerate((ds, flipped)):
        # models are loaded once and kept: what each was sent before this replay is left out
        before = {id(m): len(m.requests) for m in BUILT}
        out = tmp_path / str(i)
        out.mkdir()
        arena = LedgerArena.create(out / "ledger.jsonl", clock=lambda: 1_750_000_000)
        spec = agent_spec("arena-benchmark", model="arena-round-test:good")
        result = replay(dataset, None, (spec,), out, arena, plan=PLAN)
        sent.append(
            [r.model_dump_json() for m in BUILT for r in m.requests[before.get(id(m), 0) :]]
        )
        outcomes = [res.outcomes for res in result.results]
        if i == 0:
            first = outcomes
    assert sent[0] and sent[0] == sent[1]
    assert outcomes != first  # the outcomes did change, and were scored as such
