"""A month-sharded corpus served by Dask workers: each worker holds a range of an embedded
index's month partitions; searches fan out to the shards the cutoff admits, with as-of
statistics merged exactly, and equal the single index's; a build's months can be indexed there
too (``dask_months``). Needs the ``scale`` extra."""

from pastcast.corpus.sharded._build import dask_months
from pastcast.corpus.sharded._sharded import ShardedCorpus, ShardServer

__all__ = ["ShardServer", "ShardedCorpus", "dask_months"]
