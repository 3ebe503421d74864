"""A cheating agent reads the resolution in-process (the default mode guarantees nothing against
agent code) and gets nothing when isolated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cheater import Cheater

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark

CHEATER = Path(__file__).resolve().parent / "_cheater.py"


def _run(tmp_path: Path, spec: object) -> list:  # type: ignore[type-arg]
    out = tmp_path / "run.jsonl"
    config = RunConfig(agents=(spec,), max_events=1)  # type: ignore[arg-type]
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)
    return list(read_run_log(out).steps)


def test_in_process_the_cheater_reads_the_resolution(tmp_path: Path) -> None:
    assert Cheater  # imported: registered as "cheater" in this process
    steps = _run(tmp_path, agent_spec("cheater"))
    assert steps and all(s.scores.brier == 0.0 for s in steps)
    for s in steps:  # every channel works, and the run log's audit shows no tool call at all
        assert s.forecast.rationale == "found through gc, frames, objects"
        assert s.episode.tool_calls == () and s.episode.model_calls == ()


def test_isolated_the_cheater_finds_nothing(tmp_path: Path, bindable_environment: None) -> None:
    spec = agent_spec("isolated", agent="cheater", plugin=str(CHEATER), label="cheater-isolated")
    steps = _run(tmp_path, spec)
    assert len(steps) == 2
    for s in steps:
        assert s.episode.error is None, s.episode.error
        assert s.forecast.rationale == "found nothing"
        assert s.forecast.probs == {"Yes": 0.5, "No": 0.5}
        assert s.scores.brier == pytest.approx(0.5)


def test_the_plugin_is_never_imported_by_the_runner(
    tmp_path: Path, open_dir: Path, bindable_environment: None
) -> None:
    plugin = open_dir / "boom_agent.py"
    plugin.write_text(
        "import pathlib\n"
        "try:\n"
        f"    pathlib.Path({str(tmp_path / 'imported')!r}).write_text('x')\n"
        "except OSError:\n"
        "    pass\n"
        "from pastcast.agents import register_agent\n"
        "from pastcast.records import Forecast\n"
        "@register_agent('boom')\n"
        "class Boom:\n"
        "    def forecast(self, episode):\n"
        "        return Forecast(probs={l: 1.0 for l in episode.question.labels})\n"
    )
    plugin.chmod(0o644)
    spec = agent_spec("isolated", agent="boom", plugin=str(plugin), label="boom")
    steps = _run(tmp_path, spec)
    assert [s.forecast.usable for s in steps] == [True, True], steps[0].episode.error
    # The sandbox's root is read-only: the write failed there, and nothing ran here.
    assert not (tmp_path / "imported").exists()


def test_a_plugin_the_sandbox_cannot_read_fails_the_run_in_one_line(
    tmp_path: Path, sandbox: None
) -> None:
    if os.getuid() != 0:
        pytest.skip("only a root caller runs the sandbox as another user")
    plugin = tmp_path / "agent.py"
    plugin.write_text("")
    plugin.chmod(0o600)
    spec = agent_spec("isolated", agent="x", plugin=str(plugin), label="x")
    with pytest.raises(ValueError, match=r"sandbox bind .*agent.py.*: not readable by other"):
        _run(tmp_path, spec)


def test_a_plugin_in_a_folder_closed_to_others_runs(
    tmp_path: Path, bindable_environment: None
) -> None:
    """pytest's own folders are private to their user, as a home or ``mktemp -d`` is."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    plugin = private / "agent.py"
    plugin.write_text(
        "from pastcast.agents import register_agent\n"
        "from pastcast.records import Forecast\n"
        "@register_agent('sure')\n"
        "class Sure:\n"
        "    def forecast(self, episode):\n"
        "        probs = {l: 1.0 for l in episode.question.labels}\n"
        "        return Forecast(probs=probs, rationale='ran')\n"
    )
    plugin.chmod(0o644)
    spec = agent_spec("isolated", agent="sure", plugin=str(plugin), label="sure")
    steps = _run(tmp_path, spec)
    assert [s.forecast.rationale for s in steps] == ["ran", "ran"], steps[0].episode.error
