"""`pastcast export inspect`: run logs as Inspect eval logs that Inspect reads and lists, whose
scores are `pastcast score`'s, and that `pastcast import inspect-log` reads back unchanged."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

# Found, not imported: Inspect (and pastcast's integration, which imports it) is imported by the
# tests and fixtures that use it, so collecting this module stays cheap.
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("could not import 'inspect_ai'", allow_module_level=True)

from typer.testing import CliRunner

from pastcast.app import score_runs
from pastcast.cli._app import app
from pastcast.errors import FieldError
from pastcast.runlog import read_run_log

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from recorded_run import record_run, report_dataset

runner = CliRunner()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_run(tmp_path_factory.mktemp("recorded") / "run.jsonl")


@pytest.fixture(scope="module")
def exported(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pastcast.integrations.inspect import export_inspect_logs

    out = tmp_path_factory.mktemp("export") / "inspect"
    export_inspect_logs([recorded], out, dataset=report_dataset())
    return out


def _groups(path: Path) -> dict[tuple[str, str], dict[str, float]]:
    card = score_runs([path], bootstrap=0).card
    return {
        g.group: {m: g.summary.metrics[m].mean for m in ("brier", "log_loss", "accuracy")}
        for g in card.groups
    }


def test_the_export_opens_with_read_eval_log_and_scores_as_pastcast_score(
    recorded: Path, exported: Path
) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    steps = read_run_log(recorded).steps
    expected = _groups(recorded)
    files = sorted(exported.glob("*.eval"))
    assert len(files) == len(expected)
    seen = set()
    for f in files:
        log = read_eval_log(str(f))
        assert log.status == "success" and log.eval.task == "pastcast/forecast"
        samples = log.samples or []
        agent, setting = samples[0].metadata["agent"], samples[0].metadata["setting"]
        seen.add((agent, setting))
        mine = [s for s in steps if (s.agent, s.setting) == (agent, setting)]
        assert len(samples) == len(mine)
        assert {(s.id, s.epoch) for s in samples} == {
            (f"{s.event_id}#{s.step_index}", s.rollout + 1) for s in mine
        }
        results = {s.name: s.metrics["mean"].value for s in (log.results or []).scores}
        for metric, value in expected[(agent, setting)].items():
            per_sample = [s.scores["forecast_score"].value[metric] for s in samples]  # type: ignore[index]
            assert sum(per_sample) / len(per_sample) == pytest.approx(value, abs=1e-12)
            assert results[metric] == pytest.approx(value, abs=1e-12)
    assert seen == set(expected)
    # what `inspect view` lists
    assert len(list_eval_logs(str(exported))) == len(files)


def test_samples_show_the_agent_only_what_it_saw(recorded: Path, exported: Path) -> None:
    from inspect_ai.log import read_eval_log

    from pastcast.integrations.inspect._task import STORE_KEY

    for f in exported.glob("*.eval"):
        log = read_eval_log(str(f))
        for s in log.samples or []:
            assert set(s.metadata) == {
                "event_id",
                "step_index",
                "step_date",
                "cutoff",
                "setting",
                "agent",
                "split",
                "category",
            }
            assert set(s.store[STORE_KEY]) == {"agent", "forecast", "episode"}
            assert "Question:" in str(s.input)  # the question view the agent was given
            assert s.messages  # the conversation, or the tool calls of an agent without a model
            # the outcome only in the target and the score
            assert "resolved_at" not in json.dumps(s.store) + json.dumps(s.metadata)
            assert s.target == s.scores["forecast_score"].metadata["grading"]["truth"]  # type: ignore[index]
    tool_agent = [
        s
        for f in exported.glob("*.eval")
        for s in read_eval_log(str(f)).samples or []
        if s.metadata["agent"] == "heuristic" and s.metadata["setting"] == "memory_free"
    ]
    assert any(m.role == "tool" for s in tool_agent for m in s.messages)


def test_import_of_the_export_round_trips(recorded: Path, exported: Path, tmp_path: Path) -> None:
    from pastcast.integrations.inspect import import_inspect_log

    original = {s.key: s for s in read_run_log(recorded).steps}
    back = []
    for i, f in enumerate(sorted(exported.glob("*.eval"))):
        made = import_inspect_log(f, tmp_path / f"back{i}" / "run.jsonl")
        assert made.skipped == 0 and made.run_id == read_run_log(recorded).header.run_id
        back.append(made.path)
    steps = [s for p in back for s in read_run_log(p).steps]
    assert len(steps) == len(original)
    for s in steps:
        o = original[s.key]
        assert s.forecast == o.forecast and s.grading == o.grading
        assert s.episode == o.episode and s.cutoff == o.cutoff
        assert s.scores.brier == pytest.approx(o.scores.brier)
    merged = {}
    for p in back:
        merged.update(_groups(p))
    expected = _groups(recorded)
    assert merged.keys() == expected.keys()
    for k, v in expected.items():
        assert merged[k] == pytest.approx(v, abs=1e-12)


def test_the_export_replaces_only_its_own_folder(recorded: Path, tmp_path: Path) -> None:
    from pastcast.integrations.inspect import export_inspect_logs

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(FieldError) as err:
        export_inspect_logs([recorded], mine)
    assert err.value.field == "out"
    assert (mine / "notes.txt").read_text() == "keep me"
    out = tmp_path / "out"
    first = export_inspect_logs([recorded], out)
    again = export_inspect_logs([recorded], out)  # its own folder: replaced whole
    assert sorted(p.name for p in first.logs) == sorted(p.name for p in again.logs)
    assert sorted(out.glob("*.eval")) == sorted(again.logs)


def test_the_cli_writes_the_logs(recorded: Path, tmp_path: Path) -> None:
    got = runner.invoke(
        app, ["export", "inspect", str(recorded), "--out", str(tmp_path / "x"), "--json"]
    )
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert doc["samples"] == len(read_run_log(recorded).steps)
    assert all(Path(p).is_file() for p in doc["logs"])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "a.txt").write_text("x")
    got = runner.invoke(app, ["export", "inspect", str(recorded), "--out", str(mine)])
    assert got.exit_code == 2 and "--out" in got.output
