"""Live forecasting, commitments and reveals: the agents forecast at the cutoff through the
runner, the predictions and salt are written, then signed and sent, reasoning traces published
beside them; after the commit deadline the benchmark prices are set and the reveals sent."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from functools import partial

from pydantic import BaseModel

from pastcast.atomic import write_atomic
from pastcast.dataset import Dataset
from pastcast.markets.sources import PolymarketError, daily_yes_beliefs
from pastcast.records import BINARY_LABELS, DailyBelief, Event, StepSpec
from pastcast.runner import RunConfig, run_benchmark
from pastcast_arena._live_context import LiveContext
from pastcast_arena._live_plan import DATASET_ID, RoundState
from pastcast_arena._protocol import (
    ArenaRejected,
    commitment,
    new_salt,
    sign_commit,
    sign_reasoning,
    sign_reveal,
)
from pastcast_arena._records import BenchmarkPrice, utc
from pastcast_arena._relayer import RelayerUnavailable
from pastcast_arena._replay import logged_forecasts, prediction_bp
from pastcast_arena._rounds import benchmark_from_trades

log = logging.getLogger(__name__)


class _Inputs(BaseModel):
    """A round's events and price history as forecast on (``inputs.json``)."""

    events: tuple[Event, ...]
    beliefs: dict[str, tuple[DailyBelief, ...]]


class Forecasting:
    """Forecasts at the cutoff, commitments and their reasoning traces."""

    def __init__(self, ctx: LiveContext) -> None:
        self.ctx = ctx

    def _inputs(self, rnd: RoundState, cutoff: datetime) -> Dataset:
        """The round's events and the price history before the cutoff, fetched once and kept
        beside the run log, so a resumed run forecasts on the same data."""
        path = self.ctx.round_dir(rnd) / "inputs.json"
        if path.exists():
            inputs = _Inputs.model_validate_json(path.read_bytes())
        else:
            inputs = _Inputs(events=(), beliefs={})
            for m in rnd.markets:
                start = m.start_date or cutoff - timedelta(days=30)
                inputs.events += (
                    Event(
                        id=m.market_id,
                        title=m.question or m.market_id,
                        kind="binary",
                        labels=BINARY_LABELS,
                        category=m.category,
                        open_time=start,
                        close_time=m.end_date,
                        source="polymarket",
                    ),
                )
                try:
                    obs = self.ctx.client.price_history(m.yes_token, start, cutoff)
                except PolymarketError as exc:
                    log.warning("price history of %s: %s", m.market_id, exc)
                    obs = []
                inputs.beliefs[m.market_id] = daily_yes_beliefs(
                    m.market_id, [(t, p) for t, p in obs if t < cutoff.timestamp()]
                )
            write_atomic(path, inputs.model_dump_json(indent=1) + "\n")
        events = inputs.events
        steps = tuple(StepSpec(event_id=e.id, step_index=0, cutoff=cutoff) for e in events)
        return Dataset(DATASET_ID, events, {}, inputs.beliefs, steps, pending=True)

    def forecast(self, rnd: RoundState) -> None:
        ctx = self.ctx
        if rnd.forecast:
            return
        if rnd.cutoff is None:
            if ctx.now() >= rnd.commit_deadline - ctx.plan.commit_margin_s:
                return  # too late to forecast and commit: the commit window's give_up records it
            # the moment forecasting is due (the lead time before the deadline), not the tick
            # that noticed it: the same whenever the process came up, so a restarted service
            # forecasts on the same information as one that never stopped
            rnd.cutoff = float(rnd.commit_deadline - ctx.plan.lead_time_s)
            ctx.save()
        cutoff = utc(rnd.cutoff)
        dataset = self._inputs(rnd, cutoff)
        run_log = ctx.round_dir(rnd) / "run.jsonl"
        config = RunConfig(agents=ctx.plan.agents, env=ctx.plan.env)
        corpus = ctx.corpus(cutoff) if ctx.corpus is not None else None
        run_benchmark(dataset, corpus, config, run_log, progress=False)
        forecasts = logged_forecasts(run_log)
        traces = []
        for name, spec in ctx.specs.items():
            slot = rnd.agents[name]
            if slot.predictions is not None:
                continue
            row, usable = [], 0
            for m in rnd.markets:
                got = forecasts.get((spec.name, spec.setting, m.market_id, cutoff))
                bp, ok = prediction_bp(got)
                row.append(bp)
                usable += ok
                if got is not None:
                    traces.append({"agent": name, "market_id": m.market_id, "raw": got.raw_text})
            slot.predictions, slot.usable = tuple(row), usable
            slot.salt = new_salt()  # on disk before any commitment is made from it
        rnd.forecast = True
        ctx.save()
        if traces:
            path = ctx.round_dir(rnd) / "reasoning.jsonl"
            write_atomic(path, "".join(json.dumps(t) + "\n" for t in traces))

    def commit_all(self, rnd: RoundState) -> None:
        ctx = self.ctx
        assert rnd.round_id is not None
        for name in ctx.names:
            slot = rnd.agents[name]
            if slot.committed or slot.missed or slot.predictions is None or slot.salt is None:
                continue
            # the clock may have jumped: nothing is signed or sent at or after the margin
            if ctx.now() >= rnd.commit_deadline - ctx.plan.commit_margin_s:
                return
            c = commitment(rnd.round_id, slot.predictions, slot.salt)
            key, domain, deadline = ctx.keys[name], ctx.backend.domain, rnd.commit_deadline - 1
            sign = partial(sign_commit, key, domain, rnd.round_id, c, deadline=deadline)
            ctx.deliver("commit", rnd, name, sign)

    def publish_all(self, rnd: RoundState) -> None:
        """Reasoning traces beside each commitment, retried each tick until the relayer answers."""
        for name in self.ctx.names:
            slot = rnd.agents[name]
            if slot.committed and not slot.reasoning:
                where = self._publish(rnd, name)
                if where:
                    slot.reasoning = where
                    self.ctx.save()

    def _publish(self, rnd: RoundState, name: str) -> str:
        publish = getattr(self.ctx.submitter, "publish_reasoning", None)
        path = self.ctx.round_dir(rnd) / "reasoning.jsonl"
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
                self.ctx.keys[name], rnd.round_id, slot.commit.commit_hash, traces
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


class Reveals:
    """Benchmark prices once the commit deadline passed, reveals inside the window."""

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
