"""``ShardedCorpus``: an embedded index cut into month shards, each held by a Dask worker as an
actor (``ShardServer``). Searches add the admitted shards' as-of statistics as the index adds
its months, so ids, scores, order and ties equal the single index's bit for bit; reads, counts
and the sharing of the actors between openers are in docs/corpus.md ("The month-sharded
corpus on Dask workers")."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import numpy.typing as npt

from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._open import SHARDED_SCHEME, one_line
from pastcast.corpus._protocol import DocumentNotVisible, SearchHit, not_visible_message
from pastcast.corpus._text import TOKENIZER
from pastcast.corpus.embedded import (
    K1,
    AsOfStatistics,
    B,
    EmbeddedIndex,
    IndexMonth,
    MonthRunner,
    index_manifest,
    index_months,
    open_months,
    shard_statistics,
)
from pastcast.cutoff import as_utc
from pastcast.errors import FieldError
from pastcast.records import CorpusIdentity, Document

SCHEME = SHARDED_SCHEME
Digests = npt.NDArray[np.uint64]


def id_digest(doc_id: str) -> int:
    """A document id's 64-bit digest (routing reads; a collision only asks one more shard)."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode(), digest_size=8).digest(), "little")


def _count(months: Sequence[IndexMonth]) -> int:
    return sum(m.doc_count for m in months)


def plan_shards(months: Sequence[IndexMonth], count: int) -> list[list[IndexMonth]]:
    """``months`` (in time order) cut into ``count`` contiguous ranges of about equal document
    counts (fewer when there are fewer months), none empty."""
    count = max(1, min(count, len(months)))
    total = _count(months)
    out: list[list[IndexMonth]] = [[]]
    seen = 0
    for i, month in enumerate(months):
        left = len(months) - i  # months not placed yet, this one included
        need = count - len(out)  # shards still to open after the current one
        if out[-1] and need and (seen >= total * len(out) / count or left <= need):
            out.append([])
        out[-1].append(month)
        seen += month.doc_count
    return out


class ShardServer:
    """One shard on its worker (a Dask actor): the months it holds, opened there."""

    def __init__(self, index_dir: str, months: list[str]) -> None:
        self.index: EmbeddedIndex = open_months(index_dir, months)
        self.months = months
        self.calls: Counter[str] = Counter()

    def statistics(self, terms: list[str], as_of: datetime) -> AsOfStatistics:
        self.calls["statistics"] += 1
        return shard_statistics(self.index, terms, as_of)

    def search(
        self,
        query: str,
        as_of: datetime,
        k: int,
        stats: AsOfStatistics,
        filters: SearchFilter | None,
    ) -> list[SearchHit]:
        self.calls["search"] += 1
        return self.index.search(query, as_of=as_of, k=k, filters=filters, stats=stats)

    def read(self, doc_id: str, as_of: datetime) -> Document:
        self.calls["read"] += 1
        return self.index.read(doc_id, as_of=as_of)  # re-checks the cutoff

    def count_before(self, as_of: datetime) -> int:
        self.calls["count"] += 1
        return self.index.count_before(as_of)

    def digests(self) -> Digests:
        """The sorted digests of the shard's ids."""
        self.calls["digests"] += 1
        ids = (i for p in self.index._parts for i in p.ids)
        return np.sort(np.fromiter(map(id_digest, ids), dtype=np.uint64, count=len(self.index)))

    def call_counts(self) -> dict[str, int]:
        return dict(self.calls)


@dataclass(frozen=True)
class Shard:
    months: tuple[IndexMonth, ...]
    first: datetime
    last: datetime
    doc_count: int
    server: Any  # the actor handle


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "a sharded corpus needs dask.distributed: pip install 'pastcast[scale]'", name=exc.name
        ) from exc
    return distributed


def _client(address: str) -> tuple[Any, bool]:
    """A client of the scheduler at ``address``: the worker's own when this runs on a worker
    of that scheduler, else a new one (and whether it is ours to close)."""
    distributed = _distributed()
    try:
        worker = distributed.get_worker()
    except ValueError:
        worker = None
    if worker is not None and worker.scheduler.address == address:
        return distributed.get_client(), False
    # refused before a client exists: one that fails to start stalls its collector a minute
    scheme, location = distributed.comm.parse_address(address)
    if scheme in ("tcp", "tls"):
        distributed.comm.parse_host_port(location)
    return distributed.Client(address, set_as_default=False), True


