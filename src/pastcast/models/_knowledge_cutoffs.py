"""Knowledge cutoffs of models: the last day a model's training data may cover (not a step's
cutoff). Published, registered and measured ones (``knowledge_cutoffs``), and what a run log's
steps say once the models' memory is set aside (docs/runs.md, "Model knowledge cutoffs";
docs/models.md, "Measured knowledge cutoffs").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, ValidationError

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.models._pricing import longest_prefix, read_table, spec_model_name
from pastcast.owned import cache_root
from pastcast.records import Record
from pastcast.registry import Registry
from pastcast.safejson import canonical_json
from pastcast.textfiles import package_toml

if TYPE_CHECKING:
    from pastcast.runlog import StepColumns
    from pastcast.scoring import ScoreTable

knowledge_cutoffs: Registry[date] = Registry("knowledge_cutoff")
"""Model name -> a factory returning its knowledge cutoff (``Entry.meta["knowledge_cutoff"]``)."""


def _constant(day: date) -> Callable[[], date]:
    def knowledge_cutoff() -> date:
        return day

    return knowledge_cutoff


def register_knowledge_cutoff(
    model: str, last_day: date | str, *, source: str = "", replace: bool = False
) -> None:
    """Record that ``model``'s training data may cover every day up to ``last_day``."""
    day = date.fromisoformat(last_day) if isinstance(last_day, str) else last_day
    knowledge_cutoffs.add(
        spec_model_name(model),
        _constant(day),
        description=f"training data through {day.isoformat()}" + (f" ({source})" if source else ""),
        replace=replace,
        knowledge_cutoff=day,
    )


# The vendors' published cutoffs are data: ``published_cutoffs.toml`` beside this module.
for _name, _day in package_toml("pastcast.models", "published_cutoffs.toml").items():
    register_knowledge_cutoff(_name, _day, source="published by the vendor")


def _entry(spec: str) -> str | None:
    _load_measured()
    return longest_prefix(spec_model_name(spec), knowledge_cutoffs.names())


def knowledge_cutoff(spec: str) -> date | None:
    """The knowledge cutoff of the model named by ``spec``, or None when none is registered."""
    return knowledge_cutoffs.build(best) if (best := _entry(spec)) else None


def knowledge_cutoff_source(spec: str) -> str | None:
    """Where the knowledge cutoff of ``spec`` comes from (the registry entry's description:
    the vendor, a file, a measurement with its method and interval), or None."""
    return knowledge_cutoffs.get(best).description if (best := _entry(spec)) else None


MEASURED_CUTOFFS_ENV = "PASTCAST_KNOWLEDGE_CUTOFFS"


def measured_cutoffs_file() -> Path:
    """The file of measured cutoffs: ``$PASTCAST_KNOWLEDGE_CUTOFFS``, else
    ``knowledge-cutoffs.json`` in pastcast's cache folder (``$PASTCAST_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/pastcast``, else ``~/.cache/pastcast``)."""
    own = os.environ.get(MEASURED_CUTOFFS_ENV)
    return Path(own) if own else cache_root() / "knowledge-cutoffs.json"


class MeasuredCutoff(Record):
    """A knowledge cutoff measured from what a model recalls, with how it was measured."""

    model: str
    """The model spec as probed (``local:smollm2``)."""
    knowledge_cutoff: date
    """The last day of the last month the model still recalls (above chance)."""
    low: date
    high: date
    """The interval of the estimate (last days of months)."""
    level: float = Field(gt=0, lt=1)
    method: str
    corpus: str
    """The corpus the questions came from (its spec and content hash)."""
    measured_on: date
    questions: int = Field(ge=0)
    version: str

    def line(self) -> str:
        return (
            f"measured {self.measured_on.isoformat()} by {self.method} on {self.corpus}: "
            f"{self.level:.0%} interval {self.low.isoformat()} .. {self.high.isoformat()}, "
            f"{self.questions} questions"
        )


_LOADED: dict[str, tuple[tuple[str, int, int], tuple[str, ...]]] = {}
"""The measured-cutoffs file last registered from: its path and state, and the names it gave
(registered again if the registry lost them, as the tests' registry restore does)."""


def measured_cutoffs(path: str | Path | None = None) -> dict[str, MeasuredCutoff]:
    """The measured cutoffs kept in ``path`` (default ``measured_cutoffs_file()``) by model
    spec; empty when there is no file. ``ValueError`` (one line) for a file that is not one."""
    p = Path(path) if path is not None else measured_cutoffs_file()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"{p}: cannot read measured cutoffs: {exc}") from None
    try:
        data = safejson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("expected an object of model -> measurement")
        return {str(k): MeasuredCutoff.model_validate(v) for k, v in data.items()}
    except (ValueError, ValidationError) as exc:
        one = " ".join(str(exc).split())[:200]
        raise ValueError(f"{p}: not a file of measured cutoffs: {one}") from None


