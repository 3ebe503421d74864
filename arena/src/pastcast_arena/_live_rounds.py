"""Live rounds' discovery and creation: open markets from Gamma, a round of them on the arena on
its schedule, the order book read for the benchmark price."""

from __future__ import annotations

import logging

from pastcast.markets import OpenMarket, PolymarketError, open_market
from pastcast_arena._live_base import LiveBase, snapshot_of, utc
from pastcast_arena._live_state import AgentRound, RoundState
from pastcast_arena._rounds import benchmark_from_book

__all__ = ["RoundsMixin"]

log = logging.getLogger(__name__)


_HEX32_LEN = 66


class RoundsMixin(LiveBase):
    def _used(self) -> set[str]:
        return {m.market_id for r in self.state.rounds for m in r.markets}

    def discover(self, commit_deadline: int, reveal_deadline: int) -> list[OpenMarket]:
        """Open binary markets ending after the reveal window and within the horizon, by 24-hour
        volume, then liquidity, then id; markets of earlier rounds are not reused."""
        lo, hi = reveal_deadline, reveal_deadline + self.plan.horizon_s
        raw = self.client.open_markets(utc(lo), utc(hi))
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

    def _create(self, rnd: RoundState) -> bool:
        ids = tuple(m.condition_id.lower() for m in rnd.markets)
        # a create whose answer a kill lost: the arena holds a round with the same markets and
        # deadlines, which is this one
        for r in snapshot_of(self.backend).rounds:
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
                    m.market_id, quotes[0], quotes[1], utc(t), utc(rnd.commit_deadline)
                )
            except ValueError:
                continue
            rnd.books[m.market_id] = price
            changed = True
        if changed:
            self._save()
