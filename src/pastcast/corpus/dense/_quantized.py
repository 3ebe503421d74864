"""8-bit copies of whole months of embeddings, for a candidate scan with a proven error bound
(grids, the bound and the files: docs/corpus.md, "At scale"). Candidates are never final:
``DenseIndex`` rescores them and uses the bound to prove that no other document can enter its
top k."""

from __future__ import annotations

import json
import os
from contextlib import suppress
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast.atomic import atomic_path
from pastcast.npyfiles import drop_pages, load_npy, load_npz

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
_CHUNK = 65_536
# float64 arithmetic on the estimates and the rescoring differs from real arithmetic by ~1e-15
# for unit vectors; a margin far above that keeps every comparison on the safe side
_ROUNDING = 1e-9


@dataclass(frozen=True)
class MonthGrid:
    """One month's grid and the extremes of its copy's error, over the rows ``[lo, hi)``."""

    lo: int
    hi: int
    step: float
    error: F64  # per dimension: max |x_i - x'_i|
    largest: F64  # per dimension: max |x_i|
    max_norm: float  # max |x|
    max_residual: float  # max |x - x'|


@dataclass(frozen=True)
class QueryCode:
    """A query on its own 8-bit grid: ``q ~ scale * code``."""

    code: npt.NDArray[np.int8]  # one row
    scale: float
    abs_rounded: F64  # |q'_i|
    abs_residual: F64  # |q_i - q'_i|
    norm_rounded: float
    norm_residual: float

    @classmethod
    def of(cls, q: F32) -> QueryCode:
        q64 = np.asarray(q, dtype=np.float64).reshape(-1)
        top = float(np.abs(q64).max()) if len(q64) else 0.0
        scale = top / 127 if top > 0 else 1.0
        code = np.clip(np.rint(q64 / scale), -127, 127)
        rounded = scale * code
        residual = q64 - rounded
        return cls(
            code=code.astype(np.int8).reshape(1, -1),
            scale=scale,
            abs_rounded=np.abs(rounded),
            abs_residual=np.abs(residual),
            norm_rounded=float(np.linalg.norm(rounded)),
            norm_residual=float(np.linalg.norm(residual)),
        )