def _register_measured(m: MeasuredCutoff) -> None:
    register_knowledge_cutoff(m.model, m.knowledge_cutoff, source=m.line(), replace=True)


def _load_measured() -> None:
    """Register the measured cutoffs of the current file unless already done for its current
    state (a missing or broken file registers nothing: a lookup never fails because of it)."""
    path = measured_cutoffs_file()
    try:
        stat = path.stat()
    except OSError:
        return
    state = (str(path), stat.st_mtime_ns, stat.st_size)
    last = _LOADED.get("file")
    if last is not None and last[0] == state and all(n in knowledge_cutoffs for n in last[1]):
        return
    try:
        found = measured_cutoffs(path)
    except ValueError:
        return
    for m in found.values():
        _register_measured(m)
    _LOADED["file"] = (state, tuple(spec_model_name(m.model) for m in found.values()))


def save_measured_cutoff(m: MeasuredCutoff, path: str | Path | None = None) -> Path:
    """Keep ``m`` in ``path`` (default ``measured_cutoffs_file()``; replacing an earlier
    measurement of the same model, atomically) and register it now."""
    p = Path(path) if path is not None else measured_cutoffs_file()
    kept = measured_cutoffs(p)
    kept[m.model] = m
    p.parent.mkdir(parents=True, exist_ok=True)
    body = {k: v.model_dump(mode="json") for k, v in sorted(kept.items())}
    write_atomic(p, canonical_json(body) + "\n")
    _register_measured(m)
    return p


def remembered(resolved_at: datetime, knowledge_cutoff: date) -> bool:
    """Whether an outcome public at ``resolved_at`` may be in training data through
    ``knowledge_cutoff`` (it resolved before the day after that one began)."""
    after = datetime.combine(knowledge_cutoff + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    return resolved_at < after


def load_knowledge_cutoffs(path: str | Path, *, replace: bool = True) -> dict[str, date]:
    """Register the cutoffs of a TOML or JSON file ``{"model": "YYYY-MM-DD", ...}``; returns them.
    Errors name the file and the model."""
    p = Path(path)
    raw = read_table(p, "model cutoffs", "model -> date")
    out: dict[str, date] = {}
    for model, value in raw.items():
        try:
            if isinstance(value, datetime):
                day = value.date()
            else:
                day = value if isinstance(value, date) else date.fromisoformat(str(value))
        except ValueError:
            raise ValueError(f"{p}: {model}: not a date (YYYY-MM-DD): {value!r}") from None
        register_knowledge_cutoff(model, day, source=str(p), replace=replace)
        out[model] = day
    return out


@dataclass(frozen=True)
class KnowledgeCutoffFilter:
    keep: NDArray[np.bool_]
    """Per step of the logs (in log order), whether its event resolved after every model's
    cutoff."""
    knowledge_cutoff: date | None
    """The latest knowledge cutoff (None: no model in the logs)."""
    model: str | None
    """The model it belongs to."""
    dropped_events: int
    dropped_steps: int


def _resolved(log: StepColumns) -> Iterator[tuple[str, str, int, datetime | None]]:
    """Agent, event, step and resolution time of each row of ``log``, a batch at a time."""
    names = ["agent", "event_id", "step_index", "resolved_at"]
    for batch in log.table.select(names).to_batches(max_chunksize=65_536):
        yield from zip(*(batch.column(c).to_pylist() for c in names), strict=True)


def _model_cutoffs(logs: Sequence[StepColumns]) -> dict[str, date | None]:
    """Each model the logs' agents name, with its knowledge cutoff: the first one a log header
    records, else the registered one (None: unknown)."""
    out: dict[str, date | None] = {}
    for log in logs:
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str) and out.get(model) is None:
                out[model] = log.header.knowledge_cutoffs.get(model) or knowledge_cutoff(model)
    return out


