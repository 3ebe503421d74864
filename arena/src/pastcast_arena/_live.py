"""Live rounds: a replay whose cutoff is now (docs/arena.md, "Live rounds"). Every action is
idempotent and preceded by a write of the state file, so a restart misses no reveal and commits
nothing twice. The service loops over phases given one ``LiveContext``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from pastcast.markets.sources import PolymarketClient
from pastcast_arena._live_context import CorpusAt, LiveContext
from pastcast_arena._live_forecast import Forecasting, Reveals
from pastcast_arena._live_outcomes import Outcomes
from pastcast_arena._live_plan import (
    STATE_FILE,
    Clock,
    LivePlan,
    LiveResult,
    LiveState,
    RoundState,
    ScaledClock,
    load_state,
    save_state,
)
from pastcast_arena._live_rounds import Discovery
from pastcast_arena._play import Submitter, agent_key
from pastcast_arena._protocol import ArenaBackend, ArenaRejected
from pastcast_arena._replay import arena_name
from pastcast_arena._scoring import YES_INDEX
from pastcast_arena._snapshot import snapshot_of

log = logging.getLogger(__name__)


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
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        clock = clock or ScaledClock()
        names = [arena_name(a) for a in plan.agents]
        keys = {n: (keys or {}).get(n) or agent_key(n) for n in names}
        self.ctx = LiveContext(
            plan=plan,
            backend=backend,
            client=client,
            out=folder,
            clock=clock,
            specs=dict(zip(names, plan.agents, strict=True)),
            keys=keys,
            submitter=submitter or backend,
            corpus=corpus,
            yes_index=yes_index,
            external_ctf=bool(getattr(backend, "external_ctf", False)),
            state=_open_state(folder / STATE_FILE, backend, clock.now(), keys),
        )
        self.on_tick = on_tick
        self.sync_clock = sync_clock
        """A development node's clock is moved along with ours."""
        self.discovery = Discovery(self.ctx)
        self.forecasting = Forecasting(self.ctx)
        self.reveals = Reveals(self.ctx)
        self.outcomes = Outcomes(self.ctx)
        self._reconcile()

    @property
    def state(self) -> LiveState:
        return self.ctx.state

    def _reconcile(self) -> None:
        """Take back, for rounds still running, what the state says the arena holds and it does
        not (a node started again from a state file a little older than its last blocks): the
        round is created, the messages are sent again (the arena takes a copy once)."""
        ctx, state = self.ctx, self.ctx.state
        snap = snapshot_of(ctx.backend)
        rounds = {r.round_id: r for r in snap.rounds}
        commits = {(c.round_id, c.agent.lower()) for c in snap.commits}
        reveals = {(r.round_id, r.agent.lower()) for r in snap.reveals}
        triggered = {o.round_id for o in snap.outcomes}
        changed = False
        for rnd in state.rounds:
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
                key = (rnd.round_id, state.agents[name].lower())
                if slot.committed and key not in commits:
                    slot.committed, changed = False, True
                if slot.revealed and key not in reveals:
                    slot.revealed, changed = False, True
        registered = {a.address.lower() for a in snap.agents}
        for name, address in state.agents.items():
            if name in ctx.specs and address.lower() not in registered:
                _register(ctx.backend, ctx.keys[name], name)
        if changed:
            ctx.save()

    def _sync(self, now: float | None = None) -> None:
        """A development node's clock moved up to ours (``now``, else the clock's reading)."""
        if self.sync_clock:
            backend = self.ctx.backend
            t = int(self.ctx.now() if now is None else now)
            if t > backend.now():
                backend.advance_to(t)

    def done(self) -> bool:
        rounds = self.state.rounds
        n = self.ctx.plan.rounds
        return n is not None and len(rounds) >= n and all(r.finished for r in rounds)

    def run(self, *, stop: Callable[[], bool] | None = None) -> LiveResult:
        """Tick until the plan's rounds are finished (or ``stop`` says so)."""
        while not self.done() and not (stop is not None and stop()):
            self.tick()
            self.ctx.clock.sleep(self.wait())
        return self.outcomes.result()

    def wait(self) -> float:
        """Until the next thing to do, at most ``poll_s``."""
        plan = self.ctx.plan
        t = self.ctx.now()
        upcoming = [self.state.next_round_at]
        for r in self.state.rounds:
            if r.finished:
                continue
            upcoming += [
                r.commit_deadline - plan.lead_time_s,
                r.commit_deadline,
                r.reveal_deadline,
                r.reveal_deadline + plan.horizon_s,
            ]
        soon = [u - t for u in upcoming if u > t]
        return min([plan.poll_s, *soon]) if soon else plan.poll_s

    def tick(self) -> None:
        """One pass: every action due now, each idempotent."""
        if self.on_tick is not None:
            try:
                self.on_tick()
            except Exception as exc:  # a feed that fails must not stop the arena
                log.warning("live tick hook failed: %s", exc)
        self._sync()
        plan, state = self.ctx.plan, self.state
        if self.ctx.now() >= state.next_round_at and (
            plan.rounds is None or len(state.rounds) < plan.rounds
        ):
            self.discovery.new_round()
        for rnd in state.rounds:
            if not rnd.finished:
                self._advance(rnd)

    def _advance(self, rnd: RoundState) -> None:
        if rnd.round_id is None and not self.discovery.create(rnd):
            return
        t = self.ctx.now()
        # a compressed clock runs on during a tick while a development node's stands: the node
        # is brought up to the instant every decision below is taken at, so an action due after
        # a deadline finds the chain past it too
        self._sync(t)
        if t < rnd.commit_deadline:
            self.discovery.observe_book(rnd)
            if t >= rnd.commit_deadline - self.ctx.plan.lead_time_s:
                self.forecasting.forecast(rnd)
                self.forecasting.commit_all(rnd)
                self.forecasting.publish_all(rnd)
            return
        self.ctx.give_up("commit", rnd, "the commit deadline passed before the commitment was sent")
        if t < rnd.reveal_deadline:
            self.forecasting.publish_all(rnd)
        if not rnd.benchmarks_set:
            self.reveals.benchmarks(rnd)
        if t < rnd.reveal_deadline:
            self.reveals.reveal_all(rnd)
            self.outcomes.watch_early(rnd)
            return
        self.ctx.give_up("reveal", rnd, "the reveal window closed before the reveal was sent")
        if not rnd.benchmarks_set:  # no price could be read: the round cannot be scored
            if t >= rnd.reveal_deadline + self.ctx.plan.horizon_s:
                rnd.status = "abandoned"
                self.ctx.save()
            return
        self.outcomes.settle(rnd)


def _open_state(
    path: Path, backend: ArenaBackend, now: float, keys: Mapping[str, str]
) -> LiveState:
    """The state file's state (a new one at ``now`` when there is none), every agent of ``keys``
    registered; refused when it was written for another arena."""
    identity = backend.domain.model_dump_json()
    state = load_state(path)
    if state is None:
        state = LiveState(arena=identity, next_round_at=now)
        save_state(path, state)
    elif state.arena != identity:
        raise ValueError(f"{path}: written for another arena ({state.arena}), not {identity}")
    for name, key in keys.items():
        if name not in state.agents:
            state.agents[name] = _register(backend, key, name)
            save_state(path, state)
    return state


def _register(backend: ArenaBackend, key: str, name: str) -> str:
    from eth_account import Account

    address = str(Account.from_key(key).address)
    try:
        backend.register(key, name)
    except ArenaRejected as exc:
        if exc.reason != "Registry: already registered":
            raise
    return address
