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

T0 = 1_779_926_400.0 + 3600  # an hour into a UTC day: the runs stay within it
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


def check_live_run(
    out: Path,
    markets: list[Any],
    *,
    ledger: bool = True,
    timing: dict[str, Any] = TIMING,
    strict: bool = True,
) -> None:
    """Every invariant of a finished live run that the files show."""
    state = load_state(out / "state.json")
    assert state is not None and len(state.rounds) == 3
    results = read_results(out / "rounds.jsonl")
    assert len(results) == 3
    for rnd in state.rounds:
        assert rnd.status == "scored"
        assert rnd.cutoff is not None
        assert rnd.commit_deadline - timing["lead_time_s"] <= rnd.cutoff
        assert rnd.cutoff < rnd.commit_deadline - timing["commit_margin_s"]
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
    # outcomes: the payouts of markets that resolved after the reveal window; a voided market
    # or one resolved before the window closed counts for nothing
    fakes = {m.mid: m for m in markets}
    by_round = {r.round_id: r for r in state.rounds}
    early = void = 0
    for res in results:
        rnd = by_round[res.round.round_id]
        for m, o in zip(res.round.markets, res.outcomes, strict=True):
            f = fakes[m.market_id]
            if f.resolve_at < rnd.reveal_deadline:
                assert o == 2 and m.market_id in rnd.excluded
                early += 1
            elif f.winner == "void":
                assert o == 2 and m.market_id not in rnd.excluded
                void += 1
            else:
                assert o == (1 if f.winner == "Yes" else 0), m.market_id
    if strict:
        assert early == 1 and void == 1
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
    with serve(route=api.route) as url, serve(route=rss(T0, markets)) as feed_url:
        yield clock, api, url, feed_url


def test_three_agents_play_three_live_rounds_on_the_ledger(tmp_path: Path, fake: Any) -> None:
    clock, api, url, feed_url = fake
    plan = write_plan(tmp_path, url, feed_url)
    result = arena_live(plan, clock=clock)
    out = tmp_path / "live"
    check_live_run(out, api.markets)
    assert len(result.results) == 3 and {r.agent for r in result.report.leaderboard} == set(AGENTS)
    assert (tmp_path / "spool").is_dir()
    # the corpus the episodes searched held documents from before the cutoff only
    assert "/book" in api.log and "/prices-history" in api.log


def test_arena_verify_is_clean_and_the_run_logs_are_graded(tmp_path: Path, fake: Any) -> None:
    from typer.testing import CliRunner

    from pastcast.cli import app

    clock, _api, url, feed_url = fake
    arena_live(write_plan(tmp_path, url, feed_url), clock=clock)
    out = tmp_path / "live"
    res = CliRunner().invoke(app, ["arena", "verify", str(out / "ledger.jsonl")])
    assert res.exit_code == 0, res.output
    assert "OK" in res.output
    # the steps of counted markets are graded with the outcome; the left-out ones stay pending
    steps = read_run_log(out / "rounds" / "0002" / "run.jsonl").steps
    truths = {s.event_id: s.grading.truth for s in steps}
    assert truths == {"m03": "Yes", "m04": "No", "m05": ""}
    # a restart of a finished service does nothing more
    before = (out / "ledger.jsonl").read_bytes()
    arena_live(write_plan(tmp_path, url, feed_url), clock=clock)
    assert (out / "ledger.jsonl").read_bytes() == before


def test_live_rounds_on_anvil(tmp_path: Path, fake: Any) -> None:
    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    clock, api, url, _feed = fake
    # the node's clock starts at the wall clock: the virtual one must not be behind it
    import time

    clock.t = max(clock.t, time.time() + 60)
    api.markets[:] = fake_markets(clock.t)
    t0 = clock.t
    plan = write_plan(tmp_path, url, None, backend="anvil", clock={"speed": 1.0})
    result = arena_live(plan, clock=clock)
    check_live_run(tmp_path / "live", api.markets, ledger=False)
    assert len(result.results) == 3
    assert all(r.round.commit_deadline.timestamp() > t0 for r in result.results)


