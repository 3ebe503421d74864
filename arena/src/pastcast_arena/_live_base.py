"""The live service's shared part: its fields, the state's writes, what the arena holds."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pastcast.corpus import CorpusBackend
from pastcast.markets import OpenMarket, PolymarketClient
from pastcast.runlog import AgentSpec
from pastcast_arena._backend import ArenaBackend, ArenaRejected
from pastcast_arena._live_plan import Clock, LivePlan
from pastcast_arena._live_state import AgentRound, LiveState, RoundState, save_state
from pastcast_arena._play import Submitter
from pastcast_arena._records import ArenaMarket
from pastcast_arena._relayer_client import RelayerUnavailable
from pastcast_arena._scoring import payouts_for
from pastcast_arena._snapshot import ArenaSnapshot

__all__ = ["CorpusAt", "LiveBase", "arena_market", "snapshot_of", "utc"]

log = logging.getLogger(__name__)


def utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def snapshot_of(backend: ArenaBackend) -> ArenaSnapshot:
    snap = getattr(backend, "snapshot", None)
    if callable(snap):
        return snap()  # type: ignore[no-any-return]
    from pastcast_arena._indexer import index_chain

    return index_chain(backend)  # type: ignore[arg-type]


def arena_market(m: OpenMarket) -> ArenaMarket:
    return ArenaMarket(
        market_id=m.market_id, condition_id=m.condition_id, question=m.question, category=m.category
    )


CorpusAt = Callable[[datetime], CorpusBackend | None]


class LiveBase:
    """What every part of the live service shares: its plan, arena, market client, clock and
    state, the state's writes, and the arena's record of what was sent."""

    plan: LivePlan
    backend: ArenaBackend
    client: PolymarketClient
    out: Path
    clock: Clock
    names: list[str]
    specs: dict[str, AgentSpec]
    keys: dict[str, str]
    submitter: Submitter
    corpus: CorpusAt | None
    yes_index: int
    external_ctf: bool
    state_path: Path
    state: LiveState

    def now(self) -> float:
        return self.clock.now()

    def _save(self, state: LiveState | None = None) -> None:
        save_state(self.state_path, state or self.state)

    def _round_dir(self, rnd: RoundState) -> Path:
        folder = self.out / "rounds" / f"{rnd.index:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _submitted(self, kind: str, round_id: int, agent: str) -> bool:
        snap = snapshot_of(self.backend)
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
