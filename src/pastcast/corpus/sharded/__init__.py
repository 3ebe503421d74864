"""A month-sharded corpus served by Dask workers, equal to the single index, and a build's
months indexed there (``dask_months``). Needs the ``scale`` extra."""

from pastcast.corpus.sharded._sharded import ShardedCorpus, ShardServer, dask_months

__all__ = ["ShardServer", "ShardedCorpus", "dask_months"]
