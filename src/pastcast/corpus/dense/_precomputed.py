"""Document vectors computed elsewhere, loaded by document id from a ``.npy`` matrix with its ids
file or from Parquet; the checks are in docs/corpus.md ("Embeddings from anywhere")."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pastcast.corpus.dense._embedders import F32
from pastcast.corpus.dense._jobs import unit_rows
from pastcast.errors import FieldError
from pastcast.npyfiles import load_npy


def ids_file_of(path: Path) -> Path:
    """Where a ``.npy`` matrix's ids are by default: ``NAME.ids.txt`` beside ``NAME.npy``."""
    return path.with_name(f"{path.stem}.ids.txt")


def load_vectors(
    path: str | Path,
    ids: Sequence[str],
    *,
    ids_file: str | Path | None = None,
    dim: int | None = None,
) -> F32:
    """The unit vectors of documents ``ids`` (in that order) from ``path``, of dimension
    ``dim`` (the query embedder's); ``FieldError`` naming the file and the id otherwise."""
    source = Path(path)
    if not source.exists():
        raise FieldError("", f"{source}: no such file or folder")
    where = {doc_id: i for i, doc_id in enumerate(ids)}
    out: F32 | None = None
    seen = np.zeros(len(ids), dtype=np.bool_)
    for file, chunk_ids, vectors in _chunks(source, ids_file):
        if vectors.ndim != 2:
            raise FieldError("", f"{file}: expected one vector per id, got shape {vectors.shape}")
        want = dim if out is None else out.shape[1]
        if want is not None and vectors.shape[1] != want:
            first = chunk_ids[0] if chunk_ids else "?"
            raise FieldError(
                "",
                f"{file}: id {first!r} has a vector of dimension {vectors.shape[1]}, "
                f"expected {want}",
            )
        if out is None:
            out = np.zeros((len(ids), vectors.shape[1]), dtype=np.float32)
        bad = ~np.isfinite(vectors).all(axis=1)
        if bad.any():
            doc_id = chunk_ids[int(np.flatnonzero(bad)[0])]
            raise FieldError(
                "", f"{file}: id {doc_id!r} has a vector that is not finite (NaN or inf)"
            )
        rows = np.empty(len(chunk_ids), dtype=np.int64)
        for j, doc_id in enumerate(chunk_ids):
            row = where.get(doc_id)
            if row is None:
                raise FieldError("", f"{file}: id {doc_id!r} is not a document of the corpus")
            if seen[row]:
                raise FieldError("", f"{file}: id {doc_id!r} has more than one vector")
            seen[row] = True
            rows[j] = row
        out[rows] = unit_rows(vectors.astype(np.float32, copy=False), str(file))
    if out is None:
        raise FieldError("", f"{source}: holds no vectors")
    if not seen.all():
        missing = np.flatnonzero(~seen)
        raise FieldError(
            "",
            f"{source}: no vector for id {ids[int(missing[0])]!r} "
            f"({len(missing)} of {len(ids)} documents have none)",
        )
    return out


def _chunks(
    source: Path, ids_file: str | Path | None
) -> Iterator[tuple[Path, list[str], npt.NDArray[np.floating]]]:
    if source.suffix == ".npy":
        yield _npy(source, Path(ids_file) if ids_file is not None else ids_file_of(source))
        return
    files = sorted(source.glob("*.parquet")) if source.is_dir() else [source]
    if not files:
        raise FieldError("", f"{source}: no .parquet files")
    for file in files:
        yield from _parquet(file)


def _npy(path: Path, ids_path: Path) -> tuple[Path, list[str], npt.NDArray[np.floating]]:
    try:
        matrix = load_npy(path)
    except EOFError:  # numpy's word for a file with nothing in it
        raise FieldError("", f"{path}: not a readable .npy matrix (an empty file)") from None
    except (OSError, ValueError) as exc:
        raise FieldError("", f"{path}: not a readable .npy matrix ({exc})") from None
    if not np.issubdtype(matrix.dtype, np.floating):
        raise FieldError("", f"{path}: holds {matrix.dtype}, not floating-point vectors")
    try:
        lines = ids_path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise FieldError(
            "", f"{path}: its ids file {ids_path} cannot be read ({exc.strerror or exc})"
        ) from None
    if len(lines) != len(matrix):
        raise FieldError("", f"{ids_path}: {len(lines)} ids for the {len(matrix)} rows of {path}")
    return path, lines, np.asarray(matrix)


def _parquet(path: Path) -> Iterator[tuple[Path, list[str], npt.NDArray[np.floating]]]:
    """The (id, embedding) rows of a Parquet file, a batch at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc  # a submodule ``import pyarrow`` does not load
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise FieldError("", f"{path}: not a readable Parquet file ({exc})") from None
    names = set(file.schema_arrow.names)
    for needed in ("id", "embedding"):
        if needed not in names:
            raise FieldError(
                "", f"{path}: no column {needed!r} (columns: {', '.join(sorted(names))})"
            )
    for batch in file.iter_batches(columns=["id", "embedding"], batch_size=65_536):
        ids = [str(v) for v in batch.column(0).to_pylist()]
        vectors = batch.column(1)
        if vectors.null_count:
            row = next(i for i, v in enumerate(vectors.is_null().to_pylist()) if v)
            raise FieldError("", f"{path}: id {ids[row]!r} has no vector")
        lengths = np.asarray(pc.list_value_length(vectors).to_numpy(zero_copy_only=False))
        if len(lengths) and (lengths != lengths[0]).any():
            row = int(np.flatnonzero(lengths != lengths[0])[0])
            raise FieldError(
                "",
                f"{path}: id {ids[row]!r} has a vector of dimension {lengths[row]}, "
                f"expected {lengths[0]}",
            )
        flat = np.asarray(vectors.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
        width = int(lengths[0]) if len(lengths) else 0
        yield path, ids, flat.reshape(len(ids), width)