class FlakyHttp:
    """A relayer behind a bad network: the first copy of each message gets a 502, the second is
    submitted and its answer lost (a timeout), later ones go through."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: dict[tuple[Any, ...], int] = {}
        self.forwarded: list[tuple[Any, ...]] = []

    def post(self, path: str, json: Any) -> Any:
        import httpx

        key = (path, json.get("round_id"), json.get("agent"))
        n = self.seen[key] = self.seen.get(key, 0) + 1
        if n == 1:
            return httpx.Response(502, json={"detail": "bad gateway"})
        self.forwarded.append(key)
        answer = self.inner.post(path, json=json)
        if n == 2:
            raise httpx.ReadTimeout("timed out")
        return answer


def test_relayer_errors_and_timeouts_are_retried_without_double_submission(
    tmp_path: Path, fake: Any
) -> None:
    from fastapi.testclient import TestClient

    from pastcast.agents import agent_spec
    from pastcast.arena import LedgerArena, LivePlan, LiveService, RelayerClient, create_relayer
    from pastcast.markets import PolymarketClient

    clock, api, url, _ = fake
    out = tmp_path / "live"
    out.mkdir()
    ledger = LedgerArena.create(out / "ledger.jsonl", clock=lambda: int(clock.now()))
    flaky = FlakyHttp(TestClient(create_relayer(ledger)))
    relayer = RelayerClient(http=flaky, retries=0, sleep=lambda s: None)
    plan = LivePlan(agents=tuple(agent_spec(a) for a in AGENTS), **TIMING)
    with PolymarketClient(url, url, url) as client:
        LiveService(plan, ledger, client, out, clock=clock, submitter=relayer).run()
    check_live_run(out, api.markets)
    # every message was sent again after a 502, its answer then lost, and it was taken once
    sent = {k: n for k, n in flaky.seen.items() if k[0] in ("/commit", "/reveal")}
    assert len(sent) == 18 and set(sent.values()) == {2}
    relayed = [k for k in flaky.forwarded if k[0] in ("/commit", "/reveal")]
    assert len(relayed) == len(set(relayed)) == 18
    lines = ledger_lines(out / "ledger.jsonl")
    commits = [x for x in lines if x["record"]["kind"] == "commit"]
    assert len(commits) == 9
    # the reasoning traces are published beside each commitment, signed by its agent
    for round_id in (1, 2, 3):
        published = flaky.inner.get(f"/reasoning/{round_id}").json()["reasoning"]
        assert len(published) == 3
        assert {len(p["traces"]) for p in published} == {3}
    first = flaky.inner.get("/reasoning/1").json()["reasoning"][0]
    again = flaky.inner.post("/reasoning", json=first)
    assert again.status_code == 409 and "already published" in again.json()["detail"]
    forged = {**first, "traces": [{"agent": "x", "market_id": "m00", "raw": "forged"}]}
    res = flaky.inner.post("/reasoning", json=forged)
    assert res.status_code == 400 and "signature" in res.json()["detail"]


def test_a_clock_jump_past_the_deadline_commits_nothing(tmp_path: Path, fake: Any) -> None:
    from pastcast.agents import agent_spec
    from pastcast.arena import LedgerArena, LivePlan, LiveService
    from pastcast.markets import PolymarketClient

    clock, _api, url, _ = fake
    out = tmp_path / "live"
    out.mkdir()
    ledger = LedgerArena.create(out / "ledger.jsonl", clock=lambda: int(clock.now()))
    sent: list[Any] = []

    class Spy:
        def commit(self, msg: Any) -> None:
            sent.append(msg)
            ledger.commit(msg)

        def reveal(self, msg: Any) -> None:
            ledger.reveal(msg)

    plan = LivePlan(agents=tuple(agent_spec(a) for a in AGENTS), **{**TIMING, "rounds": 1})
    with PolymarketClient(url, url, url) as client:
        service = LiveService(plan, ledger, client, out, clock=clock, submitter=Spy())
        service.tick()  # the round is created
        rnd = service.state.rounds[0]
        clock.t = rnd.commit_deadline - TIMING["commit_margin_s"]  # asleep through the lead time
        service.tick()
        clock.t = rnd.commit_deadline + 5
        service.tick()
    assert sent == []
    assert all(a.missed and not a.committed for a in service.state.rounds[0].agents.values())
    assert not [x for x in ledger_lines(out / "ledger.jsonl") if x["record"]["kind"] == "commit"]


def test_replay_and_live_write_the_same_schemas_scored_by_the_same_code(
    tmp_path: Path, fake: Any
) -> None:
    from datetime import UTC, datetime

    from arena_helpers import synthetic_dataset

    from pastcast.agents import agent_spec
    from pastcast.arena import LedgerArena, RoundPlan, arena_report, replay

    clock, _api, url, _feed = fake
    arena_live(write_plan(tmp_path, url, None), clock=clock)
    live = tmp_path / "live"
    rep = tmp_path / "replay"
    rep.mkdir()
    agents = tuple(agent_spec(a) for a in ("market", "random"))
    plan = RoundPlan(markets=3, rounds=2, start=datetime(2025, 1, 20, 16, tzinfo=UTC))
    arena = LedgerArena.create(rep / "ledger.jsonl", frozen_at=1_750_000_000)
    replay(synthetic_dataset(), None, agents, rep, arena, plan=plan)  # type: ignore[arg-type]

    live_log = read_run_log(live / "rounds" / "0001" / "run.jsonl")
    replay_log = read_run_log(rep / "run.jsonl")
    assert type(live_log.steps[0]) is type(replay_log.steps[0])
    assert set(live_log.steps[0].model_dump()) == set(replay_log.steps[0].model_dump())
    assert live_log.header.schema_version == replay_log.header.schema_version
    assert set(live_log.header.model_dump()) == set(replay_log.header.model_dump())
    kinds = {
        p: {x["record"]["kind"] for x in ledger_lines(p / "ledger.jsonl")} for p in (live, rep)
    }
    assert kinds[live] == kinds[rep]
    assert set(ledger_lines(live / "ledger.jsonl")[1]) == set(ledger_lines(rep / "ledger.jsonl")[1])
    for folder in (live, rep):
        results = read_results(folder / "rounds.jsonl")
        report = arena_report(results)  # one scorer for both
        assert {r.agent for r in report.leaderboard} >= {"market", "random"}
        for res in results:
            if res.scores:
                want = recompute(res)
                assert {a: (s.brier_bp, s.alpha_bp) for a, s in res.scores.items()} == {
                    a: want[a] for a in res.scores
                }


KILL_TIMING = {
    "markets": 3,
    "rounds": 3,
    "interval_s": 200,
    "commit_s": 500,
    "reveal_s": 300,
    "horizon_s": 900,
    "lead_time_s": 300,
    "commit_margin_s": 30,
    "poll_s": 10,
}
# Time runs ten times as fast as the wall clock. A round is created only while its agents can
# still be given their lead time (200 s of this plan's time, 20 s of the wall clock): a restart
# slower than that, as a loaded machine gives, skips the slot, as the service should, and the
# run is then not the one that never stopped.
SPEED = 10.0


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_service_killed_at_random_moments_and_restarted_loses_nothing(tmp_path: Path) -> None:
    """SIGKILL at random moments, restart with the same plan: no missed reveal, no double
    commit, no lost or duplicated run-log step, and the scores of a run that never stopped."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    from pastcast.arena import ScaledClock

    real0 = time.time()
    t0 = T0
    clock = ScaledClock(t0, real0, SPEED)
    # plenty of markets: under load the first start can come late, and the rounds with it
    # (no market resolves early here: which markets a round gets would then hang on when the
    # restarted service asked; the e2e tests cover it)
    markets = fake_markets(t0, base=1200, step=100, early=None, count=60)
    api = FakePolymarket(clock, markets)
    rng = random.Random(7)
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-c", "import sys; from pastcast.cli import main; sys.exit(main())"]
    kills = 0
    with serve(route=api.route) as url, serve(route=rss(t0, markets)) as feed_url:
        plan = write_plan(
            tmp_path,
            url,
            feed_url,
            **{**KILL_TIMING, "clock": {"speed": SPEED, "origin": t0, "real_origin": real0}},
        )
        deadline = time.time() + 1200
        while True:
            proc = subprocess.Popen(
                [*cmd, "arena", "live", str(plan)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            if kills < 6:
                try:
                    proc.wait(timeout=rng.uniform(2.0, 9.0))
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    kills += 1
                    continue
            else:
                proc.wait(timeout=max(deadline - time.time(), 1))
            err = proc.stderr.read().decode() if proc.stderr else ""
            assert proc.returncode == 0, err
            break
        out = tmp_path / "live"
        check_live_run(out, markets, timing=KILL_TIMING, strict=False)
        assert kills >= 3
        state = load_state(out / "state.json")
        assert state is not None

        # the same plan run without stopping, from the same first instant, scores the same
        ref = tmp_path / "ref"
        ref.mkdir()
        manual = ManualClock(state.rounds[0].created_at)
        api.clock = manual
        ref_plan = write_plan(ref, url, feed_url, **KILL_TIMING)
        arena_live(ref_plan, clock=manual)
    got = read_results(out / "rounds.jsonl")
    want = read_results(ref / "live" / "rounds.jsonl")
    assert [r.predictions for r in got] == [r.predictions for r in want]
    assert [r.scores for r in got] == [r.scores for r in want]
    assert [r.outcomes for r in got] == [r.outcomes for r in want]


def test_prices_after_the_cutoff_never_reach_an_episode(tmp_path: Path, fake: Any) -> None:
    """An API that answers past the asked end with the outcome's price: the service keeps only
    what was observed before the cutoff."""
    from datetime import UTC, datetime

    from pastcast.agents import agent_spec
    from pastcast.arena import LedgerArena, LivePlan, LiveService
    from pastcast.markets import PolymarketClient

    clock, api, url, _ = fake
    api.leak = True
    out = tmp_path / "live"
    out.mkdir()
    ledger = LedgerArena.create(out / "ledger.jsonl", clock=lambda: int(clock.now()))
    plan = LivePlan(agents=(agent_spec("market"),), **{**TIMING, "rounds": 1})
    with PolymarketClient(url, url, url) as client:
        service = LiveService(plan, ledger, client, out, clock=clock)
        while not service.state.rounds or not service.state.rounds[0].forecast:
            service.tick()
            clock.sleep(service._wait())
    inputs = json.loads((out / "rounds" / "0001" / "inputs.json").read_text())
    from datetime import date

    fakes = {m.mid: m for m in api.markets}
    for mid, beliefs in inputs["beliefs"].items():
        for b in beliefs:  # the fake's price is constant within a day: any leaked print shows
            day = datetime.combine(date.fromisoformat(b["day"]), datetime.min.time(), UTC)
            assert b["probs"]["Yes"] == pytest.approx(fakes[mid].price(day.timestamp()))
    steps = read_run_log(out / "rounds" / "0001" / "run.jsonl").steps
    assert steps and all(s.forecast.probs["Yes"] < 0.99 for s in steps)
