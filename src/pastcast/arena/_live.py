"""Live rounds: a replay whose cutoff is now.

Open binary markets are discovered on Polymarket's Gamma API, a round of them is created on the
arena with a commit deadline and a reveal window, and every agent forecasts the same markets
through the normal machinery (``run_benchmark`` over one step per market, in the round's own
run log) at one instant within ``lead_time_s`` of the commit deadline: the episode's cutoff is
that instant, so market tools see only prices observed before it and the corpus only documents
it held before it. Commitments are signed (EIP-712) and sent to the arena or a relayer before
the deadline, revealed inside the window, the benchmark price is the order book's mid observed
before the deadline, outcomes are the conditional-token payouts of the resolved markets, and
scores and the leaderboard are the arena's (``arena_report`` over the indexed results), exactly
as in a replay.

Every action is idempotent and preceded by a write of the state file (``_live_state``): an
action the arena already holds is recognised (the contract's refusals, the index) and not
repeated, so a restart at any moment misses no reveal and commits nothing twice.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, model_validator

from pastcast.agents import agent_info
from pastcast.arena._backend import ArenaBackend, ArenaRejected
from pastcast.arena._live_state import AgentRound, LiveState, RoundState, load_state, save_state
from pastcast.arena._play import Submitter, agent_key
from pastcast.arena._protocol import (
    commitment,
    new_salt,
    sign_commit,
    sign_reasoning,
    sign_reveal,
)
from pastcast.arena._records import ArenaMarket, BenchmarkPrice, Round, RoundResult
from pastcast.arena._replay import arena_name, prediction_bp
from pastcast.arena._rounds import benchmark_from_book, benchmark_from_trades
from pastcast.arena._scoring import YES_INDEX, payouts_for
from pastcast.arena._snapshot import ArenaSnapshot
from pastcast.arena._stats import ArenaReport, arena_report
from pastcast.atomic import write_atomic
from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig
from pastcast.markets import (
    OpenMarket,
    PolymarketClient,
    PolymarketError,
    daily_yes_beliefs,
    open_market,
    resolution_payouts,
)
from pastcast.records import BINARY_LABELS, DailyBelief, Event, Record, StepSpec
from pastcast.runlog import AgentSpec, StepRecord, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import score_forecast

__all__ = [
    "Clock",
    "LivePlan",
    "LiveResult",
    "LiveService",
    "RelayerClient",
    "RelayerUnavailable",
    "ScaledClock",
    "SystemClock",
]

log = logging.getLogger(__name__)

LEAD_TIME_S = 600
STATE_FILE = "state.json"
DATASET_ID = "polymarket-live"
_HEX32_LEN = 66


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0))


@dataclass(frozen=True)
class ScaledClock:
    """Time compressed ``speed`` times: ``origin`` when the wall clock read ``real_origin``. A
    restarted process given the same three numbers reads the same time."""

    origin: float
    real_origin: float
    speed: float = 1.0

    def now(self) -> float:
        return self.origin + (time.time() - self.real_origin) * self.speed

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0) / self.speed)


class LivePlan(Record):
    """How the live arena runs its rounds (times in seconds)."""

    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    markets: int = Field(default=3, ge=1, le=64)
    rounds: int | None = Field(default=None, ge=1)
    """Stop after this many rounds are finished (None: run until stopped)."""
    interval_s: int = Field(default=86_400, ge=1)
    """A new round every ``interval_s``."""
    commit_s: int = Field(default=86_400, ge=1)
    """From the round's creation to its commit deadline."""
    reveal_s: int = Field(default=86_400, ge=1)
    horizon_s: int = Field(default=7 * 86_400, ge=1)
    """Markets must end within this long after the reveal deadline; a round is scored when its
    markets resolved or this long after its reveal deadline."""
    lead_time_s: int = Field(default=LEAD_TIME_S, ge=1)
    commit_margin_s: int = Field(default=30, ge=0)
    """No commitment is signed or sent later than this before the deadline."""
    poll_s: float = Field(default=60.0, gt=0)
    min_volume_24h: float = Field(default=0.0, ge=0)
    min_liquidity: float = Field(default=0.0, ge=0)
    env: EnvConfig = Field(default_factory=EnvConfig)

    @model_validator(mode="after")
    def _windows(self) -> LivePlan:
        if self.commit_margin_s >= self.lead_time_s:
            raise ValueError("commit_margin_s must be below lead_time_s")
        if self.lead_time_s > self.commit_s:
            raise ValueError("lead_time_s must not exceed commit_s")
        names = [arena_name(a) for a in self.agents]
        if len(set(names)) != len(names):
            raise ValueError(f"two agents share an arena name: {names}")
        return self


