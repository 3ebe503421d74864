"""Building a world: lay out events, simulate evidence and markets, write the news."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from pastcast.dataset import Dataset
from pastcast.records import DailyBelief, Document, Event, Resolution, StepSpec, TextVersion
from pastcast.world import _news as news
from pastcast.world._config import STREAM_KEY, WORLD_VERSION, WorldConfig
from pastcast.world._evidence import (
    expected_signal_mass,
    random_time,
    simulate_beliefs,
    simulate_signals,
)
from pastcast.world._names import NameGen
from pastcast.world._phrases import SOURCES
from pastcast.world._steps import default_steps
from pastcast.world._templates import EventSpec, make_spec
from pastcast.world._world import World

_CATEGORIES = ("politics", "economics", "sports", "technology", "geopolitics", "science")


@dataclass(frozen=True)
class Layout:
    """One event before simulation: question, timing, latent truth and market prior."""

    spec: EventSpec
    open_time: datetime
    close_time: datetime
    resolved_at: datetime
    truth: str
    prior: dict[str, float]


def _rng(seed: int, cfg: WorldConfig, stream: str) -> random.Random:
    # String seeds are hashed with SHA-512 by ``random``: stable across runs and platforms.
    return random.Random(f"{STREAM_KEY}:{seed}:{cfg.short_hash() or ''}:{stream}")


def _layout(rng: random.Random, names: NameGen, cfg: WorldConfig) -> list[Layout]:
    n_multi = round(cfg.n_events * cfg.multi_fraction)
    kinds = ["multi"] * n_multi + ["binary"] * (cfg.n_events - n_multi)
    rng.shuffle(kinds)
    cats = [_CATEGORIES[i % len(_CATEGORIES)] for i in range(cfg.n_events)]
    rng.shuffle(cats)
    out = []
    for kind, cat in zip(kinds, cats, strict=True):
        # Log-uniform lifetimes: many short-lived questions, a few long ones.
        lo, hi = math.log(cfg.min_lifetime_days), math.log(cfg.max_lifetime_days)
        life = round(math.exp(rng.uniform(lo, hi)))
        open_day = cfg.start + timedelta(days=rng.randrange((cfg.end - cfg.start).days - life))
        open_time = datetime.combine(
            open_day, time(rng.randrange(6, 22), rng.randrange(60)), tzinfo=UTC
        )
        close_time = datetime.combine(open_day + timedelta(days=life), time(23, 59, 59), tzinfo=UTC)
        n_opts = rng.randint(cfg.min_options, cfg.max_options)
        spec = make_spec(
            "multi" if kind == "multi" else "binary", cat, n_opts, close_time.date(), names, rng
        )
        if spec.kind == "binary":
            p0 = rng.uniform(0.15, 0.85)
            truth = "Yes" if rng.random() < p0 else "No"
            prior = {"Yes": math.log(p0 / (1 - p0)) + rng.gauss(0, 0.3)}
        else:
            strength = [rng.gauss(0, 0.8) for _ in spec.labels]
            weights = [math.exp(s) for s in strength]
            truth = rng.choices(spec.labels, weights=weights)[0]
            prior = {
                lab: s + rng.gauss(0, 0.3) for lab, s in zip(spec.labels, strength, strict=True)
            }
        resolved_at = close_time
        if truth == "Yes" and life >= 20 and rng.random() < cfg.early_resolution_prob:
            span = close_time - open_time
            resolved_at = random_time(rng, open_time + span / 2, open_time + span * 0.95)
        out.append(Layout(spec, open_time, close_time, resolved_at, truth, prior))
    out.sort(key=lambda lay: (lay.open_time, lay.spec.title))
    return out


def build_world(seed: int = 0, config: WorldConfig | None = None) -> World:
    """Build the simulated world for ``seed``; the same seed and config give identical records."""
    cfg = config or WorldConfig()
    rng = _rng(seed, cfg, "layout")
    names = NameGen(rng)
    layouts = _layout(rng, names, cfg)
    ids = [f"world-{i + 1:03d}" for i in range(len(layouts))]
    canary_events = set(rng.sample(ids, round(len(ids) * cfg.canary_fraction)))
    hindsight_events: set[str] = set()
    if cfg.hindsight_fraction > 0:  # a stream of its own: the default world draws nothing here
        hrng = _rng(seed, cfg, "hindsight")
        hindsight_events = set(hrng.sample(ids, round(len(ids) * cfg.hindsight_fraction)))

    # Calibrate the signal rate so that the corpus comes out near ``n_documents``.
    target_core = (cfg.n_documents - len(canary_events)) / (1 + cfg.duplicate_fraction)
    mass = sum(expected_signal_mass(lay.open_time, lay.resolved_at) for lay in layouts)
    base_rate = max(0.0, target_core * (1 - cfg.distractor_fraction) / mass)

    events: list[Event] = []
    resolutions: dict[str, Resolution] = {}
    beliefs: dict[str, tuple[DailyBelief, ...]] = {}
    steps: list[StepSpec] = []
    drafts: list[news.Draft] = []
    for event_id, lay in zip(ids, layouts, strict=True):
        spec = lay.spec
        event = Event(
            id=event_id,
            title=spec.title,
            description=spec.description,
            resolution_criteria=spec.criteria,
            kind=spec.kind,
            labels=spec.labels,
            category=spec.category,
            tags=spec.tags,
            open_time=lay.open_time,
            close_time=lay.close_time,
            source=WORLD_VERSION,
        )
        res = Resolution(event_id=event_id, label=lay.truth, resolved_at=lay.resolved_at)
        erng = _rng(seed, cfg, f"event:{event_id}")
        signals = simulate_signals(
            erng, spec.kind, spec.labels, lay.truth, lay.open_time, lay.resolved_at, base_rate, cfg
        )
        beliefs[event_id] = simulate_beliefs(
            erng, event_id, spec.kind, lay.prior, signals, lay.open_time, lay.resolved_at, cfg
        )
        drafts += [news.evidence_article(erng, spec, event_id, s) for s in signals]
        if event_id in canary_events:
            drafts.append(news.canary(erng, spec, event_id, lay.truth, lay.resolved_at))
        if event_id in hindsight_events:
            planted = news.hindsight(
                erng, spec, event_id, lay.truth, lay.open_time, lay.resolved_at
            )
            drafts += [planted] if planted else []
        events.append(event)
        resolutions[event_id] = res
        steps += default_steps(event, res)

    nrng = _rng(seed, cfg, "news")
    lo = datetime.combine(cfg.start, time(0), tzinfo=UTC)
    hi = datetime.combine(cfg.end, time(0), tzinfo=UTC) + timedelta(days=1)
    n_evidence = sum(d.kind == "evidence" for d in drafts)
    n_other = max(0, round(target_core) - n_evidence)
    specs = [lay.spec for lay in layouts]
    for i in range(n_other):
        if i % 4 == 3:  # a quarter of distractors reuse an event's proper name
            drafts.append(news.lookalike(nrng, nrng.choice(nrng.choice(specs).entities), lo, hi))
        else:
            drafts.append(news.distractor(nrng, names, lo, hi))
    resolved_by_event = {e: r.resolved_at for e, r in resolutions.items()}
    originals = [d for d in drafts if d.kind not in ("canary", "hindsight")]
    n_dup = min(len(originals), round(len(originals) * cfg.duplicate_fraction))
    for orig in nrng.sample(originals, n_dup):
        limit = resolved_by_event[orig.event_id] if orig.event_id else None
        drafts.append(news.duplicate(nrng, orig, limit))

    drafts.sort(key=lambda d: (d.timestamp, d.title, d.source, d.text))
    documents: list[Document] = []
    canary_ids: set[str] = set()
    hindsight_ids: set[str] = set()
    evidence: dict[str, list[str]] = {e: [] for e in ids}
    for i, d in enumerate(drafts):
        doc_id = f"doc-{i + 1:05d}"
        name, host = SOURCES[d.source]
        slug = re.sub(r"[^a-z0-9]+", "-", d.title.lower()).strip("-")[:60]
        url = f"https://{host}/{d.timestamp:%Y/%m/%d}/{slug}-{i + 1}"
        documents.append(
            Document(
                id=doc_id, timestamp=d.timestamp, title=d.title, text=d.text, source=name, url=url
            )
        )
        if d.kind == "canary":
            canary_ids.add(doc_id)
        elif d.kind == "hindsight":
            hindsight_ids.add(doc_id)
        elif d.event_id is not None:
            evidence[d.event_id].append(doc_id)

    dataset_id = f"{WORLD_VERSION}:seed={seed}"
    if cfg.short_hash():
        dataset_id += f":config={cfg.short_hash()}"
    # A generated question is written once, when its market opens: that text is its snapshot.
    shown = {"title", "description", "resolution_criteria"}
    texts = {
        e.id: (
            TextVersion(
                event_id=e.id,
                published_at=e.open_time,
                origin="world",
                **e.model_dump(include=shown),
            ),
        )
        for e in events
    }
    dataset = Dataset(dataset_id, tuple(events), resolutions, beliefs, tuple(steps), texts=texts)
    return World(
        seed,
        cfg,
        dataset,
        tuple(documents),
        frozenset(canary_ids),
        {k: tuple(v) for k, v in evidence.items()},
        frozenset(hindsight_ids),
    )
