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
from live_fakes import (
    FakePolymarket,
    LateStory,
    ManualClock,
    fake_markets,
    rss,
    serve,
    stop_recorded_node,
)
from pastcast.owned import mark
from pastcast.runlog import read_run_log
from pastcast_arena import arena_live, verify_ledger
from pastcast_arena._contracts import find_foundry_tool
from pastcast_arena._live_plan import load_state
from pastcast_arena._replay import read_results

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


LATE_TITLE = "m01 happen later report"


@pytest.fixture
def fake() -> Any:
    clock = ManualClock(T0)
    markets = fake_markets(T0)
    api = FakePolymarket(clock, markets)
    # a story first carried between two rounds' cutoffs, dated ten days ahead by its feed
    late = LateStory(clock, T0 + 1000, T0 + 10 * 86400, LATE_TITLE, "Now m01 will happen.")
    with serve(route=api.route) as url, serve(route=rss(T0, markets, late)) as feed_url:
        yield clock, api, url, feed_url


def check_feed_served(out: Path, spool: Path) -> None:
    """The heuristic agent searched the live feed's documents, each dated strictly before its
    step's cutoff; the post-dated story is dated when the arena first saw it, and served only
    to steps after that."""
    from pastcast.app import corpus_documents

    docs = {d.id: d for d in corpus_documents(f"feed:{spool}")}
    late = [d for d in docs.values() if d.title == LATE_TITLE]
    assert len(late) == 1
    late_at = late[0].timestamp.timestamp()
    assert T0 + 1000 <= late_at < T0 + 86400  # first sight, not the feed's date
    served_late = []
    state = load_state(out / "state.json")
    assert state is not None
    for rnd in state.rounds:
        steps = read_run_log(out / "rounds" / f"{rnd.index:04d}" / "run.jsonl").steps
        heuristic = [s for s in steps if s.agent == "heuristic"]
        assert len(heuristic) == 3
        for step in heuristic:
            searches = [c for c in step.episode.tool_calls if c.name == "search"]
            assert searches and all(c.ok for c in searches)
            shown = {i for c in searches for i in c.doc_ids}
            assert shown and shown <= set(docs)  # from the feed, nothing else
            assert all(docs[i].timestamp < step.cutoff for i in shown)
            if late[0].id in shown:
                served_late.append(step.cutoff.timestamp())
    assert served_late and min(served_late) > late_at


def test_three_agents_play_three_live_rounds_on_the_ledger(tmp_path: Path, fake: Any) -> None:
    clock, api, url, feed_url = fake
    plan = write_plan(tmp_path, url, feed_url)
    result = arena_live(plan, clock=clock)
    out = tmp_path / "live"
    check_live_run(out, api.markets)
    assert len(result.results) == 3 and {r.agent for r in result.report.leaderboard} == set(AGENTS)
    assert (tmp_path / "spool").is_dir()
    check_feed_served(out, tmp_path / "spool")
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
    from pastcast.markets.sources._polymarket import PolymarketClient
    from pastcast_arena import LedgerArena, LiveService
    from pastcast_arena._live_plan import LivePlan
    from pastcast_arena._relayer import RelayerClient, create_relayer

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
    from pastcast.markets.sources._polymarket import PolymarketClient
    from pastcast_arena import LedgerArena, LiveService
    from pastcast_arena._live_plan import LivePlan

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
    from pastcast_arena import LedgerArena, RoundPlan, arena_report, replay

    clock, _api, url, _feed = fake
    arena_live(write_plan(tmp_path, url, None), clock=clock)
    live = tmp_path / "live"
    rep = tmp_path / "replay"
    rep.mkdir()
    agents = tuple(agent_spec(a) for a in ("market", "random"))
    plan = RoundPlan(markets=3, rounds=2, start=datetime(2025, 1, 20, 16, tzinfo=UTC))
    arena = LedgerArena.create(rep / "ledger.jsonl", clock=lambda: 1_750_000_000)
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
    "commit_s": 800,
    "reveal_s": 300,
    "horizon_s": 900,
    "lead_time_s": 300,
    "commit_margin_s": 30,
    "poll_s": 10,
}
# Time runs ten times as fast as the wall clock. A round is created only while its agents can
# still be given their lead time (500 s of this plan's time, 50 s of the wall clock): a restart
# slower than that, as a loaded machine gives, skips the slot, as the service should, and the
# run is then not the one that never stopped.
SPEED = 10.0


