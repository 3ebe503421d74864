"""The live arena: rounds of open Polymarket markets (a loopback fake in the real APIs' shapes)
forecast by agents at the moment of forecasting, committed before the deadline, revealed in the
window, scored on conditional-token payouts; over a virtual clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from arena_helpers import needs_evm
from live_fakes import FakePolymarket, ManualClock, fake_markets, rss, serve

from pastcast.app import arena_live
from pastcast.arena import find_foundry_tool, load_state, read_results, verify_ledger
from pastcast.runlog import read_run_log

needs_evm()

T0 = 1_780_000_000.0
TIMING = {
    "markets": 3,
    "rounds": 3,
    "interval_s": 1800,
    "commit_s": 1800,
    "reveal_s": 1800,
    "horizon_s": 3600,
    "lead_time_s": 600,
    "commit_margin_s": 30,
    "poll_s": 60,
}
AGENTS = ["market", "random", "heuristic"]


def write_plan(folder: Path, url: str, feed_url: str | None = None, **more: Any) -> Path:
    plan: dict[str, Any] = {
        "out": "live",
        "agents": AGENTS,
        "polymarket": {"gamma_url": url, "clob_url": url, "data_url": url},
        **TIMING,
        **more,
    }
    if feed_url is not None:
        (folder / "feeds.toml").write_text(f'[[feed]]\nname = "news"\nurl = "{feed_url}/rss"\n')
        plan |= {"feeds": "feeds.toml", "spool": "spool"}
    path = folder / "live.yaml"
    path.write_text(yaml.safe_dump(plan))
    return path


def recompute(res: Any) -> dict[str, tuple[int, int]]:
    """Brier and alpha in bp, as the contract defines them, from the revealed predictions, the
    benchmark prices and the outcomes alone."""
    bench = res.round.benchmark_bp()
    counted = [i for i, o in enumerate(res.outcomes) if o in (0, 1)]
    n = len(counted)

    def brier(ps: Any) -> int:
        return sum((ps[i] - 10_000 * res.outcomes[i]) ** 2 for i in counted) // (n * 10_000)

    base = brier(bench)
    return {a: (brier(p), base - brier(p)) for a, p in res.predictions.items()}


def ledger_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def check_live_run(out: Path, *, ledger: bool = True) -> None:
    """Every invariant of a finished live run that the files show."""
    state = load_state(out / "state.json")
    assert state is not None and len(state.rounds) == 3
    results = read_results(out / "rounds.jsonl")
    assert len(results) == 3
    for rnd in state.rounds:
        assert rnd.status == "scored"
        assert rnd.cutoff is not None
        assert rnd.commit_deadline - TIMING["lead_time_s"] <= rnd.cutoff
        assert rnd.cutoff < rnd.commit_deadline - TIMING["commit_margin_s"]
        assert all(s.committed and s.revealed and s.missed is None for s in rnd.agents.values())
        log = read_run_log(out / "rounds" / f"{rnd.index:04d}" / "run.jsonl")
        steps = log.steps
        assert len(steps) == 9  # 3 agents x 3 markets, once each
        assert len({(s.agent, s.event_id) for s in steps}) == 9
        assert {s.cutoff.timestamp() for s in steps} == {rnd.cutoff}
        inputs = json.loads((out / "rounds" / f"{rnd.index:04d}" / "inputs.json").read_text())
        for beliefs in inputs["beliefs"].values():  # prices the episodes could see
            assert beliefs and all(b["day"] <= _day(rnd.cutoff) for b in beliefs)
    # the same markets for every agent, in every round, each scored
    for res in results:
        assert set(res.predictions) == set(AGENTS)
        want = recompute(res)
        for agent, score in res.scores.items():
            assert (score.brier_bp, score.alpha_bp) == want[agent]
        assert (
            res.scores["market"].alpha_bp == 0
            or res.predictions["market"] != res.round.benchmark_bp()
        )
    outcomes = {m.market_id: o for res in results for m, o in zip(res.round.markets, res.outcomes)}
    assert outcomes["m05"] == 2, "a voided market counts for nothing"
    assert outcomes["m07"] == 2, "a market resolved before the reveal window closed is left out"
    assert state.rounds[2].excluded.keys() == {"m07"}
    assert {k for k, v in outcomes.items() if v != 2} == {f"m{i:02d}" for i in range(9)} - {
        "m05",
        "m07",
    }
    if ledger:
        summary = verify_ledger(out / "ledger.jsonl")
        assert summary is not None
        lines = ledger_lines(out / "ledger.jsonl")
        deadlines: dict[int, tuple[int, int]] = {}
        kinds: list[tuple[str, int, str]] = []
        for line in lines:
            rec = line["record"]
            if rec["kind"] == "round":
                deadlines[len(deadlines) + 1] = (rec["commit_deadline"], rec["reveal_deadline"])
            if rec["kind"] in ("commit", "reveal"):
                msg = rec["message"]
                commit_deadline, reveal_deadline = deadlines[msg["round_id"]]
                if rec["kind"] == "commit":
                    assert line["at"] < commit_deadline
                else:
                    assert commit_deadline <= line["at"] < reveal_deadline
                kinds.append((rec["kind"], msg["round_id"], msg["agent"]))
        assert len(kinds) == len(set(kinds)) == 3 * 3 * 2  # no double commit or reveal
        assert len(deadlines) == 3


def _day(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).date().isoformat()


@pytest.fixture
def fake() -> Any:
    clock = ManualClock(T0)
    markets = fake_markets(T0)
    api = FakePolymarket(clock, markets)
    with serve(route=api.route) as url, serve(route=rss(clock, markets)) as feed_url:
        yield clock, api, url, feed_url


def test_three_agents_play_three_live_rounds_on_the_ledger(tmp_path: Path, fake: Any) -> None:
    clock, api, url, feed_url = fake
    plan = write_plan(tmp_path, url, feed_url)
    result = arena_live(plan, clock=clock)
    out = tmp_path / "live"
    check_live_run(out)
    assert len(result.results) == 3 and {r.agent for r in result.report.leaderboard} == set(AGENTS)
    assert (tmp_path / "spool").is_dir()
    # the corpus the episodes searched held documents from before the cutoff only
    assert "/book" in api.log and "/prices-history" in api.log
