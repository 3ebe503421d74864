"""The Arrow schema of the step file, derived from ``StepRecord`` so it cannot drift from it.

Dataframe libraries infer column types from a sample (polars: the first 100 records): a field that
is null or an empty list in every sampled record (``error``, ``tool_calls`` of a baseline agent)
gets a null type there, and a later value fails to load or is dropped. With this schema every
column has its type from the first record.
"""

from __future__ import annotations

import types
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import numpy as np
from pydantic import BaseModel

if TYPE_CHECKING:
    import pyarrow as pa

_NUMERIC = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
            "float64")  # fmt: skip
"""The numeric types ``as_numpy`` reads, by numpy's names (Arrow's, but for its floats)."""


def _scalar(tp: Any) -> pa.DataType | None:
    import pyarrow as pa

    if tp is bool:
        return pa.bool_()
    if tp is int:
        return pa.int64()
    if tp is float:
        return pa.float64()
    if tp in (str, datetime, date) or get_origin(tp) is Literal:
        return pa.string()  # instants and days are ISO text in the log
    return None


def _arrow_type(tp: Any) -> pa.DataType:
    import pyarrow as pa

    scalar = _scalar(tp)
    if scalar is not None:
        return scalar
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _arrow_type(args[0])
    if origin is Union or origin is types.UnionType:
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:  # a log field has one type (null aside)
            raise TypeError(f"no Arrow type for {tp!r}: a run-log field has one type")
        return _arrow_type(inner[0])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return pa.list_(_arrow_type(args[0]))
    if origin is dict and args == (str, float):  # ``Probabilities``: label/p pairs
        return pa.list_(pa.struct([("label", pa.string()), ("p", pa.float64())]))
    if origin is dict:  # ``JsonObject``: JSON text
        return pa.string()
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return pa.struct(_fields(tp))
    raise TypeError(f"no Arrow type for {tp!r}")


def _fields(model: type[BaseModel]) -> list[pa.Field]:
    import pyarrow as pa

    return [pa.field(name, _arrow_type(f.annotation)) for name, f in model.model_fields.items()]


def step_schema() -> pa.Schema:
    """The Arrow schema of one step record: pass it to the reader, e.g.
    ``polars.read_ndjson(path, schema=polars.from_arrow(step_schema().empty_table()).schema)``,
    ``datasets.load_dataset("json", ..., features=Features.from_arrow_schema(step_schema()))``
    or ``pyarrow.json.read_json(path, parse_options=ParseOptions(explicit_schema=...))``."""
    import pyarrow as pa

    from pastcast.runlog._schema import StepRecord

    return pa.schema(_fields(StepRecord))


def as_numpy(values: pa.Array | pa.ChunkedArray, dtype: type[np.generic] = np.float64) -> Any:
    """A numeric or boolean Arrow column as a numpy array of ``dtype`` (a null reads as NaN,
    0 or False), read from its buffers: Arrow's own conversion imports pandas, which takes
    longer than scoring a hundred thousand steps."""
    import pyarrow as pa

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    parts = []
    for chunk in chunks:
        n, start = len(chunk), chunk.offset
        valid, data = chunk.buffers()[:2]
        if pa.types.is_boolean(chunk.type):
            bits = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
            part = np.unpackbits(bits, bitorder="little")[start : start + n].astype(dtype)
        else:
            name = {"float": "float32", "double": "float64"}.get(str(chunk.type), str(chunk.type))
            if name not in _NUMERIC:
                raise TypeError(f"as_numpy: {chunk.type} is not a numeric or boolean type")
            stored = np.dtype(name)
            part = np.frombuffer(data, stored, n, start * stored.itemsize).astype(dtype)
        if chunk.null_count:
            present = np.unpackbits(np.frombuffer(valid, np.uint8), bitorder="little")
            part[~present[start : start + n].astype(bool)] = np.nan if part.dtype.kind == "f" else 0
        parts.append(part)
    if len(parts) == 1:
        return parts[0]  # already a copy of its own
    return np.concatenate(parts) if parts else np.zeros(0, dtype)
