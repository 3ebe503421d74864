"""The step file of a run log loads as one table in the tools users analyse runs with.

The log starts with baseline agents (no tool calls, no messages, no errors): a loader that
infers types from the first records sees only nulls and empty lists there, so the explicit schema
(``step_schema``) is what makes the later tool-agent records load.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.json as paj
import pytest
from agent_scripts import Scripted, use

from pastcast.agents import agent_spec, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.runlog import SCHEMA_VERSION, RunLog, header_path, read_run_log, step_schema
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World


def _json_types(
    value: Any, path: str, out: dict[str, set[str]], keys: dict[str, set[tuple[str, ...]]]
) -> None:
    """Collect the JSON type of every field path (list items under ``[]``), nulls aside, and
    the key set of every object path."""
    if value is None:
        return
    if isinstance(value, dict):
        out[path].add("object")
        keys[path].add(tuple(value))
        for key, sub in value.items():
            _json_types(sub, f"{path}.{key}", out, keys)
    elif isinstance(value, list):
        out[path].add("array")
        for sub in value:
            _json_types(sub, f"{path}[]", out, keys)
    else:
        kind = "bool" if isinstance(value, bool) else type(value).__name__
        out[path].add("number" if kind in ("int", "float") else kind)


@pytest.fixture
def run_log(world: World, world_index: EmbeddedIndex, tmp_path: Path) -> RunLog:
    specs = [
        agent_spec("uniform"),
        agent_spec("base-rate"),
        agent_spec("heuristic"),
        agent_spec("heuristic", setting="memory_on", label="heuristic-memory"),
        agent_spec("market"),
        agent_spec("tool-agent", model=use("json", Scripted()), label="json-agent"),
        agent_spec(
            "tool-agent", model=use("native", Scripted()), action_mode="native", label="native"
        ),
    ]
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=tuple(specs), max_events=14)
    run_benchmark(world.dataset, world_index, cfg, out, prompts=prompts_for(specs), progress=False)
    return read_run_log(out)


def test_step_file_holds_only_steps_with_one_type_per_field(run_log: RunLog) -> None:
    rows = [json.loads(line) for line in run_log.path.read_text().splitlines()]
    assert len(rows) == len(run_log.steps) > 0
    header = json.loads(header_path(run_log.path).read_text())
    assert header["schema_version"] == SCHEMA_VERSION and header["run_id"] == run_log.header.run_id
    types: dict[str, set[str]] = defaultdict(set)
    keys: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for row in rows:
        _json_types(row, "", types, keys)
    mixed = {path: kinds for path, kinds in types.items() if len(kinds) > 1}
    assert not mixed
    # Every object at a path has the same fields (no map keyed by outcome labels or tool args).
    varying = {path: k for path, k in keys.items() if len(k) > 1}
    assert not varying
    calls = [c for r in run_log.steps for c in r.episode.tool_calls]
    assert {"search", "read"} <= {c.name for c in calls}
    assert any(m.tool_calls for r in run_log.steps for m in r.episode.messages)
    assert types[".episode.tool_calls[].result"] == {"str"}
    assert types[".episode.tool_calls[].arguments"] == {"str"}
    assert types[".episode.messages[].tool_calls[].arguments"] == {"str"}


def test_step_file_loads_in_polars_pandas_duckdb_and_datasets(
    run_log: RunLog, tmp_path: Path
) -> None:
    import duckdb
    import pandas as pd
    import polars as pl
    from datasets import Features, load_dataset

    path = str(run_log.path)
    n = len(run_log.steps)
    n_calls = sum(len(r.episode.tool_calls) for r in run_log.steps)
    n_model_calls = sum(len(r.episode.model_calls) for r in run_log.steps)
    assert n_calls and n_model_calls

    first = run_log.steps[:100]  # what polars samples by default
    assert all(not r.episode.tool_calls and not r.episode.messages for r in first)

    arrow = paj.read_json(
        path,
        parse_options=paj.ParseOptions(
            explicit_schema=step_schema(), unexpected_field_behavior="error"
        ),
    )
    assert arrow.num_rows == n and arrow.schema == step_schema()

    frame = pl.read_ndjson(path, schema=pl.from_arrow(step_schema().empty_table()).schema)
    assert frame.height == n
    calls = frame.select(pl.col("episode").struct.field("tool_calls")).explode("tool_calls")
    results = calls.select(pl.col("tool_calls").struct.field("result")).drop_nulls()
    assert results.height == n_calls and results.dtypes == [pl.String]

    # Probabilities survive for every label, including labels first seen after row 100.
    probs = frame.select(pl.col("forecast").struct.field("probs")).explode("probs").drop_nulls()
    assert probs.height == sum(len(r.forecast.probs) for r in run_log.steps)
    labels = {lb for r in run_log.steps for lb in r.forecast.probs}
    assert set(probs.unnest("probs")["label"]) == labels

    table = pd.read_json(path, lines=True)
    assert len(table) == n and set(table["agent"]) == {r.agent for r in run_log.steps}

    got = duckdb.connect().execute(
        "SELECT count(*), sum(len(episode.tool_calls)), sum(len(episode.model_calls)) "
        "FROM read_json_auto(?)",
        [path],
    )
    assert got.fetchall() == [(n, n_calls, n_model_calls)]

    cache = str(tmp_path / "hf")
    data = load_dataset("json", data_files=path, split="train", cache_dir=cache)
    assert data.num_rows == n
    assert sum(len(e["tool_calls"]) for e in data["episode"]) == n_calls
    features = Features.from_arrow_schema(step_schema())
    typed = load_dataset("json", data_files=path, split="train", features=features, cache_dir=cache)
    assert typed.num_rows == n and typed.features == features
