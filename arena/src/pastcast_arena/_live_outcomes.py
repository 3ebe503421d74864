"""Live outcomes and scores: resolutions reported as payouts (or read from a conditional-tokens
contract on the chain), outcomes triggered, reveals scored, run logs graded again, results
written from the arena's index."""

from __future__ import annotations

import logging

from pastcast.agents import agent_info
from pastcast.atomic import write_atomic
from pastcast.markets.sources import PolymarketError, resolution_payouts
from pastcast.records import BINARY_LABELS
from pastcast.runlog import StepRecord
from pastcast.scoring import score_forecast
from pastcast_arena._live_context import LiveContext
from pastcast_arena._live_plan import LiveResult, RoundState
from pastcast_arena._protocol import ArenaRejected
from pastcast_arena._records import ArenaMarket, Round, RoundResult, utc
from pastcast_arena._replay import write_results
from pastcast_arena._scoring import payouts_for
from pastcast_arena._snapshot import snapshot_of
from pastcast_arena._stats import arena_report

log = logging.getLogger(__name__)
_MARKET = set(ArenaMarket.model_fields)


class Outcomes:
    """Resolutions reported or read, outcomes triggered, reveals scored, results written."""

    def __init__(self, ctx: LiveContext) -> None:
        self.ctx = ctx

    def watch_early(self, rnd: RoundState) -> None:
        """Markets the external conditional tokens resolve while the round is open."""
        ctx = self.ctx
        if not ctx.external_ctf:
            return
        for m in rnd.markets:
            if m.market_id not in rnd.early and ctx.payouts(m) is not None:
                at = utc(ctx.now()).isoformat()
                rnd.early[m.market_id] = f"resolved on the conditional tokens by {at}"
                log.warning("%s resolved before the reveal deadline", m.market_id)
                ctx.save()

    def settle(self, rnd: RoundState) -> None:
        """Outcomes reported and the round scored once its markets settled (or the horizon
        passed); its run log graded and the results written."""
        ctx = self.ctx
        assert rnd.round_id is not None
        for m in rnd.markets:
            if m.market_id in rnd.reported or m.market_id in rnd.excluded:
                continue
            if ctx.external_ctf:  # its own oracle reports: read, never reported from here
                payouts = ctx.payouts(m)
                if payouts is not None:
                    rnd.reported[m.market_id] = payouts
                    ctx.save()
                continue
            try:
                got = resolution_payouts(ctx.client.market(m.market_id))
            except PolymarketError as exc:
                log.warning("resolution of %s: %s", m.market_id, exc)
                continue
            if got is None:
                continue
            nums, closed = got
            voided = all(n == nums[0] for n in nums)
            payouts = (1, 1) if voided else payouts_for(nums[m.yes_index] == 1, ctx.yes_index)
            if closed.timestamp() < rnd.reveal_deadline:
                # resolved before the reveal window closed: its outcome may have been known
                # while forecasting; it is never reported, so the arena leaves it out
                rnd.excluded[m.market_id] = f"resolved early, at {closed.isoformat()}"
                ctx.save()
                continue
            rnd.reported[m.market_id] = payouts
            ctx.save()
            try:
                ctx.backend.report_payouts(m.condition_id, payouts)
            except ArenaRejected as exc:
                if exc.reason != "CTF: already resolved":
                    raise
        settled = len(rnd.reported) + len(rnd.excluded) == len(rnd.markets)
        if not settled and ctx.now() < rnd.reveal_deadline + ctx.plan.horizon_s:
            return
        if not rnd.reported:
            rnd.status = "unresolved"
            ctx.save()
            return
        if not rnd.triggered:
            try:
                ctx.backend.trigger_outcomes(rnd.round_id)
            except ArenaRejected as exc:
                if exc.reason == "Arena: no market resolved yet":  # every report was voided
                    rnd.status = "unresolved"
                    ctx.save()
                    return
                if exc.reason != "Arena: outcomes already triggered":
                    raise
            rnd.triggered = True
            ctx.save()
        try:
            ctx.backend.score_pending(rnd.round_id)
        except ArenaRejected as exc:
            if exc.reason != "Arena: no reveal waiting for a score":
                raise
        self._regrade(rnd)
        rnd.scored, rnd.status = True, "scored"
        ctx.save()
        write_results(ctx.out / "rounds.jsonl", self.results())

    def _regrade(self, rnd: RoundState) -> None:
        """Grade the round's run log again with the outcomes the arena counted (the steps of
        markets it left out stay pending), rewritten whole."""
        path = self.ctx.round_dir(rnd) / "run.jsonl"
        if not path.exists():
            return
        truths = {  # a voided market, (1, 1), has no truth
            market: BINARY_LABELS[0] if nums[self.ctx.yes_index] == 1 else BINARY_LABELS[1]
            for market, nums in rnd.reported.items()
            if nums[0] != nums[1]
        }
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = StepRecord.model_validate_json(line)
            if rec.event_id in truths:
                resolved = {"truth": truths[rec.event_id], "resolved_at": utc(rnd.reveal_deadline)}
                grading = rec.grading.model_copy(update=resolved)
                scores = score_forecast(rec.forecast, grading)
                rec = rec.model_copy(update={"grading": grading, "scores": scores})
            lines.append(rec.model_dump_json() + "\n")
        write_atomic(path, "".join(lines))

    def catalogue(self) -> dict[int, Round]:
        out = {}
        for r in self.ctx.state.rounds:
            if r.round_id is None or not r.benchmarks_set:
                continue
            out[r.round_id] = Round(
                round_id=r.round_id,
                markets=tuple(ArenaMarket(**m.model_dump(include=_MARKET)) for m in r.markets),
                commit_deadline=utc(r.commit_deadline),
                reveal_deadline=utc(r.reveal_deadline),
                selector="live:volume24hr",
                benchmarks=tuple(r.books[m.market_id] for m in r.markets),
            )
        return out

    def results(self) -> tuple[RoundResult, ...]:
        """The scored rounds as the arena indexes them (what it holds, not what this process
        remembers), with the agents' roles."""
        roles = {n: agent_info(s).role for n, s in self.ctx.specs.items()}
        cat = self.catalogue()
        snap = snapshot_of(self.ctx.backend)
        return tuple(
            r
            for r in snap.results(cat, roles={n: x for n, x in roles.items() if x != "agent"})
            if r.round.round_id in cat
        )

    def result(self) -> LiveResult:
        results = self.results()
        report = arena_report(results) if any(r.scores for r in results) else None
        return LiveResult(results, report, self.ctx.state, self.ctx.out)
