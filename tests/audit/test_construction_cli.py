"""`pastcast audit construction`: the table, JSON, exit codes; real data imported with the
defaults passes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.dataset import read_metadata

runner = CliRunner()


def test_world_table_and_json() -> None:
    result = runner.invoke(app, ["audit", "construction", "world:0", "world:1", "--draws", "200"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    head = "2 dataset(s): 70 binary events with steps (left out: not binary 30)"
    assert lines[0].startswith(head)
    rows = {line.split()[0]: line for line in lines[2:] if line.startswith("  ")}
    assert {"dataset", "causal-dojo", "causal-lookback", "dojo", "hindcast", "lookback"} <= set(
        rows
    )
    assert lines[-1] == "no findings"
    result = runner.invoke(
        app,
        ["audit", "construction", "world:0", "--schedule", "hindcast", "--draws", "200", "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [r["schedule"] for r in payload["results"]] == ["dataset", "hindcast"]
    assert payload["findings"] == [] and payload["datasets"] == ["world-v2:seed=0"]
    assert payload["features"][0] == "step_index"


@pytest.mark.shared_data
def test_real_data_imported_with_the_defaults_passes(shared_data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "fb"
    args = ["data", "import", "forecastbench", str(shared_data_dir / "forecastbench")]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "closes before collection" in result.output
    meta = read_metadata(out)
    assert meta["schedule"] == "causal-dojo" and meta["schedule_config"]["start_at_first_belief"]
    result = runner.invoke(app, ["audit", "construction", str(out), "--draws", "500"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines()[2:]}
    assert rows["dataset"][-1] == "ok" and rows["causal-dojo"][-1] == "ok"
    # keeping the markets that close after collection: the audit finds them, exit 1
    late = tmp_path / "late"
    result = runner.invoke(app, [*args, "--out", str(late), "--keep-late-closes"])
    assert result.exit_code == 0 and "closes before collection" not in result.output
    result = runner.invoke(app, ["audit", "construction", str(late), "--dataset-only"])
    assert result.exit_code == 1
    assert "closes after the data was collected" in result.output
