"""The runner: run logs round-trip, resume without redoing work, audit what agents saw."""

from __future__ import annotations

import dataclasses
import gc
import json
from pathlib import Path

import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec, register_agent
from pastcast.env import EnvConfig, Episode
from pastcast.errors import FieldError
from pastcast.records import Forecast
from pastcast.runlog import header_path, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import score_step

ALL_AGENTS = (
    agent_spec("uniform"),
    agent_spec("base-rate"),
    agent_spec("heuristic"),
    agent_spec("heuristic", setting="memory_on", label="heuristic-memory"),
    agent_spec("heuristic", setting="no_tools", label="heuristic-no-tools"),
    agent_spec("market"),
)


def _run(tmp_path: Path, agents: tuple = ALL_AGENTS, **kw: object) -> Path:  # type: ignore[type-arg]
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=agents, **kw)  # type: ignore[arg-type]
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    return out


def test_run_log_round_trips_and_rescoring_matches(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path))
    assert len(log.steps) == len(ALL_AGENTS) * 4
    assert log.header.dataset_id == "tiny-v1"
    for rec in log.steps:
        assert score_step(rec) == rec.scores
    again = read_run_log(log.path)
    assert again.steps == log.steps


def test_no_agent_ever_sees_a_document_at_or_after_its_cutoff(tmp_path: Path) -> None:
    docs = {d.id: d for d in tiny_documents()}
    log = read_run_log(_run(tmp_path))
    seen_any = 0
    for rec in log.steps:
        for call in rec.episode.tool_calls:
            for doc_id in call.doc_ids:
                assert docs[doc_id].timestamp < rec.cutoff, (rec.agent, doc_id)
                seen_any += 1
        # The hindsight document of an event reveals its outcome: never in that event's steps.
        own_canary = "canary-" + rec.event_id.removeprefix("ev-")
        assert own_canary not in rec.model_dump_json(exclude={"grading", "scores"})
    assert seen_any > 0  # the audit audited something


def test_no_tools_setting_has_no_tools(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path, agents=(ALL_AGENTS[4],)))
    for rec in log.steps:
        assert all(not c.ok and not c.doc_ids for c in rec.episode.tool_calls)


def test_memory_on_carries_notebook_and_memory_free_does_not(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path))
    by = {(r.agent, r.event_id, r.step_index): r for r in log.steps}
    mem1 = by[("heuristic-memory", "ev-rocket", 1)]
    assert mem1.episode.notebook_in == by[("heuristic-memory", "ev-rocket", 0)].episode.notebook_out
    assert by[("heuristic", "ev-rocket", 1)].episode.notebook_in is None


def test_resume_after_crash_redoes_nothing(tmp_path: Path) -> None:
    out = _run(tmp_path, agents=ALL_AGENTS[:3])
    lines = out.read_text().splitlines(keepends=True)
    # Simulate a crash: keep 5 records, plus half of the next line (the header is beside them).
    out.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    first = read_run_log(out)
    assert first.truncated_tail and len(first.steps) == 5
    result = run_benchmark(
        tiny_dataset(),
        ListBackend(tiny_documents()),
        RunConfig(agents=ALL_AGENTS[:3]),
        out,
        progress=False,
    )
    assert (result.skipped, result.written) == (5, 7)
    log = read_run_log(out)
    assert len({r.key for r in log.steps}) == len(log.steps) == 12
    assert not log.truncated_tail
    assert log.header.run_id == first.header.run_id


def test_rollouts_and_workers(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path, agents=ALL_AGENTS[:2], rollouts=3, workers=2))
    assert len(log.steps) == 2 * 4 * 3


@register_agent("test-crashing")
def _crashing() -> object:
    class Crash:
        def forecast(self, episode: Episode) -> Forecast:
            raise RuntimeError("boom")

    return Crash()


