"""The knobs of the simulated world, and the short hash that makes non-default worlds distinct."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import date

from pastcast.safejson import canonical_json

WORLD_VERSION = "world-v2"
"""Bumped whenever the generator changes what a given seed produces (v2: the schedule is
non-anticipating; see ``default_steps``)."""

STREAM_KEY = "world-v1"
"""What the random streams are keyed by. v2 changed only which steps an event gets, so every
event, price and article of a seed stays as it was in v1."""


@dataclass(frozen=True)
class WorldConfig:
    """Everything about the world besides the seed. Defaults give the standard benchmark world."""

    n_events: int = 50
    start: date = date(2024, 1, 1)
    end: date = date(2024, 12, 31)
    multi_fraction: float = 0.3
    min_options: int = 3
    max_options: int = 5
    min_lifetime_days: int = 8
    max_lifetime_days: int = 120
    early_resolution_prob: float = 0.35
    """Chance that a binary event whose outcome is Yes resolves before its close time."""

    n_documents: int = 5000
    """Target corpus size; evidence volume is calibrated to it and distractors fill the rest."""
    distractor_fraction: float = 0.3
    duplicate_fraction: float = 0.05
    canary_fraction: float = 1 / 3
    hindsight_fraction: float = 0.0
    """Share of events with a planted hindsight rewrite: dated before the resolution, it states
    the outcome (``World.hindsight_ids``); the content screen must keep it from every corpus."""

    accuracy_start: float = 0.55
    """Chance that a signal points to the truth at the event's opening ..."""
    accuracy_end: float = 0.8
    """... rising linearly to this at its resolution."""
    market_weight: float = 0.3
    """How strongly the market moves per signal, as a fraction of the Bayesian log-odds step."""
    market_noise: float = 0.25
    """Daily innovation s.d. of the mean-reverting (AR(1)) market noise, in log-odds."""
    missing_day_fraction: float = 0.05
    unpriced_leg_prob: float = 0.03
    """Per day of a multi-option event: chance that one leg has no price that day."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.n_events < 1:
            problems.append("n_events must be at least 1")
        if self.end <= self.start:
            problems.append("end must be after start")
        if not 2 <= self.min_options <= self.max_options:
            problems.append("need 2 <= min_options <= max_options")
        if not 8 <= self.min_lifetime_days <= self.max_lifetime_days:
            problems.append("need 8 <= min_lifetime_days <= max_lifetime_days")
        if (self.end - self.start).days < self.max_lifetime_days + 1:
            problems.append("the span start..end is shorter than max_lifetime_days")
        if self.n_documents < 0:
            problems.append("n_documents must be >= 0")
        if not 0.5 <= self.accuracy_start <= 1 or not 0.5 <= self.accuracy_end < 1:
            problems.append("signal accuracies must lie in [0.5, 1)")
        for name in (
            "multi_fraction",
            "early_resolution_prob",
            "distractor_fraction",
            "duplicate_fraction",
            "canary_fraction",
            "hindsight_fraction",
            "missing_day_fraction",
            "unpriced_leg_prob",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must lie in [0, 1]")
        if self.market_weight < 0 or self.market_noise < 0:
            problems.append("market_weight and market_noise must be >= 0")
        if problems:
            raise ValueError("invalid WorldConfig: " + "; ".join(problems))

    def overrides(self) -> dict[str, object]:
        """The fields that differ from the defaults, as JSON-ready values."""
        default = WorldConfig()
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                out[f.name] = value.isoformat() if isinstance(value, date) else value
        return out

    def short_hash(self) -> str | None:
        """An 8-hex-digit digest of the non-default fields; None for the default config."""
        changed = self.overrides()
        if not changed:
            return None
        blob = canonical_json(changed, ascii_only=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:8]
