"""Live rounds' discovery and creation: open markets from Gamma, a round of them on the arena on
its schedule, the order book read for the benchmark price."""

from __future__ import annotations

import logging

from pastcast.markets.sources import OpenMarket, PolymarketError, open_market
from pastcast_arena._live_context import LiveContext
from pastcast_arena._live_plan import AgentRound, RoundState
from pastcast_arena._records import utc
from pastcast_arena._rounds import benchmark_from_book
from pastcast_arena._snapshot import snapshot_of

log = logging.getLogger(__name__)


class Discovery:
    """Open markets found, rounds of them made on their schedule, the book's mid observed."""

    def __init__(self, ctx: LiveContext) -> None:
        self.ctx = ctx

    def discover(self, commit_deadline: int, reveal_deadline: int) -> list[OpenMarket]:
        """Open binary markets ending after the reveal window and within the horizon, by 24-hour
        volume, then liquidity, then id; markets of earlier rounds are not reused."""
        ctx, plan = self.ctx, self.ctx.plan
        lo, hi = reveal_deadline, reveal_deadline + plan.horizon_s
        raw = ctx.client.open_markets(utc(lo), utc(hi))
        used = {m.market_id for r in ctx.state.rounds for m in r.markets}
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
            if not lo < end <= hi or len(m.condition_id) != 66:  # 0x and 32 bytes
                continue
            if m.volume_24h < plan.min_volume_24h or m.liquidity < plan.min_liquidity:
                continue
            if ctx.external_ctf and m.yes_index != ctx.yes_index:
                continue  # the arena reads YES from one slot of the tokens' payouts
            if ctx.external_ctf and ctx.payouts(m) is not None:
                continue  # already resolved on the chain
            found[m.market_id] = m
        ranked = sorted(found.values(), key=lambda m: (-m.volume_24h, -m.liquidity, m.market_id))
        return ranked[: plan.markets]

    def new_round(self) -> None:
        # rounds keep to their schedule, whenever the tick that creates them comes: a slot too
        # late to give the agents their lead time is skipped
        ctx, plan, state = self.ctx, self.ctx.plan, self.ctx.state
        t = ctx.now()
        sched = state.next_round_at
        while t >= sched + plan.commit_s - plan.lead_time_s:
            sched += plan.interval_s
        if t < sched:
            state.next_round_at = sched
            ctx.save()
            return
        commit_deadline = int(sched) + plan.commit_s
        reveal_deadline = commit_deadline + plan.reveal_s
        try:
            chosen = self.discover(commit_deadline, reveal_deadline)
        except (PolymarketError, OSError) as exc:  # Gamma is down: asked again next tick
            log.warning("discovery failed: %s", exc)
            return
        state.next_round_at = sched + plan.interval_s
        if len(chosen) < plan.markets:
            log.warning("only %d qualifying markets: no round now", len(chosen))
            ctx.save()
            return
        rnd = RoundState(
            index=len(state.rounds) + 1,
            created_at=sched,
            commit_deadline=commit_deadline,
            reveal_deadline=reveal_deadline,
            markets=tuple(chosen),
            creating=True,
            agents={n: AgentRound() for n in ctx.names},
        )
        state.rounds.append(rnd)
        ctx.save()

    def create(self, rnd: RoundState) -> bool:
        """The round made on the arena (or found there, made before a kill); False when it is
        too late to give the agents their lead time."""
        ctx = self.ctx
        ids = tuple(m.condition_id.lower() for m in rnd.markets)
        # a create whose answer a kill lost: the arena holds a round with the same markets and
        # deadlines, which is this one
        for r in snapshot_of(ctx.backend).rounds:
            if (
                tuple(c.lower() for c in r.condition_ids) == ids
                and r.commit_deadline == rnd.commit_deadline
                and r.reveal_deadline == rnd.reveal_deadline
            ):
                rnd.round_id, rnd.creating = r.round_id, False
                ctx.save()
                return True
        if ctx.now() >= rnd.commit_deadline - ctx.plan.lead_time_s:
            rnd.status = "abandoned"  # too late to give the agents their lead time
            ctx.save()
            return False
        rnd.round_id = ctx.backend.create_round(ids, rnd.commit_deadline, rnd.reveal_deadline)
        rnd.creating = False
        ctx.save()
        return True

    def observe_book(self, rnd: RoundState) -> None:
        """The latest book mid before the deadline, for the benchmark price."""
        t = self.ctx.now()
        if t < rnd.commit_deadline - self.ctx.plan.lead_time_s:
            return
        changed = False
        for m in rnd.markets:
            try:
                quotes = self.ctx.client.best_quotes(m.yes_token)
            except PolymarketError as exc:
                log.warning("book of %s: %s", m.market_id, exc)
                continue
            if quotes is None:
                continue
            try:
                price = benchmark_from_book(
                    m.market_id, quotes[0], quotes[1], utc(t), utc(rnd.commit_deadline)
                )
            except ValueError:
                continue
            rnd.books[m.market_id] = price
            changed = True
        if changed:
            self.ctx.save()
