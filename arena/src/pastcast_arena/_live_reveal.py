"""Live reveals: the benchmark prices set after the commit deadline, the reveals inside the
window."""

from __future__ import annotations

import logging
from datetime import timedelta

from pastcast.markets import PolymarketError
from pastcast_arena._backend import ArenaRejected
from pastcast_arena._live_base import LiveBase, utc
from pastcast_arena._live_state import RoundState
from pastcast_arena._protocol import sign_reveal
from pastcast_arena._records import BenchmarkPrice
from pastcast_arena._rounds import benchmark_from_trades

__all__ = ["RevealMixin"]

log = logging.getLogger(__name__)


class RevealMixin(LiveBase):
    def _benchmarks(self, rnd: RoundState) -> None:
        assert rnd.round_id is not None
        prices: list[BenchmarkPrice] = []
        deadline = utc(rnd.commit_deadline)
        for m in rnd.markets:
            if m.market_id in rnd.books:
                prices.append(rnd.books[m.market_id])
                continue
            start = m.start_date or deadline - timedelta(days=30)
            try:
                obs = self.client.price_history(m.yes_token, start, deadline)
                trades = [(utc(t), p) for t, p in obs]
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