@dataclass(frozen=True)
class LiveResult:
    results: tuple[RoundResult, ...]
    report: ArenaReport | None
    """None before any round is scored."""
    state: LiveState
    out: Path

    def round_states(self) -> list[dict[str, Any]]:
        """Each round's index, arena round id and status."""
        return [
            {"index": r.index, "round_id": r.round_id, "status": r.status}
            for r in self.state.rounds
        ]

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a live run: its folder, rounds and leaderboard."""
        board = [] if self.report is None else self.report.leaderboard
        return {
            "out": str(self.out),
            "rounds": self.round_states(),
            "leaderboard": [row.model_dump(mode="json") for row in board],
        }


class RelayerUnavailable(RuntimeError):
    """The relayer did not answer (timeouts, 5xx, 429) after the retries."""


class RelayerClient:
    """Sends signed messages to a relayer (``POST /commit``, ``/reveal``), retrying what did not
    get an answer. A retried message is the same signed message: the arena accepts it once
    (``already committed`` on a second copy), so retries never submit twice."""

    def __init__(
        self,
        url: str | None = None,
        *,
        http: Any = None,
        retries: int = 3,
        backoff_s: float = 0.2,
        timeout_s: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        self.http = (
            http if http is not None else httpx.Client(base_url=url or "", timeout=timeout_s)
        )
        self.retries, self.backoff_s, self.sleep = retries, backoff_s, sleep
        self.reasoning: bool | None = None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        last = ""
        for attempt in range(self.retries + 1):
            try:
                resp = self.http.post(path, json=body)
            except httpx.HTTPError as exc:  # a timeout or a dropped connection
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status_code == 200:
                    return dict(resp.json())
                detail = _detail(resp)
                if resp.status_code in (400, 409):
                    raise ArenaRejected(detail)
                if resp.status_code == 404:
                    raise LookupError(f"POST {path}: 404 {detail}")
                last = f"HTTP {resp.status_code}: {detail}"
            if attempt < self.retries:
                self.sleep(self.backoff_s * 2**attempt)
        raise RelayerUnavailable(f"POST {path}: {last}")

    def commit(self, msg: Any) -> None:
        self._post("/commit", msg.model_dump(mode="json"))

    def reveal(self, msg: Any) -> None:
        self._post("/reveal", msg.model_dump(mode="json"))

    def publish_reasoning(self, body: dict[str, Any]) -> bool:
        """Publish reasoning traces beside a signed submission; False when the relayer has no
        ``/reasoning`` endpoint (then they stay in the round's folder only)."""
        if self.reasoning is False:
            return False
        try:
            self._post("/reasoning", body)
        except LookupError:
            self.reasoning = False
            return False
        self.reasoning = True
        return True


def _detail(resp: Any) -> str:
    try:
        return str(resp.json().get("detail", resp.text))
    except (ValueError, AttributeError):
        return str(resp.text)[:200]


class _Direct:
    def __init__(self, backend: ArenaBackend) -> None:
        self.backend = backend

    def commit(self, msg: Any) -> None:
        self.backend.commit(msg)

    def reveal(self, msg: Any) -> None:
        self.backend.reveal(msg)


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def _snapshot(backend: ArenaBackend) -> ArenaSnapshot:
    snap = getattr(backend, "snapshot", None)
    if callable(snap):
        return snap()  # type: ignore[no-any-return]
    from pastcast.arena._indexer import index_chain

    return index_chain(backend)  # type: ignore[arg-type]


def arena_market(m: OpenMarket) -> ArenaMarket:
    return ArenaMarket(
        market_id=m.market_id, condition_id=m.condition_id, question=m.question, category=m.category
    )


CorpusAt = Callable[[datetime], CorpusBackend | None]


class LiveService:
    """Runs live rounds on ``backend`` from ``client``'s markets, state in ``out``."""

    def __init__(
        self,
        plan: LivePlan,
        backend: ArenaBackend,
        client: PolymarketClient,
        out: str | Path,
        *,
        clock: Clock | None = None,
        keys: Mapping[str, str] | None = None,
        submitter: Submitter | None = None,
        corpus: CorpusAt | None = None,
        on_tick: Callable[[], None] | None = None,
        sync_clock: bool = False,
        yes_index: int = YES_INDEX,
    ) -> None:
        self.plan, self.backend, self.client = plan, backend, client
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.clock = clock or SystemClock()
        self.names = [arena_name(a) for a in plan.agents]
        self.specs = dict(zip(self.names, plan.agents, strict=True))
        self.keys = {n: (keys or {}).get(n) or agent_key(n) for n in self.names}
        self.submitter = submitter or _Direct(backend)
        self.corpus = corpus
        self.on_tick = on_tick
        self.sync_clock = sync_clock
        self.yes_index = yes_index
        # outcomes are the payouts a conditional-tokens contract on the chain holds, reported by
        # its own oracle (Polymarket's): this service reads them and reports none
        self.external_ctf = bool(getattr(backend, "external_ctf", False))
        self.state_path = self.out / STATE_FILE
        self.state = self._open_state()
        self._reconcile()

    # -- state --------------------------------------------------------------------------
    def _open_state(self) -> LiveState:
        identity = self.backend.domain.model_dump_json()
        state = load_state(self.state_path)
        if state is None:
            state = LiveState(arena=identity, next_round_at=self.clock.now())
            self._save(state)
        elif state.arena != identity:
            raise ValueError(
                f"{self.state_path}: written for another arena ({state.arena}), not {identity}"
            )
        for name in self.names:
            if name not in state.agents:
                state.agents[name] = self._register(name)
                self._save(state)
        return state

    def _reconcile(self) -> None:
        """Take back, for rounds still running, what the state says the arena holds and it does
        not (a node started again from a state file a little older than its last blocks): the
        round is created, the messages are sent again (the arena takes a copy once)."""
        snap = _snapshot(self.backend)
        rounds = {r.round_id: r for r in snap.rounds}
        commits = {(c.round_id, c.agent.lower()) for c in snap.commits}
        reveals = {(r.round_id, r.agent.lower()) for r in snap.reveals}
        triggered = {o.round_id for o in snap.outcomes}
        changed = False
        for rnd in self.state.rounds:
            if rnd.finished or rnd.round_id is None:
                continue
            held = rounds.get(rnd.round_id)
            if held is None or held.commit_deadline != rnd.commit_deadline:
                log.warning("round %d is not on the arena: created again", rnd.index)
                rnd.round_id, rnd.creating, rnd.benchmarks_set = None, True, False
                for slot in rnd.agents.values():
                    slot.commit = slot.reveal = None
                    slot.committed = slot.revealed = False
                changed = True
                continue
            if rnd.benchmarks_set and not held.benchmarks:
                rnd.benchmarks_set, changed = False, True
            if rnd.triggered and rnd.round_id not in triggered:
                rnd.triggered, changed = False, True
            for name, slot in rnd.agents.items():
                key = (rnd.round_id, self.state.agents[name].lower())
                if slot.committed and key not in commits:
                    slot.committed, changed = False, True
                if slot.revealed and key not in reveals:
                    slot.revealed, changed = False, True
        registered = {a.address.lower() for a in snap.agents}
        for name, address in self.state.agents.items():
            if name in self.specs and address.lower() not in registered:
                self._register(name)
        if changed:
            self._save()

    def _save(self, state: LiveState | None = None) -> None:
        save_state(self.state_path, state or self.state)

    def _register(self, name: str) -> str:
        from eth_account import Account

        address = str(Account.from_key(self.keys[name]).address)
        try:
            self.backend.register(self.keys[name], name)
        except ArenaRejected as exc:
            if exc.reason != "Registry: already registered":
                raise
        return address

    # -- the loop -----------------------------------------------------------------------
    def now(self) -> float:
        return self.clock.now()

    def _sync(self) -> None:
        if self.sync_clock:
            t = int(self.now())
            if t > self.backend.now():
                self.backend.advance_to(t)

    def done(self) -> bool:
        rounds = self.state.rounds
        n = self.plan.rounds
        return n is not None and len(rounds) >= n and all(r.finished for r in rounds)

    def run(self, *, stop: Callable[[], bool] | None = None) -> LiveResult:
        """Tick until the plan's rounds are finished (or ``stop`` says so)."""
        while not self.done() and not (stop is not None and stop()):
            self.tick()
            self.clock.sleep(self._wait())
        return self.result()

    def _wait(self) -> float:
        """Until the next thing to do, at most ``poll_s``."""
        t = self.now()
        upcoming = [self.state.next_round_at]
        for r in self.state.rounds:
            if r.finished:
                continue
            upcoming += [
                r.commit_deadline - self.plan.lead_time_s,
                r.commit_deadline,
                r.reveal_deadline,
                r.reveal_deadline + self.plan.horizon_s,
            ]
        soon = [u - t for u in upcoming if u > t]
        return min([self.plan.poll_s, *soon]) if soon else self.plan.poll_s

    def tick(self) -> None:
        """One pass: every action due now, each idempotent."""
        if self.on_tick is not None:
            try:
                self.on_tick()
            except Exception as exc:  # a feed that fails must not stop the arena
                log.warning("live tick hook failed: %s", exc)
        self._sync()
        if self.now() >= self.state.next_round_at and (
            self.plan.rounds is None or len(self.state.rounds) < self.plan.rounds
        ):
            self._new_round()
        for rnd in self.state.rounds:
            if not rnd.finished:
                self._advance(rnd)

    # -- discovery ----------------------------------------------------------------------
    def _used(self) -> set[str]:
        return {m.market_id for r in self.state.rounds for m in r.markets}

    def discover(self, commit_deadline: int, reveal_deadline: int) -> list[OpenMarket]:
        """Open binary markets ending after the reveal window and within the horizon, by 24-hour
        volume, then liquidity, then id; markets of earlier rounds are not reused."""
        lo, hi = reveal_deadline, reveal_deadline + self.plan.horizon_s
        raw = self.client.open_markets(_utc(lo), _utc(hi))
        used = self._used()
        found: dict[str, OpenMarket] = {}
        for item in raw:
            try:
                m = open_market(item)
            except PolymarketError as exc:
                log.warning("skipping a market: %s", exc)
                continue
            if m is None or m.market_id in used or m.market_id in found:
                continue
            end = m.end_date.timestamp()
            if not lo < end <= hi or len(m.condition_id) != _HEX32_LEN:
                continue
            if m.volume_24h < self.plan.min_volume_24h or m.liquidity < self.plan.min_liquidity:
                continue
            if self.external_ctf and m.yes_index != self.yes_index:
                continue  # the arena reads YES from one slot of the tokens' payouts
            if self.external_ctf and self._payouts(m) is not None:
                continue  # already resolved on the chain
            found[m.market_id] = m
        ranked = sorted(found.values(), key=lambda m: (-m.volume_24h, -m.liquidity, m.market_id))
        return ranked[: self.plan.markets]

    def _new_round(self) -> None:
        # rounds keep to their schedule, whenever the tick that creates them comes: a slot too
        # late to give the agents their lead time is skipped
        t = self.now()
        sched = self.state.next_round_at
        while t >= sched + self.plan.commit_s - self.plan.lead_time_s:
            sched += self.plan.interval_s
        if t < sched:
            self.state.next_round_at = sched
            self._save()
            return
        commit_deadline = int(sched) + self.plan.commit_s
        reveal_deadline = commit_deadline + self.plan.reveal_s
        try:
            chosen = self.discover(commit_deadline, reveal_deadline)
        except (PolymarketError, OSError) as exc:  # Gamma is down: asked again next tick
            log.warning("discovery failed: %s", exc)
            return
        self.state.next_round_at = sched + self.plan.interval_s
        if len(chosen) < self.plan.markets:
            log.warning("only %d qualifying markets: no round now", len(chosen))
            self._save()
            return
        rnd = RoundState(
            index=len(self.state.rounds) + 1,
            created_at=sched,
            commit_deadline=commit_deadline,
            reveal_deadline=reveal_deadline,
            markets=tuple(chosen),
            creating=True,
            agents={n: AgentRound() for n in self.names},
        )
        self.state.rounds.append(rnd)
        self._save()

    # -- one round ----------------------------------------------------------------------
    def _advance(self, rnd: RoundState) -> None:
        if rnd.round_id is None and not self._create(rnd):
            return
        t = self.now()
        if t < rnd.commit_deadline:
            self._observe_book(rnd)
            if t >= rnd.commit_deadline - self.plan.lead_time_s:
                self._forecast(rnd)
                self._commit_all(rnd)
                self._publish_all(rnd)
            return
        self._give_up_commits(rnd, "the commit deadline passed before the commitment was sent")
        if t < rnd.reveal_deadline:
            self._publish_all(rnd)
        if not rnd.benchmarks_set:
            self._benchmarks(rnd)
        if t < rnd.reveal_deadline:
            self._reveal_all(rnd)
            self._watch_early(rnd)
            return
        self._give_up_reveals(rnd)
        if not rnd.benchmarks_set:  # no price could be read: the round cannot be scored
            if t >= rnd.reveal_deadline + self.plan.horizon_s:
                rnd.status = "abandoned"
                self._save()
            return
        self._outcomes(rnd)

    def _create(self, rnd: RoundState) -> bool:
        ids = tuple(m.condition_id.lower() for m in rnd.markets)
        # a create whose answer a kill lost: the arena holds a round with the same markets and
        # deadlines, which is this one
        for r in _snapshot(self.backend).rounds:
            if (
                tuple(c.lower() for c in r.condition_ids) == ids
                and r.commit_deadline == rnd.commit_deadline
                and r.reveal_deadline == rnd.reveal_deadline
            ):
                rnd.round_id, rnd.creating = r.round_id, False
                self._save()
                return True
        if self.now() >= rnd.commit_deadline - self.plan.lead_time_s:
            rnd.status = "abandoned"  # too late to give the agents their lead time
            self._save()
            return False
        rnd.round_id = self.backend.create_round(ids, rnd.commit_deadline, rnd.reveal_deadline)
        rnd.creating = False
        self._save()
        return True

    def _observe_book(self, rnd: RoundState) -> None:
        """The latest book mid before the deadline, for the benchmark price."""
        t = self.now()
        if t < rnd.commit_deadline - self.plan.lead_time_s:
            return
        changed = False
        for m in rnd.markets:
            try:
                quotes = self.client.best_quotes(m.yes_token)
            except PolymarketError as exc:
                log.warning("book of %s: %s", m.market_id, exc)
                continue
            if quotes is None:
                continue
            try:
                price = benchmark_from_book(
                    m.market_id, quotes[0], quotes[1], _utc(t), _utc(rnd.commit_deadline)
                )
            except ValueError:
                continue
            rnd.books[m.market_id] = price
            changed = True
        if changed:
            self._save()

    def _round_dir(self, rnd: RoundState) -> Path:
        folder = self.out / "rounds" / f"{rnd.index:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _inputs(self, rnd: RoundState, cutoff: datetime) -> Dataset:
        """The round's events and the price history before the cutoff, fetched once and kept
        beside the run log, so a resumed run forecasts on the same data."""
        path = self._round_dir(rnd) / "inputs.json"
        if path.exists():
            raw = json.loads(path.read_text(encoding="utf-8"))
            events = tuple(Event.model_validate(e) for e in raw["events"])
            beliefs = {
                k: tuple(DailyBelief.model_validate(b) for b in v)
                for k, v in raw["beliefs"].items()
            }
        else:
            events = tuple(
                Event(
                    id=m.market_id,
                    title=m.question or m.market_id,
                    kind="binary",
                    labels=BINARY_LABELS,
                    category=m.category,
                    open_time=m.start_date or cutoff - timedelta(days=30),
                    close_time=m.end_date,
                    source="polymarket",
                )
                for m in rnd.markets
            )
            beliefs = {}
            for m in rnd.markets:
                start = m.start_date or cutoff - timedelta(days=30)
                try:
                    obs = self.client.price_history(m.yes_token, start, cutoff)
                except PolymarketError as exc:
                    log.warning("price history of %s: %s", m.market_id, exc)
                    obs = []
                beliefs[m.market_id] = daily_yes_beliefs(
                    m.market_id, [(t, p) for t, p in obs if t < cutoff.timestamp()]
                )
            body = {
                "events": [e.model_dump(mode="json") for e in events],
                "beliefs": {k: [b.model_dump(mode="json") for b in v] for k, v in beliefs.items()},
            }
            write_atomic(path, json.dumps(body, indent=1) + "\n")
        steps = tuple(StepSpec(event_id=e.id, step_index=0, cutoff=cutoff) for e in events)
        return Dataset(DATASET_ID, events, {}, beliefs, steps, pending=True)

    def _forecast(self, rnd: RoundState) -> None:
        if rnd.forecast:
            return
        if rnd.cutoff is None:
            if self.now() >= rnd.commit_deadline - self.plan.commit_margin_s:
                return  # too late to forecast and commit: _give_up_commits records it
            # the moment forecasting is due (the lead time before the deadline), not the tick
            # that noticed it: the same whenever the process came up, so a restarted service
            # forecasts on the same information as one that never stopped
            rnd.cutoff = float(rnd.commit_deadline - self.plan.lead_time_s)
            self._save()
        cutoff = _utc(rnd.cutoff)
        dataset = self._inputs(rnd, cutoff)
        run_log = self._round_dir(rnd) / "run.jsonl"
        config = RunConfig(agents=self.plan.agents, env=self.plan.env)
        corpus = self.corpus(cutoff) if self.corpus is not None else None
        run_benchmark(dataset, corpus, config, run_log, progress=False)
        records = read_run_log(run_log).steps
        forecasts = {(r.agent, r.setting, r.event_id): r for r in records}
        traces = []
        for name in self.names:
            spec, slot = self.specs[name], rnd.agents[name]
            if slot.predictions is not None:
                continue
            row, usable = [], 0
            for m in rnd.markets:
                rec = forecasts.get((spec.name, spec.setting, m.market_id))
                bp, ok = prediction_bp(rec.forecast if rec is not None else None)
                row.append(bp)
                usable += ok
                if rec is not None:
                    traces.append(
                        {"agent": name, "market_id": m.market_id, "raw": rec.forecast.raw_text}
                    )
            slot.predictions, slot.usable = tuple(row), usable
            slot.salt = new_salt()  # on disk before any commitment is made from it
        rnd.forecast = True
        self._save()
        if traces:
            path = self._round_dir(rnd) / "reasoning.jsonl"
            write_atomic(path, "".join(json.dumps(t) + "\n" for t in traces))

    def _submitted(self, kind: str, round_id: int, agent: str) -> bool:
        snap = _snapshot(self.backend)
        rows = snap.commits if kind == "commit" else snap.reveals
        return any(r.round_id == round_id and r.agent.lower() == agent.lower() for r in rows)

    def _send(self, kind: str, slot: AgentRound, agent: str, round_id: int) -> bool:
        """Send the stored message; True once the arena holds it."""
        msg = slot.commit if kind == "commit" else slot.reveal
        assert msg is not None
        try:
            if kind == "commit":
                self.submitter.commit(msg)  # type: ignore[arg-type]
            else:
                self.submitter.reveal(msg)  # type: ignore[arg-type]
        except ArenaRejected as exc:
            if self._submitted(kind, round_id, agent):
                return True  # a copy the arena already took (a retried or resumed send)
            if "invalid nonce" in exc.reason:
                # the nonce moved on without this message (another message took it): sign anew
                if kind == "commit":
                    slot.commit = None
                else:
                    slot.reveal = None
                self._save()
                return False
            # refused for good (a deadline passed, say): recorded, never sent again
            slot.missed = f"{kind} refused: {exc.reason}"
            self._save()
            return False
        except (RelayerUnavailable, OSError) as exc:
            log.warning("%s of round %d by %s not sent yet: %s", kind, round_id, agent, exc)
            return self._submitted(kind, round_id, agent)
        return True

    def _commit_all(self, rnd: RoundState) -> None:
        assert rnd.round_id is not None
        for name in self.names:
            slot = rnd.agents[name]
            if slot.committed or slot.missed or slot.predictions is None or slot.salt is None:
                continue
            # the clock may have jumped: nothing is signed or sent at or after the margin
            if self.now() >= rnd.commit_deadline - self.plan.commit_margin_s:
                return
            agent = self.state.agents[name]
            if slot.commit is None:
                if self._submitted("commit", rnd.round_id, agent):
                    slot.committed = True
                    self._save()
                    continue
                c = commitment(rnd.round_id, slot.predictions, slot.salt)
                slot.commit = sign_commit(
                    self.keys[name],
                    self.backend.domain,
                    rnd.round_id,
                    c,
                    self.backend.nonce(agent),
                    rnd.commit_deadline - 1,
                )
                self._save()
            if self._send("commit", slot, agent, rnd.round_id):
                slot.committed = True
                self._save()

    def _publish_all(self, rnd: RoundState) -> None:
        """Reasoning traces beside each commitment, where the relayer takes them (retried each
        tick until it answers)."""
        for name in self.names:
            slot = rnd.agents[name]
            if slot.committed and not slot.reasoning:
                where = self._publish(rnd, name)
                if where:
                    slot.reasoning = where
                    self._save()

    def _publish(self, rnd: RoundState, name: str) -> str:
        publish = getattr(self.submitter, "publish_reasoning", None)
        path = self._round_dir(rnd) / "reasoning.jsonl"
        slot = rnd.agents[name]
        if not callable(publish) or not path.exists() or slot.commit is None:
            return "local"
        traces = [t for t in map(json.loads, path.read_text().splitlines()) if t["agent"] == name]
        assert rnd.round_id is not None
        body = {
            "round_id": rnd.round_id,
            "commit_hash": slot.commit.commit_hash,
            "agent": slot.commit.agent,
            "traces": traces,
            "signature": sign_reasoning(
                self.keys[name], rnd.round_id, slot.commit.commit_hash, traces
            ),
        }
        try:
            return "published" if publish(body) else "local"
        except ArenaRejected as exc:
            if "already published" in exc.reason:  # a copy whose answer was lost
                return "published"
            log.warning("reasoning of %s refused: %s", name, exc.reason)
            return "local"
        except (RelayerUnavailable, OSError) as exc:
            log.warning("reasoning of %s not published yet: %s", name, exc)
            return ""

    def _give_up_commits(self, rnd: RoundState, why: str) -> None:
        changed = False
        for name in self.names:
            slot = rnd.agents[name]
            if slot.committed or slot.missed:
                continue
            assert rnd.round_id is not None
            if slot.commit is not None and self._submitted(
                "commit", rnd.round_id, self.state.agents[name]
            ):
                slot.committed = True
            else:
                slot.missed = why
            changed = True
        if changed:
            self._save()

    def _benchmarks(self, rnd: RoundState) -> None:
        assert rnd.round_id is not None
        prices: list[BenchmarkPrice] = []
        deadline = _utc(rnd.commit_deadline)
        for m in rnd.markets:
            if m.market_id in rnd.books:
                prices.append(rnd.books[m.market_id])
                continue
            start = m.start_date or deadline - timedelta(days=30)
            try:
                obs = self.client.price_history(m.yes_token, start, deadline)
                trades = [(_utc(t), p) for t, p in obs]
                prices.append(benchmark_from_trades(m.market_id, trades, deadline))
            except (PolymarketError, ValueError) as exc:
                log.warning("no benchmark price for %s yet: %s", m.market_id, exc)
                return  # asked again next tick
        rnd.books = {p.market_id: p for p in prices}
        self._save()
        try:
            self.backend.set_benchmarks(rnd.round_id, [p.price_bp for p in prices])
        except ArenaRejected as exc:
            if exc.reason != "Rounds: benchmark prices already set":
                raise
        rnd.benchmarks_set = True
        self._save()

    def _reveal_all(self, rnd: RoundState) -> None:
        assert rnd.round_id is not None
        for name in self.names:
            slot = rnd.agents[name]
            if not slot.committed or slot.revealed or slot.missed:
                continue
            assert slot.predictions is not None and slot.salt is not None
            agent = self.state.agents[name]
            if slot.reveal is None:
                if self._submitted("reveal", rnd.round_id, agent):
                    slot.revealed = True
                    self._save()
                    continue
                slot.reveal = sign_reveal(
                    self.keys[name],
                    self.backend.domain,
                    rnd.round_id,
                    slot.predictions,
                    slot.salt,
                    self.backend.nonce(agent),
                    rnd.reveal_deadline - 1,
                )
                self._save()
            if self._send("reveal", slot, agent, rnd.round_id):
                slot.revealed = True
                self._save()

    def _give_up_reveals(self, rnd: RoundState) -> None:
        changed = False
        for name in self.names:
            slot = rnd.agents[name]
            if slot.committed and not slot.revealed:
                assert rnd.round_id is not None
                if self._submitted("reveal", rnd.round_id, self.state.agents[name]):
                    slot.revealed = True
                else:
                    slot.missed = "the reveal window closed before the reveal was sent"
                changed = True
        if changed:
            self._save()

    def _payouts(self, m: OpenMarket) -> tuple[int, ...] | None:
        """The payouts the external conditional-tokens contract holds for ``m`` (None:
        unresolved, or the node did not answer), in the arena's convention: YES at
        ``yes_index``, (1, 1) when not all or nothing."""
        try:
            nums = self.backend.payouts(m.condition_id)  # type: ignore[attr-defined]
        except (ArenaRejected, OSError) as exc:
            log.warning("payouts of %s: %s", m.market_id, exc)
            return None
        if nums is None:
            return None
        yes, no = nums[self.yes_index], nums[1 - self.yes_index]
        if min(yes, no) > 0:
            return (1, 1)  # voided or split: the arena counts it for nothing
        return payouts_for(yes > 0, self.yes_index)

    def _watch_early(self, rnd: RoundState) -> None:
        """Markets the external conditional tokens resolve while the round is open."""
        if not self.external_ctf:
            return
        for m in rnd.markets:
            if m.market_id not in rnd.early and self._payouts(m) is not None:
                at = _utc(self.now()).isoformat()
                rnd.early[m.market_id] = f"resolved on the conditional tokens by {at}"
                log.warning("%s resolved before the reveal deadline", m.market_id)
                self._save()

    def _outcomes_on_chain(self, rnd: RoundState) -> None:
        for m in rnd.markets:
            if m.market_id in rnd.reported:
                continue
            payouts = self._payouts(m)
            if payouts is not None:
                rnd.reported[m.market_id] = payouts
                self._save()

    def _outcomes(self, rnd: RoundState) -> None:
        assert rnd.round_id is not None
        for m in rnd.markets if not self.external_ctf else ():
            if m.market_id in rnd.reported or m.market_id in rnd.excluded:
                continue
            try:
                got = resolution_payouts(self.client.market(m.market_id))
            except PolymarketError as exc:
                log.warning("resolution of %s: %s", m.market_id, exc)
                continue
            if got is None:
                continue
            nums, closed = got
            voided = all(n == nums[0] for n in nums)
            payouts = (1, 1) if voided else payouts_for(nums[m.yes_index] == 1, self.yes_index)
            if closed.timestamp() < rnd.reveal_deadline:
                # resolved before the reveal window closed: its outcome may have been known
                # while forecasting; it is never reported, so the arena leaves it out
                rnd.excluded[m.market_id] = f"resolved early, at {closed.isoformat()}"
                self._save()
                continue
            rnd.reported[m.market_id] = payouts
            self._save()
            try:
                self.backend.report_payouts(m.condition_id, payouts)
            except ArenaRejected as exc:
                if exc.reason != "CTF: already resolved":
                    raise
        if self.external_ctf:
            self._outcomes_on_chain(rnd)
        settled = len(rnd.reported) + len(rnd.excluded) == len(rnd.markets)
        if not settled and self.now() < rnd.reveal_deadline + self.plan.horizon_s:
            return
        if not rnd.reported:
            rnd.status = "unresolved"
            self._save()
            return
        if not rnd.triggered:
            try:
                self.backend.trigger_outcomes(rnd.round_id)
            except ArenaRejected as exc:
                if exc.reason == "Arena: no market resolved yet":  # every report was voided
                    rnd.status = "unresolved"
                    self._save()
                    return
                if exc.reason != "Arena: outcomes already triggered":
                    raise
            rnd.triggered = True
            self._save()
        try:
            self.backend.score_pending(rnd.round_id)
        except ArenaRejected as exc:
            if exc.reason != "Arena: no reveal waiting for a score":
                raise
        self._regrade(rnd)
        rnd.scored, rnd.status = True, "scored"
        self._save()
        self._write_results()

    def _regrade(self, rnd: RoundState) -> None:
        """Grade the round's run log again with the outcomes the arena counted (the steps of
        markets it left out stay pending), rewritten whole."""
        path = self._round_dir(rnd) / "run.jsonl"
        if not path.exists():
            return
        truths: dict[str, tuple[str, datetime]] = {}
        for m in rnd.markets:
            nums = rnd.reported.get(m.market_id)
            if nums is None or nums[0] == nums[1]:
                continue
            yes = nums[self.yes_index] == 1
            truths[m.market_id] = (
                BINARY_LABELS[0] if yes else BINARY_LABELS[1],
                _utc(rnd.reveal_deadline),
            )
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = StepRecord.model_validate_json(line)
            found = truths.get(rec.event_id)
            if found is not None:
                grading = rec.grading.model_copy(
                    update={"truth": found[0], "resolved_at": found[1]}
                )
                rec = rec.model_copy(
                    update={
                        "grading": grading,
                        "scores": score_forecast(rec.forecast, grading),
                    }
                )
            lines.append(rec.model_dump_json() + "\n")
        write_atomic(path, "".join(lines))

    # -- results ------------------------------------------------------------------------
    def catalogue(self) -> dict[int, Round]:
        out = {}
        for r in self.state.rounds:
            if r.round_id is None or not r.benchmarks_set:
                continue
            out[r.round_id] = Round(
                round_id=r.round_id,
                markets=tuple(arena_market(m) for m in r.markets),
                commit_deadline=_utc(r.commit_deadline),
                reveal_deadline=_utc(r.reveal_deadline),
                selector="live:volume24hr",
                benchmarks=tuple(r.books[m.market_id] for m in r.markets),
            )
        return out

    def results(self) -> tuple[RoundResult, ...]:
        """The scored rounds as the arena indexes them (what it holds, not what this process
        remembers), with the agents' roles."""
        roles = {n: agent_info(s).role for n, s in self.specs.items()}
        cat = self.catalogue()
        snap = _snapshot(self.backend)
        return tuple(
            r
            for r in snap.results(cat, roles={n: x for n, x in roles.items() if x != "agent"})
            if r.round.round_id in cat
        )

    def _write_results(self) -> None:
        body = "".join(r.model_dump_json() + "\n" for r in self.results())
        write_atomic(self.out / "rounds.jsonl", body)

    def result(self) -> LiveResult:
        results = self.results()
        report = arena_report(results) if any(r.scores for r in results) else None
        return LiveResult(results, report, self.state, self.out)


def live_names(agents: Sequence[AgentSpec]) -> list[str]:
    return [arena_name(a) for a in agents]