def test_agent_errors_are_recorded_as_failures_with_fallback(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path, agents=(agent_spec("test-crashing"),)))
    for rec in log.steps:
        assert rec.episode.termination == "error" and "boom" in (rec.episode.error or "")
        assert not rec.forecast.usable and rec.scores.fallback_used
        k = len(rec.grading.labels)
        assert rec.scores.brier == pytest.approx(1 - 1 / k)


def test_market_reference_uses_only_pre_cutoff_prices(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path, agents=(agent_spec("market"),)))
    for rec in log.steps:
        assert rec.role == "reference"
        assert rec.forecast.probs == rec.grading.market_probs


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda ls: ls[:1] + ["{not json\n"] + ls[2:], r"run\.jsonl:2: not valid JSON"),
        (
            lambda ls: (
                ls[:1] + [json.dumps({**json.loads(ls[1]), "cutoff": "soon"}) + "\n"] + ls[2:]
            ),
            r"run\.jsonl:2: field cutoff",
        ),
    ],
)
def test_malformed_run_logs_name_file_line_and_field(
    tmp_path: Path, mutate: object, expected: str
) -> None:
    out = _run(tmp_path, agents=ALL_AGENTS[:1])
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(mutate(lines)))  # type: ignore[operator]
    with pytest.raises(FieldError, match=expected):
        read_run_log(out)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda h: h.replace('"schema_version": 3', '"schema_version": 99'),
            r"run\.header\.json: field schema_version",
        ),
        (lambda h: h.replace('"dataset_id"', '"dataset"'), r"run\.header\.json: field dataset_id"),
        (lambda h: h[: len(h) // 2], r"run\.header\.json: unreadable run header"),
    ],
)
def test_malformed_run_headers_name_the_file_and_field(
    tmp_path: Path, mutate: object, expected: str
) -> None:
    out = _run(tmp_path, agents=ALL_AGENTS[:1])
    header = header_path(out)
    header.write_text(mutate(header.read_text()))  # type: ignore[operator]
    with pytest.raises(FieldError, match=expected):
        read_run_log(out)


def test_heuristic_notebook_is_a_valid_belief_notebook_dated_before_cutoff(tmp_path: Path) -> None:
    from pastcast.agents._notebook import future_entries

    log = read_run_log(_run(tmp_path, agents=(ALL_AGENTS[3],)))
    for rec in log.steps:
        nb = rec.episode.notebook_out
        assert nb is not None and nb.evidence_ledger
        assert not future_entries(nb, rec.cutoff)


def test_header_records_the_prompts_agents_use(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(['{"probabilities": {"Yes": 0.6, "No": 0.4}}']))
    log = read_run_log(
        _run(
            tmp_path,
            agents=(agent_spec("no-tools", model=f"scripted:{answers}"), agent_spec("uniform")),
        )
    )
    assert any(name.startswith("no_tools.v") for name in log.header.prompts)
    assert all(text.strip() for text in log.header.prompts.values())


def _steps_in(out: Path) -> list[tuple[str, str, int]]:
    return [(r.agent, r.event_id, r.step_index) for r in read_run_log(out).steps]


def test_resume_refuses_another_agent_list_naming_both(tmp_path: Path) -> None:
    out = _run(tmp_path, agents=(agent_spec("uniform"),))
    before = _steps_in(out)
    expected = (
        r"run log \S*run\.jsonl was written with agents \[uniform\]; this run has "
        r"\[uniform, heuristic\]: write the run to a new run log"
    )
    with pytest.raises(FieldError, match=expected):
        _run(tmp_path, agents=(agent_spec("uniform"), agent_spec("heuristic")))
    assert _steps_in(out) == before  # nothing was appended under the old header


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"env": EnvConfig(max_tool_calls=3)}, r"config env\.max_tool_calls=400; this run has 3"),
        ({"rollouts": 2}, r"config rollouts=1; this run has 2"),
        ({"fallback": "worst"}, r"config fallback='uniform'; this run has 'worst'"),
        (
            {"agents": (agent_spec("heuristic", top_k=5),)},
            r"agent heuristic args\.top_k=<absent>; this run has 5",
        ),
        (
            {"agents": (agent_spec("heuristic", setting="memory_on"),)},
            r"agent heuristic setting='memory_free'; this run has 'memory_on'",
        ),
    ],
)
def test_resume_refuses_a_changed_configuration_naming_what_differs(
    tmp_path: Path, change: dict[str, object], expected: str
) -> None:
    out = _run(tmp_path, agents=(agent_spec("heuristic"),))
    before = _steps_in(out)
    kw = {"agents": (agent_spec("heuristic"),), **change}
    with pytest.raises(FieldError, match=expected + ": write the run to a new run log"):
        _run(tmp_path, **kw)
    assert _steps_in(out) == before