def _killed_and_restarted(tmp_path: Path, *, backend: str = "ledger") -> None:
    """SIGKILL at random moments, restart with the same plan: no missed reveal, no double
    commit, no lost or duplicated run-log step, and the scores of a run that never stopped. On
    anvil the node outlives the service; once it is killed too (as by a restarted machine) and
    comes back from its state file."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    from pastcast_arena._live_plan import ScaledClock

    real0 = time.time()
    t0 = T0
    clock = ScaledClock(t0, real0, SPEED)
    # plenty of markets: under load the first start can come late, and the rounds with it
    # (no market resolves early here: which markets a round gets would then hang on when the
    # restarted service asked; the e2e tests cover it)
    markets = fake_markets(t0, base=1200, step=100, early=None, count=60)
    api = FakePolymarket(clock, markets)
    rng = random.Random(7)
    root = Path(__file__).resolve().parents[2]  # the core's sources, the arena's beside them
    paths = [root / "src", root / "arena" / "src", os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths if str(p))}
    cmd = [sys.executable, "-c", "import sys; from pastcast.cli import main; sys.exit(main())"]
    kills = node_kills = 0
    out = tmp_path / "live"
    more: dict[str, Any] = {} if backend == "ledger" else {"backend": backend}
    try:
        with serve(route=api.route) as url, serve(route=rss(t0, markets)) as feed_url:
            plan = write_plan(
                tmp_path,
                url,
                feed_url,
                **{
                    **KILL_TIMING,
                    **more,
                    "clock": {"speed": SPEED, "origin": t0, "real_origin": real0},
                },
            )
            deadline = time.time() + 1200
            errors = []
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
                        errors.append(proc.stderr.read().decode() if proc.stderr else "")
                        if backend == "anvil" and kills >= 3 and not node_kills and _kill_node(out):
                            node_kills += 1
                        continue
                else:
                    proc.wait(timeout=max(deadline - time.time(), 1))
                err = proc.stderr.read().decode() if proc.stderr else ""
                errors.append(err)
                assert proc.returncode == 0, err
                break
            assert not [e for e in errors if "error:" in e], errors  # no start was refused
            check_live_run(
                out, markets, ledger=backend == "ledger", timing=KILL_TIMING, strict=False
            )
            assert kills >= 3
            state = load_state(out / "state.json")
            assert state is not None
            if backend == "anvil":
                # the finished service stopped its node; the chain holds each message once
                assert not _node_alive(out)
                assert node_kills == 1
                assert any("starting it again from" in e for e in errors), errors
                _check_chain(out)

            # the same plan run without stopping, from the same first instant, scores the same
            ref = tmp_path / "ref"
            ref.mkdir()
            manual = ManualClock(state.rounds[0].created_at)
            api.clock = manual
            ref_plan = write_plan(ref, url, feed_url, **KILL_TIMING)
            arena_live(ref_plan, clock=manual)
    finally:
        if backend == "anvil":
            stop_recorded_node(out / "node")
    got = read_results(out / "rounds.jsonl")
    want = read_results(ref / "live" / "rounds.jsonl")
    assert [r.predictions for r in got] == [r.predictions for r in want]
    assert [r.scores for r in got] == [r.scores for r in want]
    assert [r.outcomes for r in got] == [r.outcomes for r in want]


def _node_pid(out: Path) -> int | None:
    path = out / "node" / "node.json"
    return int(json.loads(path.read_text())["pid"]) if path.exists() else None


def _node_alive(out: Path) -> bool:
    import os

    pid = _node_pid(out)
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    return not cmdline.exists() or b"anvil" in cmdline.read_bytes()


def _kill_node(out: Path) -> bool:
    """SIGKILL the service's node once its last blocks are in its state file (anvil dumps it
    every second): a machine gone without notice."""
    import os
    import signal
    import time

    if not _node_alive(out):
        return False
    time.sleep(1.5)
    pid = _node_pid(out)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    while _node_alive(out):
        time.sleep(0.05)
    return True


def _check_chain(out: Path) -> None:
    """The chain (the node started again from its state file) holds each commit and reveal
    once, each inside its window, on the recorded deployment."""
    from pastcast_arena import attach_deployment, index_chain, lasting_node

    with lasting_node(out / "node") as node:
        arena = attach_deployment(out / "deployment.json", node.url)
        snap = index_chain(arena)
        w3 = arena.w3
        windows = {r.round_id: (r.commit_deadline, r.reveal_deadline) for r in snap.rounds}
        assert len(windows) == 3
        for rows, kind in ((snap.commits, "commit"), (snap.reveals, "reveal")):
            keys = [(r.round_id, r.agent) for r in rows]
            assert len(keys) == len(set(keys)) == 9, kind
            for r in rows:
                block = w3.eth.get_block(w3.eth.get_transaction(r.ref)["blockNumber"])
                commit_deadline, reveal_deadline = windows[r.round_id]
                if kind == "commit":
                    assert block["timestamp"] < commit_deadline
                else:
                    assert commit_deadline <= block["timestamp"] < reveal_deadline


@pytest.mark.waits  # minutes of a scaled clock, the CPU mostly idle
@pytest.mark.timeout(1500)
def test_a_service_killed_at_random_moments_and_restarted_loses_nothing(tmp_path: Path) -> None:
    _killed_and_restarted(tmp_path)


@pytest.mark.waits
@pytest.mark.timeout(1500)
def test_a_service_on_anvil_killed_and_restarted_reattaches_and_loses_nothing(
    tmp_path: Path,
) -> None:
    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    _killed_and_restarted(tmp_path, backend="anvil")


def test_prices_after_the_cutoff_never_reach_an_episode(tmp_path: Path, fake: Any) -> None:
    """An API that answers past the asked end with the outcome's price: the service keeps only
    what was observed before the cutoff."""
    from datetime import UTC, datetime

    from pastcast.agents import agent_spec
    from pastcast.markets.sources._polymarket import PolymarketClient
    from pastcast_arena import LedgerArena, LiveService
    from pastcast_arena._live_plan import LivePlan

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
            clock.sleep(service.wait())
    inputs = json.loads((out / "rounds" / "0001" / "inputs.json").read_text())
    from datetime import date

    fakes = {m.mid: m for m in api.markets}
    for mid, beliefs in inputs["beliefs"].items():
        for b in beliefs:  # the fake's price is constant within a day: any leaked print shows
            day = datetime.combine(date.fromisoformat(b["day"]), datetime.min.time(), UTC)
            assert b["probs"]["Yes"] == pytest.approx(fakes[mid].price(day.timestamp()))
    steps = read_run_log(out / "rounds" / "0001" / "run.jsonl").steps
    assert steps and all(s.forecast.probs["Yes"] < 0.99 for s in steps)


def test_attaching_to_another_chain_or_to_missing_contracts_is_refused(tmp_path: Path) -> None:
    from pastcast_arena import EvmArena, attach_deployment, local_node
    from pastcast_arena._chain import write_deployment

    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    with local_node() as node:
        arena = EvmArena.connect(node.url)
        path = write_deployment(arena, tmp_path / "deployment.json", node.url)
        again = attach_deployment(path, node.url)
        assert again.addresses() == arena.addresses() and again.domain == arena.domain
        record = json.loads(path.read_text())

        def refused(change: dict[str, Any], match: str) -> None:
            path.write_text(json.dumps({**record, **change}))
            with pytest.raises(ValueError, match=match):
                attach_deployment(path, node.url)

        _refusals(record, refused)


def _refusals(record: dict[str, Any], refused: Any) -> None:

    refused({"chain_id": 137}, r"deployment.json: field chain_id: 137, but the node at .* chain")
    contracts = record["contracts"]
    nowhere = "0x" + "11" * 20
    refused(
        {"contracts": {**contracts, "PredictionArena": nowhere}},
        rf"field contracts.PredictionArena: no contract at {nowhere}",
    )
    other = contracts["AgentRegistry"]  # code there, but not this deployment's registry
    refused(
        {"contracts": {**contracts, "ReputationRegistry": other}},
        rf"field contracts.ReputationRegistry: {other}, but the deployment .* has",
    )
    refused(
        {"contracts": {**contracts, "PredictionArena": other}},
        rf"field contracts.PredictionArena: {other}: not an arena",
    )


def test_a_live_plan_on_a_node_of_another_chain_is_refused_naming_the_field(
    tmp_path: Path,
) -> None:
    from pastcast.errors import FieldError
    from pastcast_arena import local_node

    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    with local_node(chain_id=4242) as node:
        plan = write_plan(tmp_path, "http://127.0.0.1:9", None, backend="evm", rpc_url=node.url)
        (tmp_path / "live").mkdir()
        mark(tmp_path / "live", "arena-live")  # an earlier run's folder
        nowhere = "0x" + "22" * 20
        record = {"chain_id": 31337, "contracts": {"ReputationRegistry": nowhere}}
        deployment = tmp_path / "live" / "deployment.json"
        deployment.write_text(json.dumps(record))
        with pytest.raises(FieldError, match=r"deployment.json: field chain_id: 31337") as err:
            arena_live(plan)
        assert err.value.field == "out"
        deployment.write_text(json.dumps({**record, "chain_id": 4242}))
        with pytest.raises(FieldError, match=r"field contracts.ReputationRegistry: no contract at"):
            arena_live(plan)
        assert not (tmp_path / "live" / "state.json").exists()
        assert json.loads(deployment.read_text())["chain_id"] == 4242  # nothing redeployed


def test_outcomes_come_from_a_conditional_tokens_contract_already_on_the_chain(
    tmp_path: Path, fake: Any
) -> None:
    """Polymarket's side resolves its own conditional tokens (here the mock, deployed and
    reported by another account than the arena's); the service reports nothing and the arena
    scores what that contract holds, not what Gamma says."""
    import time

    from pastcast_arena import artifacts, lasting_node
    from pastcast_arena._chain import node_web3
    from pastcast_arena._records import OUTCOME_EXCLUDED

    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    clock, api, url, _feed = fake
    clock.t = max(clock.t, time.time() + 60)
    t0 = clock.t
    # Yes listed first, as Polymarket does: the arena reads YES from slot 0; one market of the
    # second round resolves before its reveal window closes
    api.markets[:] = fake_markets(t0, step=300, count=40, early="m08", void="m10")
    out = tmp_path / "live"
    out.mkdir()
    mark(out, "arena-live")  # the arena's folder, made first to hold Polymarket's node
    with lasting_node(out / "node", timestamp=int(t0)) as node:  # Polymarket's chain
        w3 = node_web3(node.url)
        oracle = w3.eth.accounts[1]
        art = artifacts()["MockConditionalTokens"]
        factory = w3.eth.contract(abi=art["abi"], bytecode=art["bytecode"])
        tx = factory.constructor().transact({"from": oracle})
        ctf_address = w3.eth.wait_for_transaction_receipt(tx).contractAddress
    # the chain's own judgement, the opposite of Gamma's for every market it does not void
    flipped = {"Yes": "No", "No": "Yes", "void": "void"}
    ctf_winner = {m.mid: flipped[m.winner] for m in api.markets}
    reported: set[str] = set()

    def polymarket_resolves() -> bool:  # between the service's ticks
        due = [m for m in api.markets if m.resolve_at <= clock.now() and m.mid not in reported]
        if not due:
            return False
        # the node is the service's now: reached by the URL it recorded
        chain = node_web3(json.loads((out / "node" / "node.json").read_text())["url"])
        ctf = chain.eth.contract(address=ctf_address, abi=art["abi"])
        for m in due:
            outcomes = ["Yes", "No"] if m.yes_first else ["No", "Yes"]
            win = ctf_winner[m.mid]
            nums = [1, 1] if win == "void" else [int(o == win) for o in outcomes]
            tx = ctf.functions.reportPayouts(bytes.fromhex(m.condition[2:]), nums)
            chain.eth.wait_for_transaction_receipt(tx.transact({"from": oracle}))
            reported.add(m.mid)
        return False

    plan = write_plan(
        tmp_path,
        url,
        None,
        backend="anvil",
        clock={"speed": 1.0},
        ctf_address=ctf_address,
        yes_index=0,
    )
    notes: list[str] = []
    try:
        result = arena_live(plan, clock=clock, stop=polymarket_resolves, note=notes.append)
    finally:
        stop_recorded_node(out / "node")
    assert any("starting it again from" in n for n in notes)
    deployment = json.loads((out / "deployment.json").read_text())
    assert deployment["contracts"]["ConditionalTokens"] == ctf_address
    assert "MockConditionalTokens" not in deployment["contracts"]
    state = load_state(out / "state.json")
    assert state is not None and [r.status for r in state.rounds] == ["scored"] * 3
    fakes = {m.mid: m for m in api.markets}
    seen_early = seen_void = 0
    for res in result.results:
        rnd = next(r for r in state.rounds if r.round_id == res.round.round_id)
        assert not rnd.excluded
        for m, o in zip(res.round.markets, res.outcomes, strict=True):
            assert fakes[m.market_id].yes_first  # YES in the slot the arena reads
            win = ctf_winner[m.market_id]
            assert o == (OUTCOME_EXCLUDED if win == "void" else int(win == "Yes")), m.market_id
            seen_void += win == "void"
            if m.market_id == "m08":  # counted by the contract: it knows no resolution time
                assert "m08" in rnd.early and o != OUTCOME_EXCLUDED
                seen_early += 1
        want = recompute(res)
        assert {a: (s.brier_bp, s.alpha_bp) for a, s in res.scores.items()} == want
    assert seen_early == 1 and seen_void == 1
    # the run logs are graded with the chain's outcomes
    for rnd in state.rounds:
        for step in read_run_log(out / "rounds" / f"{rnd.index:04d}" / "run.jsonl").steps:
            win = ctf_winner[step.event_id]
            assert step.grading.truth == ("" if win == "void" else win)


def test_live_never_writes_into_a_folder_pastcast_did_not_make(tmp_path: Path, fake: Any) -> None:
    """The plan's ``out`` is claimed as every other writer's folder: a folder of the user's is
    refused (exit 2, one ``error:`` line) with nothing written; an empty one is taken."""
    from typer.testing import CliRunner

    from pastcast.cli import app

    _clock, _api, url, _feed = fake
    plan = write_plan(tmp_path, url)
    mine = tmp_path / "live"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes")
    result = CliRunner().invoke(app, ["arena", "live", str(plan)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "out" in result.stderr and "not made by pastcast" in result.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