class ShardedCorpus:
    """The month shards of an index directory on the workers of a Dask cluster."""

    def __init__(
        self,
        client: Any,
        index_dir: Path | str,
        *,
        shards: int | None = None,
        spec: str | None = None,
        owns_client: bool = False,
    ) -> None:
        self.index_dir = str(Path(index_dir).resolve())
        self._client = client
        self._owns_client = owns_client
        self._months = index_months(self.index_dir)
        if not self._months:
            raise ValueError(f"{self.index_dir}: the index holds no documents to shard")
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ValueError(f"{client.scheduler.address}: the cluster has no workers")
        plan = plan_shards(self._months, shards or len(workers))
        self.address = str(client.scheduler.address)
        self.spec = spec or f"{SCHEME}{self.address.removeprefix('tcp://')}?index={self.index_dir}"
        digest = str(index_manifest(Path(self.index_dir))["content_sha256"])  # months' digests
        self.content_sha256 = digest
        self.name = f"pastcast-shards-{digest[:16]}-{len(plan)}"
        servers = self._servers(plan, workers)
        self.shards = [
            Shard(tuple(ms), ms[0].first_timestamp, ms[-1].last_timestamp, _count(ms), server)
            for ms, server in zip(plan, servers, strict=True)
        ]
        self.calls: Counter[int] = Counter()  # calls made to each shard, by position
        self._lock = threading.Lock()
        self._digests: list[Digests] | None = None
        self._identity: CorpusIdentity | None = None

    @classmethod
    def connect(cls, spec: str, *, shards: int | None = None) -> ShardedCorpus:
        """Open ``dask://HOST:PORT?index=PATH[&shards=N]``: the shards of the index at PATH on
        the workers of the scheduler at HOST:PORT (created there by the first opener)."""
        address, index, in_spec = parse_spec(spec)
        if shards is not None and in_spec is not None and shards != in_spec:
            raise ValueError(f"{spec}: shards={in_spec} in the spec, {shards} given as an option")
        client, owned = _client(address)
        try:
            return cls(client, index, shards=shards or in_spec, spec=spec, owns_client=owned)
        except BaseException:
            if owned:
                client.close()
            raise

    def _servers(self, plan: list[list[IndexMonth]], workers: list[str]) -> list[Any]:
        """The shards' actors: those published under this corpus's name, or new ones, one shard
        per worker in turn (a lock on the scheduler makes one opener create them)."""
        distributed = _distributed()
        with self._client.as_current(), distributed.Lock(self.name):
            if self.name in self._client.list_datasets():
                futures = self._client.get_dataset(self.name)
            else:
                futures = [
                    self._client.submit(
                        ShardServer,
                        self.index_dir,
                        [m.name for m in months],
                        actor=True,
                        workers=[workers[i % len(workers)]],
                        allow_other_workers=False,
                        pure=False,
                    )
                    for i, months in enumerate(plan)
                ]
                self._client.publish_dataset(futures, name=self.name)
            return [f.result() for f in futures]

    def release(self) -> None:
        """Drop the published shards (their workers free them once no one holds them)."""
        if self.name in self._client.list_datasets():
            self._client.unpublish_dataset(self.name)

    def close(self) -> None:
        """Disconnect (the shards stay on the cluster for other openers)."""
        if self._owns_client:
            self._client.close()
            self._owns_client = False

    def __enter__(self) -> ShardedCorpus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return sum(s.doc_count for s in self.shards)

    def identity(self) -> CorpusIdentity:
        if self._identity is None:
            self._identity = CorpusIdentity(
                spec=self.spec,
                backend="sharded",
                retrieval="bm25",
                content_sha256=self.content_sha256,
                doc_count=len(self),
                first_timestamp=self.shards[0].first,
                last_timestamp=self.shards[-1].last,
                options={
                    "tokenizer": TOKENIZER,
                    "k1": K1,
                    "b": B,
                    "served_by": "dask",
                    "shards": [[s.months[0].name, s.months[-1].name] for s in self.shards],
                },
            )
        return self._identity

    def _admitted(self, cutoff: datetime) -> list[int]:
        """The shards holding a document before the cutoff (shards are in time order)."""
        return [i for i, s in enumerate(self.shards) if s.first < cutoff]

    def _ask(self, i: int, method: str, *args: Any) -> Any:
        with self._lock:
            self.calls[i] += 1
        return getattr(self.shards[i].server, method)(*args)

    def count_before(self, as_of: datetime) -> int:
        cutoff = as_utc(as_of)
        total = 0
        for i in self._admitted(cutoff):
            shard = self.shards[i]
            if shard.last < cutoff:  # wholly visible: its count is known here
                total += shard.doc_count
            else:
                total += int(self._ask(i, "count_before", cutoff).result())
        return total

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        cutoff = as_utc(as_of)
        terms = EmbeddedIndex.query_terms(query)
        admitted = self._admitted(cutoff)
        if k <= 0 or not terms or not admitted:
            return []
        if filters is not None and filters.is_empty():
            filters = None
        asked = [self._ask(i, "statistics", terms, cutoff) for i in admitted]
        parts = [f.result() for f in asked]
        stats = parts[0]
        for part in parts[1:]:
            stats = stats + part  # in time order, as the index adds its months
        if stats.n == 0 or not stats.df:
            return []
        # only shards with a visible posting of a query term can score above zero
        scoring = [i for i, part in zip(admitted, parts, strict=True) if part.df]
        asked = [self._ask(i, "search", query, cutoff, k, stats, filters) for i in scoring]
        hits: list[SearchHit] = [h for f in asked for h in f.result()]
        for hit in hits:  # a shard that ranked past the cutoff fails loudly instead of leaking
            if not as_utc(hit.timestamp) < cutoff:
                raise RuntimeError(f"shard returned {hit.id!r} at or after the cutoff {cutoff}")
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        cutoff = as_utc(as_of)
        admitted = set(self._admitted(cutoff))
        for i in self._owners(doc_id):
            if i not in admitted:  # everything there is at or after the cutoff
                continue
            try:
                doc: Document = self._ask(i, "read", doc_id, cutoff).result()
            except DocumentNotVisible:
                continue
            if not as_utc(doc.timestamp) < cutoff:
                raise RuntimeError(f"shard returned {doc_id!r} at or after the cutoff {cutoff}")
            return doc
        raise DocumentNotVisible(not_visible_message(doc_id, cutoff))

    def _owners(self, doc_id: str) -> list[int]:
        """The shards that may hold ``doc_id`` (one, but for a digest collision)."""
        if self._digests is None:
            asked = [self._ask(i, "digests") for i in range(len(self.shards))]
            self._digests = [f.result() for f in asked]
        digest = np.uint64(id_digest(doc_id))
        out = []
        for i, digests in enumerate(self._digests):
            at = int(np.searchsorted(digests, digest))
            if at < len(digests) and digests[at] == digest:
                out.append(i)
        return out

    def shard_calls(self) -> list[dict[str, int]]:
        """Each shard's own count of the calls it served (from every opener)."""
        return [s.server.call_counts().result() for s in self.shards]


