"""The chat and reward exports read a log's step columns and stream its records by offset, one
at a time, and write what the export of the full records writes, byte for byte, with the same
manifest: on a real run of tool agents and on a synthetic one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.app import export_runs
from pastcast.runlog import RunLog, StepColumns, read_run_log
from pastcast.train import ExportManifest, SplitPolicy, export_rewards, export_sft


def _manifest(m: ExportManifest) -> dict[str, Any]:
    return {k: v for k, v in m.model_dump().items() if k not in ("created_at", "file")}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("synthetic") / "run.jsonl", 200)


def _check(
    target: str, log: Path, out: Path, splits: tuple[str, ...], monkeypatch: pytest.MonkeyPatch,
    **options: Any,
) -> None:  # fmt: skip
    with records_streamed(monkeypatch) as seen:
        made = export_runs(target, [log], out / "columns.jsonl", splits=splits, **options)  # type: ignore[arg-type]
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    policy = SplitPolicy(splits=splits)
    write = export_sft if target == "sft" else export_rewards
    held = StepColumns.held(read_run_log(log))  # the log in memory, as a run the tests make
    full = write([held], out / "records.jsonl", policy=policy, **options)
    assert made.out.read_bytes() == (out / "records.jsonl").read_bytes()
    assert _manifest(made.manifest) == _manifest(full) and full.rows > 0


def _check_logs(
    kind: str,
    world_log: RunLog,
    split_log: RunLog,
    synthetic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
) -> None:
    """The export of each log (a world run, a split run, a synthetic run) checked by ``_check``."""
    _check(kind, world_log.path, tmp_path / "world", ("unsplit",), monkeypatch, **options)
    _check(kind, split_log.path, tmp_path / "split", ("train",), monkeypatch, **options)
    _check(kind, synthetic, tmp_path / "synthetic", ("unsplit",), monkeypatch, **options)


@pytest.mark.parametrize(
    "options",
    [{"shape": "messages", "keep": "best"}, {"shape": "openai", "keep": "all"},
     {"keep": "best", "score": "log_score", "min_score": -0.7}],
)  # fmt: skip
def test_the_sft_export_streams_and_equals_the_export_of_records(
    world_log: RunLog,
    split_log: RunLog,
    synthetic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
) -> None:
    _check_logs("sft", world_log, split_log, synthetic, tmp_path, monkeypatch, options)


@pytest.mark.parametrize("options", [{}, {"metric": "log_score", "fallback": "worst"}])
def test_the_reward_export_streams_and_equals_the_export_of_records(
    world_log: RunLog,
    split_log: RunLog,
    synthetic: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
) -> None:
    _check_logs("rewards", world_log, split_log, synthetic, tmp_path, monkeypatch, options)
