"""The index phase of an embedded build on the workers of a Dask cluster.

Each month is one task: its worker reads the month's content-addressed spool file and writes
its partition atomically into the build's work directory, both on storage every worker shares;
a partition a build cut short completed from the same spool is reused, as in one process. The
builder still reads the source and merges the partitions, so the index (its files and content
hash) is the one a one-machine build writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pastcast.corpus.embedded import MonthRunner
from pastcast.corpus.sharded._sharded import _client, _distributed

__all__ = ["dask_months"]


def dask_months(address: str) -> MonthRunner:
    """A runner indexing the months on the workers of the Dask scheduler at ``address``."""
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
