"""A run with the Dask executor on the sharded corpus: its episodes on the workers search the
shards (none opens the index), and the forecasts equal a local run's on the single index."""

from __future__ import annotations

from pathlib import Path

from pastcast.agents import agent_spec
from pastcast.corpus import open_backend
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sharded import ShardedCorpus
from pastcast.runlog import read_run_log
from pastcast.runner import CorpusRef, RunConfig, run_benchmark
from pastcast.world import build_world


def _forecasts(path: Path) -> dict:  # type: ignore[type-arg]
    steps = read_run_log(path).steps
    return {s.key: (s.forecast.probs, s.forecast.usable, s.scores) for s in steps}


def test_dask_on_shards_writes_the_forecasts_of_a_local_run(
    tmp_path: Path, dask_address: str
) -> None:
    from pastcast.runner._dask import DaskExecutor

    world = build_world(0)
    EmbeddedIndex.build(world.documents, tmp_path / "ix")
    single = EmbeddedIndex.open(tmp_path / "ix")
    config = RunConfig(agents=(agent_spec("heuristic"),), max_events=4, workers=4)
    run_benchmark(world.dataset, single, config, tmp_path / "local.jsonl", progress=False)

    spec = f"dask://{dask_address.removeprefix('tcp://')}?index={tmp_path / 'ix'}&shards=3"
    sharded = open_backend(spec)
    assert isinstance(sharded, ShardedCorpus)
    before = sum(c.get("search", 0) for c in sharded.shard_calls())
    try:
        run_benchmark(
            world.dataset,
            sharded,
            config,
            tmp_path / "dask.jsonl",
            progress=False,
            executor=DaskExecutor(dask_address),
            corpus_ref=CorpusRef(spec=spec),
        )
        searched = sum(c.get("search", 0) for c in sharded.shard_calls()) - before
    finally:
        sharded.close()
    local, dask = _forecasts(tmp_path / "local.jsonl"), _forecasts(tmp_path / "dask.jsonl")
    assert local == dask and len(local) >= 4
    assert searched > 0 and not sharded.calls  # the workers searched, not this process
    header = read_run_log(tmp_path / "dask.jsonl").header.corpus
    assert header is not None and header.backend == "sharded" and header.spec == spec
    assert header.content_sha256 == single.identity().content_sha256
