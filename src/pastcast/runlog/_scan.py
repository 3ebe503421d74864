"""The companion's row of a step line without a record per line (docs/runlog.md, "columnar
companion"): msgspec decodes the line in C against types derived from the step record's models
that take only values the record keeps as written (no coercion, no unknown field, a default
only where it is a plain value), skipping the episode's bulk (texts, calls, notebooks)
structurally but for the calls' names and models; the record's own checks are stated as
conditions on the values. A line this cannot vouch for is read as its record. A model that
gains a check or a field type unknown here fails loudly rather than drift."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal, Optional, get_args, get_origin

import msgspec
from annotated_types import Ge, Le
from pydantic import AfterValidator, BaseModel
from pydantic_core import PydanticUndefined

from pastcast.cutoff import as_utc
from pastcast.records import EpisodeRecord, Probabilities
from pastcast.runlog._companion import step_row
from pastcast.runlog._schema import StepRecord, market_problem

_KNOWN = {
    "StepRecord": {"_market_before_cutoff", "_forecast_from_log", "_forecast_to_log"},
    "Forecast": {"_finite", "_check_finite"},  # both keep probabilities in [0, 1] as written
    "EpisodeRecord": {"_check_indices"},  # of the messages: the bulk, which no column holds
}
"""The record's own checks, stated here as conditions on the values (``scan_row``)."""

_PROBS = "Forecast.probs"  # a map, read from pairs by ``StepRecord._forecast_from_log``
_INSTANT = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$"  # as written: read back unchanged


class _Pair(msgspec.Struct, forbid_unknown_fields=True):
    label: str
    p: float


class _Tool(msgspec.Struct):  # the rest of each call is skipped, not parsed
    name: str


class _Model(msgspec.Struct):
    model: str


_BULK = {"messages": msgspec.Raw, "notebook_in": msgspec.Raw, "notebook_out": msgspec.Raw,
         "tool_calls": list[_Tool], "model_calls": list[_Model]}  # fmt: skip


def _type(tp: Any, meta: list[Any], where: str) -> Any:
    """The msgspec type of the JSON values a field of type ``tp`` (with ``meta``) keeps."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _type(args[0], [*meta, *args[1:]], where)
    if type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        return Optional[_type(inner, meta, where)]  # noqa: UP045 (a runtime type, not a hint)
    if tp is datetime and meta == [AfterValidator(as_utc)]:
        return Annotated[str, msgspec.Meta(pattern=_INSTANT)]
    if origin is dict and (meta == list(get_args(Probabilities)[1:]) or where == _PROBS):
        return list[_Pair]  # labels each once: ``scan_row``
    if not all(isinstance(m, Ge | Le) for m in meta):
        raise TypeError(f"{where}: {meta!r} unknown to the scan")
    if tp in (str, int, float, bool) or origin is Literal:
        bounds = {k: getattr(m, k) for m in meta for k in ("ge", "le") if hasattr(m, k)}
        return Annotated[tp, msgspec.Meta(**bounds)] if bounds else tp
    if origin is tuple and args[1:] == (...,) and not meta:
        return list[_type(args[0], [], where)]  # type: ignore[misc]
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
        if model is EpisodeRecord and name in _BULK:
            spec.append((name, _BULK[name]))
            continue
        tp = _type(f.annotation, list(f.metadata), f"{model.__name__}.{name}")
        plain = f.default is None or f.default == () or type(f.default) in (str, int, float, bool)
        spec.append((name, tp, f.default) if plain else (name, tp))
    return msgspec.defstruct(model.__name__, spec, kw_only=True, forbid_unknown_fields=True)


@cache
def _decoder() -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(_struct(StepRecord))


def scan_row(line: bytes | memoryview, pos: int, length: int) -> dict[str, Any] | None:
    """The companion's row of a step line of the current schema (``step_row``) when the record
    keeps its values as written: probabilities in [0, 1], one positive when usable, and no label
    twice; the market reference strictly before the cutoff and of its age (``market_problem``).
    None for a line to read as its record."""
    decoder = _decoder()  # outside the ``try``: a model unknown to the scan fails loudly
    try:
        record = msgspec.to_builtins(decoder.decode(line), enc_hook=lambda raw: None)
        forecast, grading = record["forecast"], record["grading"]
        probs = [pair["p"] for pair in forecast["probs"]]
        at, cutoff = grading["market_at"], datetime.fromisoformat(record["cutoff"])
        at = None if at is None else datetime.fromisoformat(at)
        if (
            all(0.0 <= p <= 1.0 for p in probs)
            and (any(p > 0.0 for p in probs) or not forecast["usable"])
            and all(
                len({q["label"] for q in pairs}) == len(pairs)
                for pairs in (forecast["probs"], grading["market_probs"] or ())
            )
            and market_problem(cutoff, at, grading["market_age_days"]) is None
        ):
            return step_row(record, pos, length)
    except (msgspec.DecodeError, ValueError):  # not a record as written (an impossible date)
        pass
    return None
