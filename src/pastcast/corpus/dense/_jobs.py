"""Embedding a whole corpus as a resumable job (docs/corpus.md, "Embeddings from anywhere"):
each finished batch goes to the checkpoint log (``_batchlog``), so the next run of the same job
(its ``job.json``) sends only the others. Vectors are validated and unit-normalised as they
arrive: dense search ranks by inner product, which is cosine only for unit vectors, and the
8-bit copies' error bounds assume them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from queue import SimpleQueue

import numpy as np

from pastcast import safejson
from pastcast.atomic import atomic_path, write_atomic
from pastcast.corpus.dense._batchlog import BatchLog
from pastcast.corpus.dense._embedders import F32, Embedder
from pastcast.errors import FieldError
from pastcast.progress import ProgressReporter, TaskID

Texts = Callable[[int, int], list[str]]


_UNIT_TOLERANCE = 1e-6  # float32 rounding of a divided row is about 1e-7 in its squared norm


def unit_rows(vectors: F32, where: str) -> F32:
    """``vectors`` (2-d, finite) scaled to unit length; a zero row stays zero (it scores 0
    against every query, as an empty text does). Rows already of unit length (an embedder
    that normalises, checked here once more) are returned as they are, not divided again."""
    if vectors.ndim != 2:
        raise FieldError("", f"{where}: expected one vector per text, got shape {vectors.shape}")
    # squared norms in float64 (no float64 copy): finite exactly when every value is, since a
    # float32 squared cannot overflow a float64
    squares = np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64)
    if not np.isfinite(squares).all():
        row = int(np.flatnonzero(~np.isfinite(squares))[0])
        raise FieldError("", f"{where}: row {row} is not finite (NaN or infinite)")
    unit = bool((np.abs(squares - 1.0) <= _UNIT_TOLERANCE).all())
    if unit and vectors.dtype == np.float32 and vectors.flags.c_contiguous:
        return vectors
    norms = np.sqrt(squares)[:, None]
    return np.ascontiguousarray(vectors / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _encoded(embedder: Embedder, texts: list[str], lo: int) -> F32:
    out = np.asarray(embedder.encode(texts), dtype=np.float32)
    where = f"{embedder.name}: batch at ordinal {lo}"
    if out.ndim != 2 or len(out) != len(texts):
        raise FieldError("", f"{where}: {len(texts)} texts gave vectors of shape {out.shape}")
    return unit_rows(out, where)


def _checkpoint(folder: Path | None, job: dict[str, object]) -> BatchLog | None:
    """The log of this job's finished batches in ``folder`` (emptied when it held another
    job)."""
    if folder is None:
        return None
    stamp = folder / "job.json"
    try:
        same = stamp.is_file() and safejson.loads(stamp.read_bytes()) == job
    except ValueError:
        same = False  # a damaged stamp: start over
    if not same:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        write_atomic(stamp, json.dumps(job, sort_keys=True))
    return BatchLog(folder)


class _Result:
    """The job's result array, opened at the dimension of the first batch placed in it: a
    memory-mapped ``.npy`` written beside ``out`` (renamed into place when ``stack`` closes
    without an exception, removed otherwise) or, without ``out``, an array in memory."""

    def __init__(self, stack: ExitStack, out: Path | None, count: int) -> None:
        self._stack, self._out, self._count = stack, out, count
        self.vectors: F32 | None = None

    def put(self, lo: int, got: F32, where: str) -> None:
        if self.vectors is None:
            shape = (self._count, int(got.shape[1]))
            if self._out is None:
                self.vectors = np.empty(shape, dtype=np.float32)
            else:
                tmp = self._stack.enter_context(atomic_path(self._out, suffix=".npy"))
                self.vectors = np.lib.format.open_memmap(
                    tmp, mode="w+", dtype=np.float32, shape=shape
                )
        elif got.shape[1] != self.vectors.shape[1]:
            raise FieldError(
                "", f"{where} has dimension {got.shape[1]}, the first had {self.vectors.shape[1]}"
            )
        self.vectors[lo : lo + len(got)] = got

    def finish(self) -> F32:
        assert self.vectors is not None, "every batch is placed before the job finishes"
        if isinstance(self.vectors, np.memmap):
            self.vectors.flush()
        return self.vectors


def embed_corpus(
    embedder: Embedder,
    count: int,
    texts: Texts,
    out: Path | None,
    *,
    batch: int = 256,
    checkpoint: Path | None = None,
    job: dict[str, object] | None = None,
    progress: bool = False,
) -> F32:
    """The unit vectors of texts ``0 .. count - 1`` (``texts(lo, hi)`` gives a range), written
    into the ``.npy`` file ``out`` (atomically; memory-mapped back) or held in memory.
    ``embedder.threads`` (else ``concurrency``, else 1) batches are in flight at once; its
    ``batch_size`` overrides ``batch``. ``checkpoint``: the folder of the job's finished
    batches, removed once ``out`` is complete."""
    batch = int(getattr(embedder, "batch_size", batch))
    workers = max(1, int(getattr(embedder, "threads", getattr(embedder, "concurrency", 1))))
    job = {**(job or {}), "model": embedder.name, "batch": batch, "count": count}
    starts = list(range(0, count, batch))
    if not starts:
        return np.zeros((0, 1), dtype=np.float32)

    def rows_of(lo: int) -> int:
        return min(count, lo + batch) - lo

    log = _checkpoint(checkpoint, job)
    with (
        ExitStack() as stack,
        ProgressReporter("docs", enabled=progress) as bar,
    ):
        result = _Result(stack, out, count)
        task = bar.add_task(f"embedding documents ({embedder.name})", total=count)
        pending: list[int] = []
        failure: BaseException | None = None
        try:
            for lo in starts:
                kept = log.stored.get(lo) if log is not None else None
                if log is None or kept is None or kept[1] != rows_of(lo):
                    pending.append(lo)
                else:
                    result.put(lo, log.read(lo), f"{log.path}: batch at ordinal {lo}")
            bar.update(task, completed=count - sum(rows_of(lo) for lo in pending))
            _run_batches(embedder, pending, rows_of, texts, workers, result, log, bar, task)
        except BaseException as exc:
            failure = exc
        if log is not None:
            try:
                log.close()  # every received batch is on disk before the job ends or fails
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
        vectors = result.finish()
    if checkpoint is not None:
        shutil.rmtree(checkpoint, ignore_errors=True)  # the cache file holds it all now
    return vectors


def _run_batches(
    embedder: Embedder,
    pending: list[int],
    rows_of: Callable[[int], int],
    texts: Texts,
    workers: int,
    result: _Result,
    log: BatchLog | None,
    bar: ProgressReporter,
    task: TaskID,
) -> None:
    """Embed the ``pending`` batches, ``workers`` at a time, placing each in ``result`` and
    handing it to ``log`` as it arrives. On a failure no new batch is sent; those in flight
    are awaited and the finished ones kept. (The log's own thread stores them: a server that
    answers in 50 ms would otherwise wait on each batch's fsync, about 17 ms here.)"""
    if not pending:
        return
    failure: BaseException | None = None
    with ThreadPoolExecutor(workers, thread_name_prefix="embed") as pool:
        flight: dict[Future[F32], int] = {}
        # finished batches in the order they finish (``wait`` would install a waiter on every
        # batch in flight each time one finishes)
        finished: SimpleQueue[Future[F32]] = SimpleQueue()
        upcoming = iter(pending)
        while True:
            while failure is None and len(flight) < 2 * workers:  # texts read ahead, bounded
                lo = next(upcoming, None)
                if lo is None:
                    break
                try:
                    chunk = texts(lo, lo + rows_of(lo))
                except BaseException as exc:
                    failure = exc
                    break
                fut = pool.submit(_encoded, embedder, chunk, lo)
                flight[fut] = lo
                fut.add_done_callback(finished.put)
            if not flight:
                break
            fut = finished.get()
            lo = flight.pop(fut)
            try:
                got = fut.result()
                result.put(lo, got, f"{embedder.name}: batch at ordinal {lo}")
                if log is not None:
                    log.append(lo, got)
            except BaseException as exc:  # kept until the batches in flight are stored
                failure = failure or exc
                continue
            bar.update(task, advance=len(got))
    if failure is not None:
        raise failure