def after_knowledge_cutoff(logs: Sequence[StepColumns]) -> KnowledgeCutoffFilter:
    """The steps of ``logs`` on events no model of theirs may remember; ``ValueError`` (one
    line) for a model without a known cutoff or a log without resolution times."""
    cutoffs = _model_cutoffs(logs)
    unknown = sorted(m for m, c in cutoffs.items() if c is None)
    if unknown:
        raise ValueError(
            f"no knowledge cutoff known for {', '.join(unknown)} (give the model a "
            "knowledge_cutoff in the plan, or register one with "
            "pastcast.models.register_knowledge_cutoff)"
        )
    n = sum(log.table.num_rows for log in logs)
    known = {m: c for m, c in cutoffs.items() if c is not None}
    if not known:
        return KnowledgeCutoffFilter(np.ones(n, dtype=np.bool_), None, None, 0, 0)
    model = max(known, key=lambda m: known[m])
    latest = known[model]
    keep = np.empty(n, dtype=np.bool_)
    dropped: set[str] = set()
    i = 0
    for log in logs:
        for _, event_id, step, resolved_at in _resolved(log):
            if resolved_at is None:
                raise ValueError(
                    f"{log.path}: step {event_id}#{step} has no "
                    "resolution time (a log written before they were recorded; run it again)"
                )
            keep[i] = not remembered(resolved_at, latest)
            if not keep[i]:
                dropped.add(event_id)
            i += 1
    return KnowledgeCutoffFilter(keep, latest, model, len(dropped), int(n - keep.sum()))


@dataclass(frozen=True)
class KnowledgeGap:
    """How much better a model's agents score on events resolved by its knowledge cutoff (it
    may remember them) than on later ones: a positive ``gap`` is Brier lost after the cutoff."""

    model: str
    knowledge_cutoff: date
    source: str | None
    """Where the cutoff comes from (the vendor, a file, a measurement)."""
    agents: tuple[str, ...]
    before_events: int
    after_events: int
    before_brier: float
    after_brier: float
    gap: float
    """``after_brier - before_brier``."""
    low: float | None
    high: float | None
    """Percentile interval of the event-clustered bootstrap (None with fewer than two events
    on a side)."""


def knowledge_gaps(
    logs: Sequence[StepColumns],
    table: ScoreTable,
    *,
    draws: int = 4000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[KnowledgeGap, ...]:
    """For each model of ``logs`` with a known knowledge cutoff, the Brier of its agents'
    forecasts on events resolved by the cutoff and after it, and their difference with an
    interval: whole events resampled (``cluster_bootstrap_means``), both groups on the same
    draws. ``table``: the score table of the logs' steps, in log order. Steps without a
    resolution time are left out."""
    from pastcast.scoring import cluster_bootstrap_means

    cutoffs = {m: c for m, c in _model_cutoffs(logs).items() if c is not None}
    agents: dict[str, set[str]] = {model: set() for model in cutoffs}
    rows: dict[str, list[int]] = {model: [] for model in cutoffs}
    before: dict[str, list[bool]] = {model: [] for model in cutoffs}
    i = 0
    for log in logs:
        models_of: dict[str, set[str]] = {}  # an agent's steps count once for its model
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str) and model in cutoffs:
                models_of.setdefault(spec.name, set()).add(model)
                agents[model].add(spec.name)
        for agent, _, _, resolved_at in _resolved(log):
            if resolved_at is not None:
                for model in models_of.get(agent, ()):
                    rows[model].append(i)
                    before[model].append(remembered(resolved_at, cutoffs[model]))
            i += 1
    brier_all = table.metrics("uniform")["brier"]
    events_all = table.codes("event")
    out: list[KnowledgeGap] = []
    for model in sorted(rows):
        if not rows[model]:
            continue
        cut = cutoffs[model]
        picked = np.asarray(rows[model], dtype=np.int64)
        brier = brier_all[picked]
        events = events_all[picked]
        was = np.asarray(before[model], dtype=np.bool_)
        n_before = int(np.unique(events[was]).size)
        n_after = int(np.unique(events[~was]).size)
        if not n_before or not n_after:
            continue
        cols = np.stack([np.where(was, brier, np.nan), np.where(~was, brier, np.nan)], 1)
        mean_b, mean_a = float(np.nanmean(cols[:, 0])), float(np.nanmean(cols[:, 1]))
        low: float | None = None
        high: float | None = None
        if n_before >= 2 and n_after >= 2 and draws > 0:
            boot = cluster_bootstrap_means(events, cols, draws, np.random.default_rng(seed))
            diff = boot[1] - boot[0]
            diff = diff[np.isfinite(diff)]
            if diff.size:
                tail = (1.0 - level) / 2.0 * 100.0
                low = float(np.percentile(diff, tail))
                high = float(np.percentile(diff, 100.0 - tail))
        out.append(
            KnowledgeGap(
                model=model,
                knowledge_cutoff=cut,
                source=knowledge_cutoff_source(model),
                agents=tuple(sorted(agents[model])),
                before_events=n_before,
                after_events=n_after,
                before_brier=mean_b,
                after_brier=mean_a,
                gap=mean_a - mean_b,
                low=low,
                high=high,
            )
        )
    return tuple(out)
