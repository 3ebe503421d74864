"""What every phase of the live service shares, in one context: the plan, arena, market client,
clock, agents and their keys, the submitter, the durable state and its writes, and the arena's
record of what was sent."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pastcast.corpus import CorpusBackend
from pastcast.markets.sources import OpenMarket, PolymarketClient
from pastcast.runlog import AgentSpec
from pastcast_arena._live_plan import (
    STATE_FILE,
    AgentRound,
    Clock,
    LivePlan,
    LiveState,
    RoundState,
    save_state,
)
from pastcast_arena._play import Submitter
from pastcast_arena._protocol import ArenaBackend, ArenaRejected
from pastcast_arena._records import SignedCommit, SignedReveal
from pastcast_arena._relayer import RelayerUnavailable
from pastcast_arena._scoring import payouts_for
from pastcast_arena._snapshot import snapshot_of

log = logging.getLogger(__name__)


CorpusAt = Callable[[datetime], CorpusBackend | None]
Kind = Literal["commit", "reveal"]
Signed = SignedCommit | SignedReveal
_DONE = {"commit": "committed", "reveal": "revealed"}
"""The flag of a slot that says the arena holds its message of each kind."""


@dataclass(frozen=True)
class LiveContext:
    """The live service's settings and its one mutable part, ``state`` (updated in place, then
    written whole by ``save`` before any action it records)."""

    plan: LivePlan
    backend: ArenaBackend
    client: PolymarketClient
    out: Path
    clock: Clock
    specs: Mapping[str, AgentSpec]
    """The agents by arena name, in the plan's order."""
    keys: Mapping[str, str]
    submitter: Submitter
    corpus: CorpusAt | None
    yes_index: int
    external_ctf: bool
    """Outcomes are the payouts a conditional-tokens contract on the chain holds, reported by its
    own oracle (Polymarket's): the service reads them and reports none."""
    state: LiveState

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def now(self) -> float:
        return self.clock.now()

    def save(self) -> None:
        save_state(self.out / STATE_FILE, self.state)

    def round_dir(self, rnd: RoundState) -> Path:
        folder = self.out / "rounds" / f"{rnd.index:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def submitted(self, kind: str, round_id: int, agent: str) -> bool:
        snap = snapshot_of(self.backend)
        rows = snap.commits if kind == "commit" else snap.reveals
        return any(r.round_id == round_id and r.agent.lower() == agent.lower() for r in rows)

    def deliver(
        self, kind: Kind, rnd: RoundState, name: str, sign: Callable[[int], Signed]
    ) -> None:
        """The agent's ``kind`` message signed (``sign(nonce)``; written before it is sent) and
        sent until the arena holds it; one it already holds is not signed again."""
        slot, agent = rnd.agents[name], self.state.agents[name]
        assert rnd.round_id is not None
        if getattr(slot, kind) is None:
            if self.submitted(kind, rnd.round_id, agent):
                setattr(slot, _DONE[kind], True)
                self.save()
                return
            setattr(slot, kind, sign(self.backend.nonce(agent)))
            self.save()
        if self._send(kind, slot, agent, rnd.round_id):
            setattr(slot, _DONE[kind], True)
            self.save()

    def _send(self, kind: Kind, slot: AgentRound, agent: str, round_id: int) -> bool:
        """Send the stored message; True once the arena holds it."""
        try:
            getattr(self.submitter, kind)(getattr(slot, kind))
        except ArenaRejected as exc:
            if self.submitted(kind, round_id, agent):
                return True  # a copy the arena already took (a retried or resumed send)
            if "invalid nonce" in exc.reason:
                # the nonce moved on without this message (another message took it): sign anew
                setattr(slot, kind, None)
            else:  # refused for good (a deadline passed, say): recorded, never sent again
                slot.missed = f"{kind} refused: {exc.reason}"
            self.save()
            return False
        except (RelayerUnavailable, OSError) as exc:
            log.warning("%s of round %d by %s not sent yet: %s", kind, round_id, agent, exc)
            return self.submitted(kind, round_id, agent)
        return True

    def give_up(self, kind: Kind, rnd: RoundState, why: str) -> None:
        """Once ``kind``'s window closed: a slot whose message the arena holds is marked so,
        one still waiting for it misses it (``why``)."""
        changed = False
        for name, slot in rnd.agents.items():
            if kind == "reveal" and (not slot.committed or slot.revealed):
                continue
            if kind == "commit" and (slot.committed or slot.missed):
                continue
            assert rnd.round_id is not None
            held = getattr(slot, kind) is not None
            if held and self.submitted(kind, rnd.round_id, self.state.agents[name]):
                setattr(slot, _DONE[kind], True)
            else:
                slot.missed = why
            changed = True
        if changed:
            self.save()

    def payouts(self, m: OpenMarket) -> tuple[int, ...] | None:
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
