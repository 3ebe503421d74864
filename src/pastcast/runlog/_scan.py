"""A step line read for its companion row with no record built (docs/runlog.md, "columnar
companion"): msgspec decodes it in C against types derived from the record's models, taking only
values the record keeps as written and skipping the episode's bulk structurally. A model that
gains a check or a field type unknown here fails loudly rather than drift."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal, Optional, get_args, get_origin

import msgspec
from annotated_types import Ge, Le
from pydantic import AfterValidator, BaseModel

from pastcast.cutoff import as_utc
from pastcast.records import EpisodeRecord, Probabilities
from pastcast.runlog._schema import StepRecord, market_problem

_KNOWN = {  # the record's own checks, stated as conditions on the values in ``scan``
    "StepRecord": {"_market_before_cutoff", "_forecast_from_log", "_forecast_to_log"},
    "Forecast": {"_finite", "_check_finite"},  # both keep probabilities in [0, 1] as written
    "EpisodeRecord": {"_check_indices"},  # of the messages: the bulk, which no column holds
}
_PROBS = "Forecast.probs"  # a map, read from pairs by ``StepRecord._forecast_from_log``
_INSTANT = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$"  # as written: read back unchanged
_PAIR = msgspec.defstruct(
    "Pair", [("label", str), ("p", float)], forbid_unknown_fields=True, gc=False
)
_BULK = {  # skipped, not parsed, but for the calls' names and models (unknown keys in them too)
    **dict.fromkeys(("messages", "notebook_in", "notebook_out"), msgspec.Raw),
    "tool_calls": list[msgspec.defstruct("Tool", [("name", str)], gc=False)],  # type: ignore[misc]
    "model_calls": list[msgspec.defstruct("Call", [("model", str)], gc=False)],  # type: ignore[misc]
}


def _type(tp: Any, meta: list[Any], where: str) -> Any:
    """The msgspec type of the JSON values a field of type ``tp`` (with ``meta``) keeps."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _type(args[0], [*meta, *args[1:]], where)
    if type(None) in args:
        inner = next(a for a in args if a is not type(None))
        return Optional[_type(inner, meta, where)]  # noqa: UP045 (a value, not a hint)
    if tp is datetime and meta == [AfterValidator(as_utc)]:
        return Annotated[str, msgspec.Meta(pattern=_INSTANT)]
    if origin is dict and (meta == list(get_args(Probabilities)[1:]) or where == _PROBS):
        return list[_PAIR]  # type: ignore[valid-type]  # labels each once: ``scan``
    if not all(isinstance(m, Ge | Le) for m in meta):
        raise TypeError(f"{where}: {meta!r} unknown to the scan")
    if tp in (str, int, float, bool) or origin is Literal:
        bounds = {k: getattr(m, k) for m in meta for k in ("ge", "le") if hasattr(m, k)}
        return Annotated[tp, msgspec.Meta(**bounds)] if bounds else tp
    if origin is tuple and args[1:] == (...,) and not meta:
        return tuple[_type(args[0], [], where), ...]  # type: ignore[misc]
    if isinstance(tp, type) and issubclass(tp, BaseModel) and not meta:
        return _struct(tp)
    raise TypeError(f"{where}: {tp!r} unknown to the scan")


@cache
def _struct(model: type[BaseModel]) -> type[msgspec.Struct]:
    """The msgspec type of ``model``'s JSON objects the record keeps as written."""
    decorators = model.__pydantic_decorators__
    checks = {n for f in fields(decorators) for n in getattr(decorators, f.name)}
    if not checks <= _KNOWN.get(model.__name__, set()):
        raise TypeError(f"{model.__name__}: checks {sorted(checks)} unknown to the scan")
    spec: list[Any] = []
    for name, f in model.model_fields.items():
        if f.alias or f.validation_alias:  # read under another key than the field's name
            raise TypeError(f"{model.__name__}.{name}: an alias unknown to the scan")
        bulk = _BULK.get(name) if model is EpisodeRecord else None
        tp = bulk or _type(f.annotation, list(f.metadata), f"{model.__name__}.{name}")
        plain = f.default is None or f.default == () or type(f.default) in (str, int, float, bool)
        spec.append((name, tp, f.default) if plain and not bulk else (name, tp))
    # gc=False (here and above): the scan's values hold no cycles; a rebuild makes millions of
    # them, which the collector need not track
    return msgspec.defstruct(
        model.__name__, spec, kw_only=True, forbid_unknown_fields=True, gc=False
    )


def scan(line: bytes | bytearray | memoryview) -> Any | None:
    """A step line of the current schema with the record's attributes (its instants as datetimes,
    its probabilities as maps) when the record keeps its values as written: probabilities in
    [0, 1], one positive when usable, no label twice, and the market reference strictly before
    the cutoff and of its age; None for a line to read as its record."""
    decode = _decoder().decode  # outside the ``try``: a model unknown here fails loudly
    try:
        step: Any = decode(line)
        f, g = step.forecast, step.grading
        probs = {q.label: q.p for q in f.probs}
        market = None if g.market_probs is None else {q.label: q.p for q in g.market_probs}
        ok = len(probs) == len(f.probs) and len(market or ()) == len(g.market_probs or ())
        ok = ok and all(0.0 <= p <= 1.0 for p in probs.values())
        instants = (g.market_at, step.cutoff, g.resolved_at)
        at, cutoff, resolved = (v and datetime.fromisoformat(v) for v in instants)
        ok = ok and (any(probs.values()) or not f.usable)
        if ok and market_problem(cutoff, at, g.market_age_days) is None:  # the record's as-of rule
            step.cutoff, g.market_at, g.resolved_at = cutoff, at, resolved
            f.probs, g.market_probs = probs, market
            return step
    except (msgspec.DecodeError, ValueError):  # not as written (an impossible date)
        pass
    return None


_decoder = cache(lambda: msgspec.json.Decoder(_struct(StepRecord)))
