"""From resolved market histories to a benchmark ``Dataset`` with a filtering funnel."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from pastcast.cutoff import is_visible, parse_cutoff
from pastcast.dataset import Dataset, with_content_id
from pastcast.markets._filters import (
    FilterConfig,
    describe_thresholds,
    faithfulness,
    history_days,
    lifetime_days,
    nontriviality,
    too_few_dates,
)
from pastcast.markets._history import MarketHistory, guard_beliefs
from pastcast.markets._schedules import Schedule, guard_steps
from pastcast.records import Event, StepSpec, TextVersion


@dataclass(frozen=True)
class TemporalSplit:
    """Whole-event split: train iff start >= t0 and close < t1; eval iff start >= t1 and
    close < t2. Events crossing a boundary belong to neither and are excluded."""

    t0: datetime
    t1: datetime
    t2: datetime

    @classmethod
    def parse(cls, text: str) -> TemporalSplit:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 3:
            raise ValueError(f"split {text!r}: expected three dates T0,T1,T2")
        t0, t1, t2 = (parse_cutoff(p) for p in parts)
        if not t0 <= t1 <= t2:
            raise ValueError(f"split {text!r}: dates must be in order T0 <= T1 <= T2")
        return cls(t0, t1, t2)


HISTORY_HINT = (
    "these markets have too few consecutive daily prices to measure movement: import a daily "
    "price series for them"
)
"""The generic hint of the price-history stage (an importer may give a more specific one)."""


def late_closes(events: Iterable[Event], collected_at: datetime) -> tuple[str, ...]:
    """The one late-close rule of the importers (``closes before collection``) and the
    construction audit: events scheduled to close after the data was collected (among resolved
    markets, there only because they resolved early, which their close dates tell)."""
    return tuple(e.id for e in events if e.close_time > collected_at)


@dataclass(frozen=True)
class FunnelStage:
    stage: str
    removed: int
    remaining: int
    note: str = ""
    hint: str = ""
    """What to do about the removals, when there is something to do (empty otherwise)."""
    examples: tuple[str, ...] = ()
    """A few of what the stage removed or changed (event ids with the reason), when it tells."""


@dataclass(frozen=True)
class DatasetBuildReport:
    """What a dataset build did: the funnel of its filters, its schedule and statistics."""

    funnel: tuple[FunnelStage, ...]
    schedule: str
    stats: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"schedule": self.schedule, "funnel": [asdict(s) for s in self.funnel]}


class _Funnel:
    def __init__(self, items: list[MarketHistory], note: str, hints: Mapping[str, str]) -> None:
        self.items = items
        self.hints = hints
        self.stages = [FunnelStage("imported", 0, len(items), note)]

    def keep(
        self,
        stage: str,
        pred: Callable[[MarketHistory], bool],
        note: str = "",
        examples: Sequence[str] = (),
    ) -> None:
        kept = [h for h in self.items if pred(h)]
        removed = len(self.items) - len(kept)
        hint = self.hints.get(stage, "") if removed else ""
        self.stages.append(FunnelStage(stage, removed, len(kept), note, hint, tuple(examples)))
        self.items = kept


EXAMPLES = 5
"""How many examples a funnel stage names."""

_NO_DAILY = "no daily price history (one price per published set; daily series: --history-repo)"


def _dataset_of(
    name: str,
    items: Sequence[MarketHistory],
    steps: Mapping[str, tuple[StepSpec, ...]],
    texts: Mapping[str, Sequence[TextVersion]] | None,
    splits: Mapping[str, str] | None = None,
    collected_at: datetime | None = None,
) -> Dataset:
    return Dataset(
        name,
        tuple(h.event for h in items),
        {h.event.id: h.resolution for h in items},
        {h.event.id: h.beliefs for h in items},
        tuple(s for h in items for s in steps[h.event.id]),
        {k: v for k, v in (splits or {}).items() if steps.get(k)},
        {h.event.id: tuple(texts[h.event.id]) for h in items if texts and texts.get(h.event.id)},
        collected_at=collected_at,
    )


def _drop_steps(
    items: Sequence[MarketHistory],
    steps: dict[str, tuple[StepSpec, ...]],
    bad: set[tuple[str, int]],
) -> None:
    for h in items:
        cutoffs = [s.cutoff for s in steps[h.event.id] if (s.event_id, s.step_index) not in bad]
        steps[h.event.id] = guard_steps(cutoffs, h.event, h.resolution)


def _edit_stage(
    funnel: _Funnel,
    name: str,
    steps: dict[str, tuple[StepSpec, ...]],
    texts: Mapping[str, Sequence[TextVersion]] | None,
) -> None:
    """Question-text notes (``Dataset.screen_at``), counted per reason: a text taken after a
    step's cutoff shortened to what can be shown to have existed then; a step whose question
    cannot be shown as of its cutoff dropped."""
    ds = _dataset_of(name, funnel.items, steps, texts)
    screens = [(s, ds.screen_at(s.event_id, s.cutoff)[1]) for s in ds.steps]
    later = sum(sc.later for _, sc in screens)
    shortened = [(s, sc) for s, sc in screens if sc.shortened and not sc.dropped]
    dropped = [(s, sc) for s, sc in screens if sc.dropped]
    examples = [f"{s.event_id}#{s.step_index}: dropped, {sc.dropped}" for s, sc in dropped]
    examples += [
        f"{s.event_id}#{s.step_index}: shortened at {sc.cut_at[0].header!r}" for s, sc in shortened
    ]
    _drop_steps(funnel.items, steps, {(s.event_id, s.step_index) for s, _ in dropped})
    reasons = Counter(sc.dropped for _, sc in dropped)
    why = "".join(f"; {n} steps dropped: {r}" for r, n in sorted(reasons.items()))
    funnel.keep(
        "question-text edits",
        lambda h: bool(steps[h.event.id]),
        f"{later} of {len(ds.steps)} steps shown a text taken after their cutoff; "
        f"{len(shortened)} of them shortened to its part before the first note not dated before "
        f"the cutoff{why or '; 0 steps dropped'}",
        examples[:EXAMPLES],
    )


def _sibling_stage(
    funnel: _Funnel,
    name: str,
    steps: dict[str, tuple[StepSpec, ...]],
    texts: Mapping[str, Sequence[TextVersion]] | None,
) -> None:
    from pastcast.markets._siblings import sibling_answers

    ds = _dataset_of(name, funnel.items, steps, texts)
    found = sibling_answers(ds)
    bad = {(f.event_id, f.step_index) for f in found}
    _drop_steps(funnel.items, steps, bad)
    funnel.keep(
        "sibling answers",
        lambda h: bool(steps[h.event.id]),
        f"{len(bad)} of {len(ds.steps)} steps dropped: their text names the answer of another "
        "event still open at their cutoff",
        [f"{f.event_id}#{f.step_index}: names {f.answer!r} ({f.sibling_id})" for f in found][
            :EXAMPLES
        ],
    )


def build_dataset(
    histories: Iterable[MarketHistory],
    *,
    name: str,
    schedule: Schedule,
    filters: FilterConfig | None = None,
    split: TemporalSplit | None = None,
    sources: Iterable[str] | None = None,
    news_counts: Mapping[date, int] | None = None,
    hints: Mapping[str, str] | None = None,
    collected_at: datetime | None = None,
    texts: Mapping[str, Sequence[TextVersion]] | None = None,
    keep_unversioned: bool = False,
    drop_sibling_answers: bool = False,
    daily_history: bool = True,
) -> tuple[Dataset, DatasetBuildReport]:
    """Filter, split and schedule resolved markets; the dataset id is ``name:<hash12>``. The
    funnel's stages, in order, and what each option turns on are in docs/datasets.md, "Building
    a benchmark". ``daily_history``: False for data without daily prices (the price-history and
    flat-and-directionless stages then keep all and say so); ``hints`` (stage name -> text)
    replace the default hint shown where a stage removed events.
    """
    cfg = filters or FilterConfig()
    items = list(histories)
    by_source = Counter(h.event.source for h in items)
    funnel = _Funnel(
        items,
        "by source: " + ", ".join(f"{k} {v}" for k, v in sorted(by_source.items())),
        {"price history": HISTORY_HINT, **(hints or {})},
    )
    if sources is not None:
        wanted = set(sources)
        unknown = sorted(wanted - set(by_source))
        if unknown:  # a misspelt source would silently keep nothing
            raise ValueError(
                f"source filter {unknown[0]!r}: no imported market has this source (sources: "
                f"{', '.join(sorted(by_source)) or 'none'})"
            )
        funnel.keep(
            "source", lambda h: h.event.source in wanted, "kept: " + ",".join(sorted(wanted))
        )
    funnel.items = [
        MarketHistory(h.event, h.resolution, guard_beliefs(h.beliefs, h.resolution), h.activity)
        for h in funnel.items
    ]
    funnel.keep("pre-resolution beliefs", lambda h: bool(h.beliefs), "no price before resolution")
    funnel.keep(
        "lifetime",
        lambda h: lifetime_days(h) >= cfg.min_lifetime_days,
        f">= {cfg.min_lifetime_days} UTC days",
    )
    if all(h.activity is None for h in funnel.items):
        funnel.keep("faithful days", lambda h: True, "not available: source has no trade counts")
    else:

        def _faithful(h: MarketHistory) -> bool:
            f = faithfulness(h, cfg)
            return f is None or (
                f[0] >= cfg.min_faithful_fraction and f[1] <= cfg.max_unfaithful_run
            )

        funnel.keep(
            "faithful days",
            _faithful,
            f"rho >= {cfg.min_faithful_fraction}, longest unfaithful run <= "
            f"{cfg.max_unfaithful_run} ({describe_thresholds(cfg)})",
        )
    unmeasured = f"not measurable: {_NO_DAILY}"
    funnel.keep(
        "price history",
        lambda h: not daily_history or history_days(h) >= cfg.min_history_days,
        f"longest run of consecutive priced days >= {cfg.min_history_days}"
        if daily_history
        else unmeasured,
    )
    stats = {h.event.id: nontriviality(h, cfg) for h in funnel.items}
    funnel.keep(
        "nontrivial: not near-certain",
        lambda h: (s := stats[h.event.id]) is not None and s.a >= cfg.min_surprisal,
        f"a_Q >= {cfg.min_surprisal}",
    )

    def _moving(h: MarketHistory) -> bool:
        s = stats[h.event.id]
        return s is not None and not (s.v < cfg.min_variation and abs(s.c) < cfg.min_consistency)

    funnel.keep(
        "nontrivial: not flat and directionless",
        lambda h: not daily_history or _moving(h),
        f"removed iff V_Q < {cfg.min_variation} and |C_Q| < {cfg.min_consistency}"
        if daily_history
        else unmeasured,
    )
    if collected_at is not None:
        late = set(late_closes((h.event for h in funnel.items), collected_at))
        funnel.keep(
            "closes before collection",
            lambda h: h.event.id not in late,
            f"scheduled close <= {collected_at:%Y-%m-%d %H:%M} (a later one resolved early)",
            sorted(late)[:EXAMPLES],
        )
    splits: dict[str, str] = {}
    if split is not None:
        for h in funnel.items:
            opened, closed = h.event.open_time, h.event.close_time
            if opened >= split.t0 and closed < split.t1:
                splits[h.event.id] = "train"
            elif opened >= split.t1 and closed < split.t2:
                splits[h.event.id] = "eval"
        funnel.keep(
            "temporal split",
            lambda h: h.event.id in splits,
            f"train [{split.t0.date()}, {split.t1.date()}), eval [{split.t1.date()}, "
            f"{split.t2.date()}); crossing events excluded",
        )
    steps: dict[str, tuple[StepSpec, ...]] = {
        h.event.id: schedule(h.event, h.beliefs, h.resolution, news_counts) for h in funnel.items
    }
    funnel.keep("forecast steps", lambda h: bool(steps[h.event.id]), f"schedule {schedule.name}")
    if texts:  # a source with snapshots (none at all: the source has no versions)
        before = sum(len(steps[h.event.id]) for h in funnel.items)
        if not keep_unversioned:
            for h in funnel.items:
                published = [t.published_at for t in texts.get(h.event.id, ())]
                versioned = [
                    s.cutoff
                    for s in steps[h.event.id]
                    if any(is_visible(t, s.cutoff) for t in published)
                ]
                steps[h.event.id] = guard_steps(versioned, h.event, h.resolution)
        dropped = before - sum(len(steps[h.event.id]) for h in funnel.items)
        funnel.keep(
            "text snapshots",
            lambda h: bool(steps[h.event.id]),
            f"{dropped} of {before} steps dropped: no snapshot of the question's text published "
            "before their cutoff"
            if not keep_unversioned
            else "steps without a snapshot published before their cutoff kept (flagged)",
        )
    _edit_stage(funnel, name, steps, texts)
    if drop_sibling_answers:
        _sibling_stage(funnel, name, steps, texts)
    if cfg.min_dates > 0:
        few = too_few_dates(
            [h.event for h in funnel.items],
            {k: len(v) for k, v in steps.items()},
            splits,
            cfg.min_dates,
        )
        funnel.keep(
            "forecast dates",
            lambda h: h.event.id not in few,
            f"evaluation events keep >= {cfg.min_dates} forecast dates (training events keep "
            "theirs)",
            [f"{k}: {v}" for k, v in sorted(few.items())[:EXAMPLES]],
        )
    kept = funnel.items
    dataset = _dataset_of(name, kept, steps, texts, splits, collected_at)

    report = DatasetBuildReport(
        funnel=tuple(funnel.stages),
        schedule=schedule.name,
        stats={
            h.event.id: {"a_Q": s.a, "V_Q": s.v, "C_Q": s.c}
            for h in kept
            if (s := stats.get(h.event.id)) is not None
        },
    )
    return with_content_id(dataset, name), report