class QuantizedMonths:
    """The 8-bit copies of a set of month partitions (see the module docstring)."""

    def __init__(self, codes: npt.NDArray[np.int8], months: dict[int, MonthGrid]) -> None:
        self.codes = codes  # one row per ordinal; rows outside quantized months are unused
        self.months = months  # partition number -> grid

    def bound(self, query: QueryCode, partition: int) -> float:
        """The largest gap between estimate and exact score over the month's vectors: each of
        ``(q - q') . x`` and ``q' . (x - x')`` capped by Cauchy-Schwarz or per dimension."""
        g = self.months[partition]
        first = min(query.norm_residual * g.max_norm, float(query.abs_residual @ g.largest))
        second = min(query.norm_rounded * g.max_residual, float(query.abs_rounded @ g.error))
        return first + second + _ROUNDING

    def _dots(self, query: QueryCode, lo: int, hi: int) -> npt.NDArray[np.floating[Any]]:
        """Exact integer dot products ``c . code`` per row, as floats: float32 holds every
        integer below 2^24 exactly, and |c . code| <= d * 127^2 stays below it for d < 1040."""
        import simsimd

        exact32 = self.codes.shape[1] * 127 * 127 < 2**24
        return np.asarray(
            simsimd.cdist(
                query.code,
                self.codes[lo:hi],
                metric="dot",
                threads=1,
                out_dtype="float32" if exact32 else "float64",
            )
        ).reshape(-1)

    def _dots_of(
        self, query: QueryCode, parts: list[tuple[int, int]]
    ) -> list[npt.NDArray[np.floating[Any]]]:
        """``_dots`` per part, with one scan per run of adjacent parts: each scan call releases
        and retakes the GIL, and a thread waiting to retake it can stall for the interpreter's
        switch interval while another thread runs Python code."""
        out: list[npt.NDArray[np.floating[Any]]] = []
        i = 0
        while i < len(parts):
            j = i + 1
            while j < len(parts) and self.months[parts[j][0]].lo == parts[j - 1][1]:
                j += 1
            start = self.months[parts[i][0]].lo
            dots = self._dots(query, start, parts[j - 1][1])
            for p, end in parts[i:j]:
                out.append(dots[self.months[p].lo - start : end - start])
            i = j
        return out

    def candidates(
        self, query: QueryCode, parts: list[tuple[int, int]], k: int, slack: float
    ) -> tuple[npt.NDArray[np.int64], F64]:
        """Ordinals and estimates of the rows of ``parts`` (``(partition, end)``: the month's
        rows before ordinal ``end``) estimated at least ``t - 2 * slack``, where ``t`` is the
        k-th best estimate among these rows; all rows when there are at most k. A caller
        narrows the union over groups of months to the k-th best estimate of all of them
        (see ``DenseIndex``)."""
        dots = self._dots_of(query, parts)
        factors = [query.scale * self.months[p].step for p, _ in parts]
        partitions = [p for p, _ in parts]
        floor = -np.inf
        if sum(len(d) for d in dots) > k:
            # t (this group's k-th best estimate) in two passes: a sample's k-th best is no
            # better than t, so the rows at or above it hold the top k; t is their k-th best
            every = max(1, sum(len(d) for d in dots) // (128 * k))
            sample = np.concatenate(
                [d[::every].astype(np.float64) * f for d, f in zip(dots, factors, strict=True)]
            )
            if len(sample) >= k:
                rough = float(np.partition(sample, -k)[-k])
                above = _at_least(dots, factors, rough)[1]
                floor = float(np.partition(np.concatenate(above), -k)[-k]) - 2 * slack
        rows, est = _at_least(dots, factors, floor)
        ords = [r + self.months[p].lo for r, p in zip(rows, partitions, strict=True)]
        return np.concatenate(ords), np.concatenate(est)

    @classmethod
    def load_or_build(
        cls,
        vectors: F32,
        bounds: list[tuple[int, int]],
        partitions: list[int],
        store: Path | None,
    ) -> QuantizedMonths:
        """The copies of ``partitions``, from ``store`` when built there for exactly these."""
        plan = {"partitions": partitions, "rows": len(vectors), "dim": int(vectors.shape[1])}
        if store is not None:
            loaded = cls._load(store, plan)
            if loaded is not None:
                return loaded
        codes: npt.NDArray[np.int8] | None = None
        if store is not None:
            try:
                # no stale pair of grids and codes can be read while the new one is written
                (store / "grids.npz").unlink(missing_ok=True)
                codes = np.lib.format.open_memmap(
                    store / "codes.tmp.npy", mode="w+", dtype=np.int8, shape=vectors.shape
                )
            except OSError:
                store = None  # keep the copy in memory only
        if codes is None:
            codes = np.zeros(vectors.shape, dtype=np.int8)
        months = {p: _quantize_month(vectors, codes, *bounds[p]) for p in partitions}
        if store is not None:
            with suppress(OSError):  # keeping it is an optimisation; this process has its copy
                codes.flush()  # type: ignore[attr-defined]
                # the mapping follows the file across the rename: no need to reopen it
                os.replace(store / "codes.tmp.npy", store / "codes.npy")
                _save_grids(store / "grids.npz", months, plan)  # last: marks the pair complete
        return cls(codes, months)

    @classmethod
    def _load(cls, store: Path, plan: dict[str, object]) -> QuantizedMonths | None:
        codes_path, grids_path = store / "codes.npy", store / "grids.npz"
        if not (codes_path.is_file() and grids_path.is_file()):
            return None
        try:
            saved = load_npz(grids_path)
            if json.loads(str(saved["plan"])) != plan:
                return None
            months = {  # a column per field: numbers come back as Python's, arrays as float64
                int(p): MonthGrid(*(_field(saved[f.name][i]) for f in fields(MonthGrid)))
                for i, p in enumerate(saved["partition"])
            }
            codes = load_npy(codes_path)
        except (OSError, ValueError, KeyError):
            return None
        if codes.dtype != np.int8 or codes.shape != (plan["rows"], plan["dim"]):
            return None
        return cls(codes, months)


def _at_least(
    dots: list[npt.NDArray[np.floating[Any]]], factors: list[float], floor: float
) -> tuple[list[npt.NDArray[np.int64]], list[F64]]:
    """Per month, the rows whose estimate ``dots * factor`` is at least ``floor``, and those
    estimates. Dots are integers: they are first compared with an integer at or just below
    ``floor / factor`` (exact in their float type), then tested exactly in float64."""
    rows_out, est_out = [], []
    for d, f in zip(dots, factors, strict=True):
        rows = (
            np.arange(len(d)) if floor == -np.inf else np.flatnonzero(d >= np.floor(floor / f) - 1)
        )
        values = d[rows].astype(np.float64) * f
        keep = values >= floor
        rows_out.append(rows[keep])
        est_out.append(values[keep])
    return rows_out, est_out


def _quantize_month(vectors: F32, codes: npt.NDArray[np.int8], lo: int, hi: int) -> MonthGrid:
    """Write the month's codes into ``codes[lo:hi]`` and measure its copy's error."""
    top = 0.0
    for start in range(lo, hi, _CHUNK):
        top = max(top, float(np.abs(np.asarray(vectors[start : min(hi, start + _CHUNK)])).max()))
    step = top / 127 if top > 0 else 1.0
    d = vectors.shape[1]
    error, largest = np.zeros(d), np.zeros(d)
    max_norm = max_residual = 0.0
    for start in range(lo, hi, _CHUNK):
        x = np.asarray(vectors[start : min(hi, start + _CHUNK)], dtype=np.float64)
        code = np.clip(np.rint(x / step), -127, 127)
        codes[start : start + len(x)] = code.astype(np.int8)
        residual = x - step * code
        error = np.maximum(error, np.abs(residual).max(axis=0))
        largest = np.maximum(largest, np.abs(x).max(axis=0))
        max_norm = max(max_norm, float(np.linalg.norm(x, axis=1).max()))
        max_residual = max(max_residual, float(np.linalg.norm(residual, axis=1).max()))
    drop_pages(vectors)  # one month of the mapped vectors resident at a time, not all
    return MonthGrid(lo, hi, step, error, largest, max_norm, max_residual)


def _field(value: npt.NDArray[Any]) -> Any:
    return value.item() if value.ndim == 0 else np.asarray(value, dtype=np.float64)


def _save_grids(path: Path, months: dict[int, MonthGrid], plan: dict[str, object]) -> None:
    order = sorted(months)
    columns: dict[str, Any] = {
        f.name: np.asarray([getattr(months[p], f.name) for p in order]) for f in fields(MonthGrid)
    }
    columns |= {"plan": np.asarray(json.dumps(plan)), "partition": np.asarray(order, np.int64)}
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **columns)
