"""Hindcast's Table 1 / Table 6 and section 7 from run logs, against hand-computed examples:
accuracy by the agent's own S/W/N label (its evidence tally), market-duration buckets, the
>= 4-market topic filter, per-model nets and stop reasons counted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scoring_builders import make_step
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.records import EpisodeRecord, EvidenceTally, SideTally, StopReason
from pastcast.runlog import AgentSpec, RunHeader, StepRecord
from pastcast.scoring import GroupSummary, table_from_records
from pastcast.scoring.analyses import (
    duration_bucket,
    evidence_label,
    evidence_summary,
    market_days,
    model_recoveries,
    paired_recoveries,
    stop_counts,
    stop_reason_of,
)

cli = CliRunner()


def _ep(quality: str | None, docs: int = 3, stop: StopReason | None = None) -> EpisodeRecord:
    tally = EvidenceTally(
        sides=(SideTally(label="Yes", strong=docs), SideTally(label="No", contra=docs)),
        documents=docs,
        quality=quality,  # type: ignore[arg-type]
    )
    return EpisodeRecord(evidence_tally=tally, stop_reason=stop)


def _table1_steps() -> list[StepRecord]:
    """Strong: one right (0.8 on the truth), one wrong (0.3); weak: one right; none (a tally of
    no documents): one wrong; a baseline without a tally: right."""
    return [
        make_step({"Yes": 0.8, "No": 0.2}, event_id="e1", episode=_ep("strong")),
        make_step({"Yes": 0.3, "No": 0.7}, event_id="e2", episode=_ep("strong")),
        make_step({"Yes": 0.6, "No": 0.4}, event_id="e3", episode=_ep("weak")),
        make_step({"Yes": 0.1, "No": 0.9}, event_id="e4", episode=_ep(None, docs=0)),
        make_step({"Yes": 0.9, "No": 0.1}, event_id="e5", agent="zero-shot"),
    ]


def test_the_agents_own_label() -> None:
    labels = [evidence_label(s) for s in _table1_steps()]
    assert labels == ["strong", "strong", "weak", "none", "untallied"]
    unread = make_step({"Yes": 1.0}, episode=_ep(None, docs=2))  # quality not stated
    assert evidence_label(unread) == "untallied"
    assert SideTally(label="Yes", strong=2, weak=1, contra=3).score == 2


def _table1_summary() -> tuple[GroupSummary, ...]:
    steps = _table1_steps()
    labels = [evidence_label(s) for s in steps]
    return evidence_summary(table_from_records(steps), labels, by=("agent",), bootstrap=0)


def test_accuracy_by_label_by_hand() -> None:
    got = {
        s.group: (s.n_recorded, s.metrics["accuracy"].mean, s.metrics["brier"].mean)
        for s in _table1_summary()
    }
    # Brier on the [0, 2] scale: (1 - p)^2 + (0 - (1 - p))^2 = 2 (1 - p)^2 for truth Yes.
    assert got == {
        ("m", "strong"): (2, 0.5, pytest.approx((0.08 + 0.98) / 2)),
        ("m", "weak"): (1, 1.0, pytest.approx(0.32)),
        ("m", "none"): (1, 0.0, pytest.approx(1.62)),
        ("zero-shot", "untallied"): (1, 1.0, pytest.approx(0.02)),
    }
    # Table 1's order: S, W, N.
    order = [s.group for s in _table1_summary()]
    assert order[:3] == [("m", "strong"), ("m", "weak"), ("m", "none")]


def _write_log(tmp_path: Path, steps: list[StepRecord]) -> Path:
    out = tmp_path / "run.jsonl"
    header = RunHeader(
        run_id="run",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        dataset_id="d",
        config={"rollouts": 1},
        agents=tuple(AgentSpec(name=a, factory="f") for a in sorted({s.agent for s in steps})),
        code_version="test",
    )
    (tmp_path / "run.header.json").write_text(header.model_dump_json())
    out.write_text("".join(s.model_dump_json() + "\n" for s in steps))
    return out


def test_score_and_stats_group_by_the_agents_label(tmp_path: Path) -> None:
    log = _write_log(tmp_path, _table1_steps())
    res = cli.invoke(
        app, ["score", str(log), "--by", "agent,evidence", "--bootstrap", "0", "--json"]
    )
    assert res.exit_code == 0, res.output
    groups = {(g["agent"], g["evidence"]): g for g in json.loads(res.stdout)["groups"]}
    strong = groups[("m", "strong")]
    assert strong["n_recorded"] == 2 and strong["metrics"]["accuracy"]["mean"] == 0.5
    res = cli.invoke(
        app, ["stats", "coverage", str(log), "--bins", "label", "--by", "agent", "--json"]
    )
    assert res.exit_code == 0, res.output
    sizes = {(g["agent"], g["evidence"]): g["n_recorded"] for g in json.loads(res.stdout)["groups"]}
    # Table 6: the bin sizes per agent
    assert sizes == {
        ("m", "strong"): 2,
        ("m", "weak"): 1,
        ("m", "none"): 1,
        ("zero-shot", "untallied"): 1,
    }


def test_duration_buckets_by_hand() -> None:
    jan = datetime(2025, 1, 1, tzinfo=UTC)

    def days(d: int, h: int = 0) -> datetime:
        return datetime(2025, 1, d, h, tzinfo=UTC)

    assert market_days(jan, days(5), None) == 4.0
    assert market_days(jan, datetime(2025, 2, 1, tzinfo=UTC), days(3)) == 2.0  # resolved early
    buckets = [duration_bucket(market_days(jan, days(d), None)) for d in (5, 7, 8, 30, 31)]
    assert buckets == ["short", "short", "medium", "medium", "long"]  # 4, 6, 7, 29, 30 days
    assert duration_bucket(6.99) == "short" and duration_bucket(29.99) == "medium"
    assert duration_bucket(3, edges=(2, 5)) == "medium"
    with pytest.raises(ValueError, match="increase"):
        duration_bucket(3, edges=(5, 2))


def _pair(
    event: str, a_right: bool, b_right: bool, category: str, stop: StopReason, rollout: int = 0
) -> list[StepRecord]:
    def probs(right: bool) -> dict[str, float]:
        return {"Yes": 0.8, "No": 0.2} if right else {"Yes": 0.2, "No": 0.8}

    common = {"event_id": event, "category": category, "rollout": rollout}
    return [
        make_step(probs(a_right), agent="agent", episode=EpisodeRecord(stop_reason=stop), **common),
        make_step(probs(b_right), agent="base", **common),
    ]


def _section7() -> list[StepRecord]:
    """Sports: 4 markets (s1 twice, as two rollouts): recoveries on s1 (both rollouts), s2,
    s3; a regression on s4; Awards: 3 markets, all recoveries; a tie on a3 counts nothing."""
    return [
        *_pair("s1", True, False, "Sports", "confident"),
        *_pair("s1", True, False, "Sports", "confident", rollout=1),
        *_pair("s2", True, False, "Sports", "confident"),
        *_pair("s3", True, False, "Sports", "rounds"),
        *_pair("s4", False, True, "Sports", "budget"),
        *_pair("a1", True, False, "Awards", "confident"),
        *_pair("a2", True, False, "Awards", "no_results"),
        *_pair("a3", True, True, "Awards", "confident"),
    ]


def test_topic_recoveries_keep_topics_of_four_markets() -> None:
    recs = _section7()
    table, topic = table_from_records(recs), [r.category for r in recs]
    a, b = {"agent": "agent"}, {"agent": "base"}
    every = {
        c.topic: (c.n, c.markets, c.recoveries, c.regressions, c.net)
        for c in paired_recoveries(table, a, b, topic, pair_by=())
    }
    assert every == {"Sports": (5, 4, 4, 1, 3), "Awards": (3, 3, 2, 0, 2)}
    kept = paired_recoveries(table, a, b, topic, pair_by=(), min_markets=4)
    assert [c.topic for c in kept] == ["Sports"]


def test_stop_reasons_are_counted_and_split_recoveries() -> None:
    recs = _section7()
    table, stops = table_from_records(recs), [stop_reason_of(r) for r in recs]
    by_stop = {
        c.topic: (c.recoveries, c.regressions)
        for c in paired_recoveries(table, {"agent": "agent"}, {"agent": "base"}, stops, ())
    }
    assert by_stop == {
        "confident": (4, 0),
        "rounds": (1, 0),
        "no_results": (1, 0),
        "budget": (0, 1),
    }
    assert stop_counts(table, stops) == {
        ("agent", "memory_free"): {"budget": 1, "confident": 5, "no_results": 1, "rounds": 1},
        ("base", "memory_free"): {"-": 8},
    }


def test_per_model_nets() -> None:
    one = _section7()
    two = [
        s.model_copy(update={"agent": f"{s.agent}-2"})
        for s in _pair("x", False, True, "T", "budget")
    ]
    nets = model_recoveries(
        table_from_records([*one, *two]),
        {
            "m1": ({"agent": "agent"}, {"agent": "base"}),
            "m2": ({"agent": "agent-2"}, {"agent": "base-2"}),
        },
    )
    assert [(c.topic, c.net, c.markets) for c in nets] == [("m1", 5, 7), ("m2", -1, 1)]


def test_stats_recoveries_from_logs(tmp_path: Path) -> None:
    log = _write_log(tmp_path, _section7())
    res = cli.invoke(
        app,
        [
            "stats",
            "recoveries",
            str(log),
            "--a",
            "agent=agent",
            "--b",
            "agent=base",
            "--model",
            "m1:agent=agent;agent=base",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert [(t["topic"], t["net"], t["markets"]) for t in got["topics"]] == [("Sports", 3, 4)]
    assert {s["topic"]: s["net"] for s in got["stops"]}["confident"] == 4
    assert got["models"][0]["net"] == 5
    assert "durations" not in got  # market durations need the dataset


@pytest.mark.parametrize("bad", ["m1", "m1:agent=agent", ":agent=agent;agent=base"])
def test_stats_recoveries_refuses_a_malformed_model_pair(tmp_path: Path, bad: str) -> None:
    from pastcast.app import recoveries
    from pastcast.errors import FieldError

    log = _write_log(tmp_path, _section7())
    with pytest.raises(FieldError) as err:
        recoveries([log], "agent=agent", "agent=base", models=["m1:agent=agent;agent=base", bad])
    assert err.value.field == "models[1]"
    assert "expected NAME:A_SELECTION;B_SELECTION" in err.value.reason
    res = cli.invoke(
        app,
        ["stats", "recoveries", str(log), "--a", "agent=agent", "--b", "agent=base"]
        + ["--model", bad],
    )
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: --model: {bad!r}: expected NAME:A_SELECTION;B_SELECTION")


def test_stats_recoveries_names_the_model_option_of_a_bad_selection(tmp_path: Path) -> None:
    log = _write_log(tmp_path, _section7())
    res = cli.invoke(
        app,
        ["stats", "recoveries", str(log), "--a", "agent=agent", "--b", "agent=base"]
        + ["--model", "m1:nonsense;agent=base"],
    )
    assert res.exit_code == 2
    assert res.stderr.startswith("error: --model: 'nonsense': expected COLUMN=VALUE"), res.stderr


def test_grouping_by_label_and_stop_reads_the_columns_as_the_records(tmp_path: Path) -> None:
    from pastcast.app import score_runs
    from pastcast.reports import Runs, scorecard
    from pastcast.runlog import read_run_log

    stops: list[StopReason | None] = ["budget", "confident", None, "rounds", None]
    steps = [
        s.model_copy(update={"episode": s.episode.model_copy(update={"stop_reason": stop})})
        for s, stop in zip(_table1_steps(), stops, strict=True)
    ]
    log = _write_log(tmp_path, steps)
    header = RunHeader.model_validate_json((tmp_path / "run.header.json").read_text())
    absent = AgentSpec(name="absent", factory="f")  # scheduled, never written: "(missing)"
    header = header.model_copy(update={"agents": (*header.agents, absent)})
    (tmp_path / "run.header.json").write_text(header.model_dump_json())
    full = Runs.from_logs([read_run_log(log)])  # the records held in memory
    for by in (("agent", "evidence"), ("agent", "stop"), ("stop", "evidence"), ("evidence",)):
        scored = score_runs([log], by=by, bootstrap=50, seed=1)
        expected = scorecard(full, by, bootstrap=50, seed=1).as_dict()
        assert json.dumps(scored.card.as_dict()) == json.dumps(expected), by  # NaN included
    groups = {g.group: g for g in score_runs([log], by=("agent", "stop"), bootstrap=0).card.groups}
    assert groups[("m", "budget")].summary.n_recorded == 1
    assert groups[("zero-shot", "-")].summary.n_recorded == 1
    columns = score_runs([log], by=("agent",), bootstrap=0).read.runs
    scheduled = columns.scheduled(("agent", "stop"))
    assert scheduled == full.scheduled(("agent", "stop"))
    assert scheduled[("absent", "(missing)")] == 5 and scheduled[("m", "budget")] == 1
