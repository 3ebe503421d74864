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

import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from pastcast.markets import PolymarketClient
from pastcast_arena._backend import ArenaBackend, ArenaRejected
from pastcast_arena._live_base import CorpusAt, snapshot_of
from pastcast_arena._live_forecast import ForecastMixin
from pastcast_arena._live_outcomes import OutcomesMixin
from pastcast_arena._live_plan import (
    STATE_FILE,
    Clock,
    LivePlan,
    LiveResult,
    ScaledClock,
    SystemClock,
)
from pastcast_arena._live_reveal import RevealMixin
from pastcast_arena._live_rounds import RoundsMixin
from pastcast_arena._live_state import LiveState, RoundState, load_state
from pastcast_arena._play import DirectSubmitter, Submitter, agent_key
from pastcast_arena._relayer_client import RelayerClient, RelayerUnavailable
from pastcast_arena._replay import arena_name
from pastcast_arena._scoring import YES_INDEX

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


class LiveService(RoundsMixin, ForecastMixin, RevealMixin, OutcomesMixin):
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
        self.submitter = submitter or DirectSubmitter(backend)
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
        snap = snapshot_of(self.backend)
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
    def _sync(self, now: float | None = None) -> None:
        """A development node's clock moved up to ours (``now``, else the clock's reading)."""
        if self.sync_clock:
            t = int(self.now() if now is None else now)
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

    def _advance(self, rnd: RoundState) -> None:
        if rnd.round_id is None and not self._create(rnd):
            return
        t = self.now()
        # a compressed clock runs on during a tick while a development node's stands: the node
        # is brought up to the instant every decision below is taken at, so an action due after
        # a deadline finds the chain past it too
        self._sync(t)
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
