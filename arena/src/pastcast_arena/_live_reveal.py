"""Live reveals: the benchmark prices set after the commit deadline, the reveals inside the
window."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from pastcast.markets.sources import PolymarketError
from pastcast_arena._backend import ArenaRejected
from pastcast_arena._live_context import LiveContext
from pastcast_arena._live_state import RoundState
from pastcast_arena._protocol import sign_reveal
from pastcast_arena._records import BenchmarkPrice, utc
from pastcast_arena._rounds import benchmark_from_trades

__all__ = ["Reveals"]

log = logging.getLogger(__name__)


class Reveals:
    """The benchmark prices set once the commit deadline passed, and the reveals inside the
    window."""

    def __init__(self, ctx: LiveContext) -> None:
        self.ctx = ctx

    def benchmarks(self, rnd: RoundState) -> None:
        ctx = self.ctx
        assert rnd.round_id is not None
        prices: list[BenchmarkPrice] = []
        deadline = utc(rnd.commit_deadline)
        for m in rnd.markets:
            if m.market_id in rnd.books:
                prices.append(rnd.books[m.market_id])
                continue
            start = m.start_date or deadline - timedelta(days=30)
            try:
                obs = ctx.client.price_history(m.yes_token, start, deadline)
                trades = [(utc(t), p) for t, p in obs]
                prices.append(benchmark_from_trades(m.market_id, trades, deadline))
            except (PolymarketError, ValueError) as exc:
                log.warning("no benchmark price for %s yet: %s", m.market_id, exc)
                return  # asked again next tick
        rnd.books = {p.market_id: p for p in prices}
        ctx.save()
        try:
            ctx.backend.set_benchmarks(rnd.round_id, [p.price_bp for p in prices])
        except ArenaRejected as exc:
            if exc.reason != "Rounds: benchmark prices already set":
                raise
        rnd.benchmarks_set = True
        ctx.save()

    def reveal_all(self, rnd: RoundState) -> None:
        ctx = self.ctx
        assert rnd.round_id is not None
        for name in ctx.names:
            slot = rnd.agents[name]
            if not slot.committed or slot.revealed or slot.missed:
                continue
            assert slot.predictions is not None and slot.salt is not None
            key, domain, deadline = ctx.keys[name], ctx.backend.domain, rnd.reveal_deadline - 1
            args = (key, domain, rnd.round_id, slot.predictions, slot.salt)
            ctx.deliver("reveal", rnd, name, partial(sign_reveal, *args, deadline=deadline))

    def give_up_reveals(self, rnd: RoundState) -> None:
        ctx = self.ctx
        changed = False
        for name in ctx.names:
            slot = rnd.agents[name]
            if slot.committed and not slot.revealed:
                assert rnd.round_id is not None
                if ctx.submitted("reveal", rnd.round_id, ctx.state.agents[name]):
                    slot.revealed = True
                else:
                    slot.missed = "the reveal window closed before the reveal was sent"
                changed = True
        if changed:
            ctx.save()