def test_resume_refuses_other_prompts_or_another_dataset(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    data, backend = tiny_dataset(), ListBackend(tiny_documents())
    run_benchmark(data, backend, cfg, out, prompts={"p.v1": "one"}, progress=False)
    with pytest.raises(
        FieldError, match=r"another text of prompt p\.v1: write the run to a new run log"
    ):
        run_benchmark(data, backend, cfg, out, prompts={"p.v1": "two"}, progress=False)
    with pytest.raises(FieldError, match=r"prompts \[p\.v1\]; this run has \[p\.v1, q\.v1\]"):
        run_benchmark(data, backend, cfg, out, prompts={"p.v1": "one", "q.v1": ""}, progress=False)
    other = dataclasses.replace(data, id="tiny-v2")
    with pytest.raises(FieldError, match=r"dataset 'tiny-v1'; this run has 'tiny-v2'"):
        run_benchmark(other, backend, cfg, out, prompts={"p.v1": "one"}, progress=False)


def test_resume_with_the_same_definition_ignores_workers_and_run_identity(tmp_path: Path) -> None:
    out = _run(tmp_path, agents=ALL_AGENTS[:2])
    first = read_run_log(out)
    result = run_benchmark(
        tiny_dataset(),
        ListBackend(tiny_documents()),
        RunConfig(agents=ALL_AGENTS[:2], workers=2),
        out,
        progress=False,
    )
    assert (result.written, result.skipped) == (0, len(first.steps))
    assert read_run_log(out).header == first.header


@register_agent("test-gc-probe")
def _gc_probe() -> object:
    class Probe:
        def forecast(self, episode: Episode) -> Forecast:
            _SEEN_GC.append((gc.get_threshold()[0], gc.get_freeze_count()))
            raise RuntimeError("probe")

    return Probe()


_SEEN_GC: list[tuple[int, int]] = []


def test_steps_run_with_a_lighter_collector_and_the_process_gets_its_own_back(
    tmp_path: Path,
) -> None:
    # While steps run, what existed before is frozen out of the collector's scans and it runs
    # less often; after the run (and after a failed one) the process's own settings are back.
    before = gc.get_threshold()
    gc.set_threshold(900, *before[1:])
    try:
        _SEEN_GC.clear()
        _run(tmp_path, agents=(agent_spec("test-gc-probe"),))
        assert _SEEN_GC and all(t >= 10_000 and frozen > 0 for t, frozen in _SEEN_GC)
        assert gc.get_threshold()[0] == 900 and gc.get_freeze_count() == 0

        class Failing:  # an executor that fails while steps are being handed out
            def start(self, context: object) -> None:
                pass

            def submit(self, task: object, done: object) -> None:
                raise OSError("no more workers")

            def close(self) -> None:
                pass

        config = RunConfig(agents=(agent_spec("uniform"),))
        with pytest.raises(OSError, match="no more workers"):
            out = tmp_path / "x.jsonl"
            run_benchmark(tiny_dataset(), None, config, out, executor=Failing())  # type: ignore[arg-type]
        assert gc.get_threshold()[0] == 900 and gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)