def parse_spec(spec: str) -> tuple[str, str, int | None]:
    """``dask://HOST:PORT?index=PATH[&shards=N]`` -> (scheduler address, PATH, N or None)."""
    if not spec.startswith(SCHEME):
        raise ValueError(f"{spec}: not a sharded corpus spec ({SCHEME}HOST:PORT?index=PATH)")
    parts = urlsplit(spec)
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"index", "shards"})
    if unknown:
        raise ValueError(f"{spec}: unknown parameter {unknown[0]!r} (index, shards)")
    if not parts.netloc:
        raise ValueError(f"{spec}: no scheduler address ({SCHEME}HOST:PORT?index=PATH)")
    index = query.get("index", [""])
    if len(index) != 1 or not index[0]:
        raise ValueError(f"{spec}: give the index directory once (?index=PATH)")
    shards = query.get("shards")
    count = None
    if shards is not None:
        if len(shards) != 1 or not shards[0].isdigit() or int(shards[0]) < 1:
            raise ValueError(f"{spec}: shards must be a positive whole number")
        count = int(shards[0])
    return f"tcp://{parts.netloc}", index[0], count


def open_sharded(spec: str, *, retrieval: str = "bm25", shards: int | None = None) -> ShardedCorpus:
    """An index directory's month shards on the workers of a Dask cluster
    (``dask://HOST:PORT?index=PATH[&shards=N]``; extra ``scale``): BM25 equal to the index's."""
    if retrieval != "bm25":
        raise FieldError("", f"retrieval {retrieval!r}: a sharded corpus serves bm25 only")
    try:
        return ShardedCorpus.connect(spec, shards=shards)
    except ImportError as exc:
        raise FieldError(
            "",
            f"a sharded corpus needs the 'scale' extra (pip install 'pastcast[scale]'); "
            f"missing: {exc.name}",
        ) from None
    except (OSError, ValueError) as exc:
        raise FieldError("", one_line(exc)) from None


def dask_months(address: str) -> MonthRunner:
    """A build's index phase on the workers of the Dask scheduler at ``address``: each month one
    task, its spool file read and its partition written on storage every worker shares (reused
    as in one process), so the index is the one a one-machine build writes."""
    _distributed()  # refused now, before the read phase, where the extra is missing

    def run(index: Callable[[Any], bool], tasks: Sequence[Any]) -> Iterator[tuple[Any, bool]]:
        distributed = _distributed()
        client, ours = _client(address)
        try:
            # impure: a month is indexed again whenever asked (the partition decides reuse)
            futures = {client.submit(index, t, pure=False): t for t in tasks}
            try:
                with client.as_current():  # as_completed finds its client there
                    for future in distributed.as_completed(futures):
                        yield futures[future], bool(future.result())
            except BaseException:
                client.cancel(list(futures))
                raise
        finally:
            if ours:
                client.close()

    return run
