"""Reference and baseline agents: uniform, random, market price, historical base rate."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from pastcast.env import Episode, ToolError
from pastcast.records import Forecast


class UniformAgent:
    """Equal probability on every outcome."""

    def forecast(self, episode: Episode) -> Forecast:
        labels = episode.question.labels
        return Forecast(probs={lb: 1.0 / len(labels) for lb in labels}, raw_text="uniform")


def random_draws(seed: int, event_id: str, cutoff: datetime) -> np.random.Generator:
    """The random baseline's generator for one (seed, event, cutoff): the same draws wherever
    that baseline plays the step (a run, a resumed run, an arena replay, the simulation)."""
    key = f"{seed}|{event_id}|{cutoff.isoformat()}".encode()
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


@dataclass
class RandomAgent:
    """Foresight Arena's random baseline: YES ~ U[0, 1] on a binary event (expected Brier 1/3
    whatever the outcome), a flat Dirichlet draw over the labels otherwise.

    The draw is seeded by (seed, event, cutoff), so a rerun, or a resumed run, forecasts the
    same; rollouts of one step therefore agree.
    """

    seed: int = 0

    def forecast(self, episode: Episode) -> Forecast:
        q = episode.question
        rng = random_draws(self.seed, q.event_id, q.cutoff)
        if q.kind == "binary":
            p = float(rng.uniform(0.0, 1.0))
            return Forecast(probs={"Yes": p, "No": 1.0 - p}, raw_text=f"random {p:.6f}")
        draw = rng.dirichlet(np.ones(len(q.labels)))
        probs = {lb: float(v) for lb, v in zip(q.labels, draw, strict=True)}
        return Forecast(probs=probs, raw_text="random")


class MarketAgent:
    """The latest daily market belief before the cutoff (reference)."""

    def forecast(self, episode: Episode) -> Forecast:
        try:
            history = episode.tools.market_history()
        except ToolError as exc:
            return Forecast(usable=False, failure_reason="no_market_access", raw_text=str(exc))
        if not history:
            return Forecast(usable=False, failure_reason="no_market_price", raw_text="")
        last = history[-1]
        return Forecast(probs=dict(last.probs), raw_text=f"market belief of {last.day}")


@dataclass
class BaseRateAgent:
    """Share of YES among events resolved before the cutoff (binary; Laplace-smoothed)."""

    prior_strength: float = 2.0

    def forecast(self, episode: Episode) -> Forecast:
        q = episode.question
        if q.kind != "binary":
            return Forecast(probs={lb: 1.0 / len(q.labels) for lb in q.labels}, raw_text="uniform")
        h = episode.history
        a = self.prior_strength / 2
        p_yes = (h.binary_yes + a) / (h.binary_resolved + self.prior_strength)
        text = f"{h.binary_yes}/{h.binary_resolved} earlier binary events resolved Yes"
        return Forecast(probs={"Yes": p_yes, "No": 1.0 - p_yes}, raw_text=text)
