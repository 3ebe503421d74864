"""The dashboard over a recorded run (FastAPI's TestClient): leaderboard and filters, event
pages, trajectories with documents dated against the cutoff, and what it refuses to do."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")

from fastapi.testclient import TestClient
from html_tables import tables as _tables
from recorded_run import XSS_TEXT
from scoring_builders import make_step
from typer.testing import CliRunner

from pastcast.cli._app import app as cli
from pastcast.dataset import Dataset
from pastcast.records import EpisodeRecord, ToolCall
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, Runs
from pastcast.reports._leaderboard import fmt_metric
from pastcast.reports.dashboard import RunIndex, create_app
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter, read_run_log
from pastcast.scoring import summarize


@pytest.fixture(scope="module")
def index(recorded_log: Path, dataset: Dataset) -> RunIndex:
    return RunIndex.load([recorded_log.parent], dataset)


@pytest.fixture(scope="module")
def client(index: RunIndex) -> TestClient:
    return TestClient(create_app(index))


def _rows(html: str, table: str) -> list[list[str]]:
    return _tables(html)[table][1:]


def _step_id(index: RunIndex, **where: object) -> int:
    return next(
        i
        for i, s in enumerate(index.records(range(len(index))))
        if all(getattr(s, k) == v for k, v in where.items())
    )


def test_leaderboard_shows_the_numbers_and_intervals_of_pastcast_score(
    client: TestClient, index: RunIndex, recorded_log: Path
) -> None:
    res = client.get("/")
    assert res.status_code == 200
    rows = _rows(res.text, "leaderboard")
    assert len(rows) == 7 and rows[-1][0] == "market (reference)"
    # the command line with its defaults: the same draws and seed, so the same intervals
    got = CliRunner().invoke(cli, ["score", str(recorded_log), "--json"])
    assert got.exit_code == 0, got.output
    score = json.loads(got.stdout)
    assert (score["bootstrap"], score["seed"]) == (BOOTSTRAP_DRAWS, BOOTSTRAP_SEED)
    cli_rows = {(g["agent"], g["setting"]): g for g in score["groups"]}
    for row in rows:
        g = cli_rows[(row[0].removesuffix(" (reference)"), row[1])]
        b = g["metrics"]["brier"]
        assert row[3] == str(g["n_recorded"])
        assert row[5] == f"{b['mean']:.3f} [{b['ci_low']:.3f}, {b['ci_high']:.3f}]"
    api = {s.group: s for s in summarize(index.table, ("agent", "setting"))}
    for row in rows:  # and the scoring defaults agree with both
        assert row[5] == fmt_metric(
            api[(row[0].removesuffix(" (reference)"), row[1])].metrics["brier"]
        )
    assert [r[0] for r in _rows(res.text, "events")] == sorted(
        {s.event_id for s in index.records(range(len(index)))}
    )


@pytest.mark.parametrize(
    ("query", "agents"),
    [
        ("setting=memory_on", {("heuristic", "memory_on"), ("scripted", "memory_on")}),
        ("model=reports-test:m", {("scripted", "memory_on"), ("scripted", "memory_free")}),
        ("setting=no_tools&category=sports", {("heuristic", "no_tools")}),
        ("category=nowhere", set()),
    ],
)
def test_leaderboard_filters(client: TestClient, query: str, agents: set) -> None:
    res = client.get("/?" + query)
    assert res.status_code == 200
    rows = [r for r in _rows(res.text, "leaderboard") if len(r) > 1]
    assert {(r[0].removesuffix(" (reference)"), r[1]) for r in rows} == agents
    if "category=sports" in query:
        assert [r[0] for r in _rows(res.text, "events")] == ["ev-cup"]
        assert rows[0][3] == "8"  # one event, four steps, two rollouts


def test_event_page_shows_the_market_curve_forecasts_and_outcome(client: TestClient) -> None:
    res = client.get("/event/ev-rocket")
    assert res.status_code == 200
    assert "Will the Zephyr rocket launch succeed" in res.text
    assert 'id="outcome">outcome: Yes' in res.text
    svg = re.search(r'<svg id="chart".*?</svg>', res.text, re.S)
    assert svg is not None
    assert svg.group(0).count("<polyline") == 7  # the market and six forecasting agents
    rows = _rows(res.text, "event-forecasts")
    assert len(rows) == 7 * 4 * 2
    assert len(set(re.findall(r'href="/step/(\d+)"', res.text))) == 56


def test_trajectory_shows_calls_documents_dates_and_notebook(
    client: TestClient, index: RunIndex
) -> None:
    i = _step_id(index, agent="scripted", setting="memory_on", event_id="ev-rocket",
                 step_index=1, rollout=0)  # fmt: skip
    res = client.get(f"/step/{i}")
    assert res.status_code == 200
    text = res.text
    assert "2024-03-12 00:00 UTC" in text  # the cutoff
    assert "#0 model call" in text and "$0.0020" in text and "latency" in text
    assert "search(" in text and "read(" in text
    docs = [r for r in _tables(text)["step-facts"]]
    assert docs  # the facts table is there
    shown = re.findall(
        r'<td class="doc-id">([^<]+)</td><td>[^<]*</td><td class="doc-date">([^<]+)</td>', text
    )
    assert ("d-xss", "2024-03-03 00:00") in shown
    assert ("d-rocket-2", "2024-03-10 00:00") in shown
    assert "AFTER the cutoff" not in text and "before the cutoff" in text
    # the notebook written at step 1 against the one carried from step 0
    assert 'id="notebook-diff"' in text and '<span class="add">' in text
    assert re.search(r'id="prev" href="/step/\d+"', text)


def test_documents_dated_after_the_cutoff_are_flagged(tmp_path: Path) -> None:
    cutoff = datetime(2024, 3, 12, tzinfo=UTC)
    result = json.dumps(
        [
            {"id": "late", "title": "Leak", "date": "2024-03-12 00:00"},
            {"id": "ok", "date": "2024-03-11 23:59"},
        ]
    )
    call = ToolCall(
        seq=0, name="search", arguments={"query": "q"}, result=result, doc_ids=("late", "ok")
    )
    step = make_step(
        {"Yes": 0.5, "No": 0.5}, episode=EpisodeRecord(tool_calls=(call,)), cutoff=cutoff
    )
    log = tmp_path / "run.jsonl"
    header = RunHeader(run_id="run", created_at=cutoff, dataset_id="d", config={},
                       agents=(AgentSpec(name="m", factory="f"),), code_version="t")  # fmt: skip
    with RunLogWriter(log, header) as w:
        w.write(step)
    page = TestClient(create_app(RunIndex(Runs.from_logs([read_run_log(log)])))).get("/step/0").text
    flags = re.findall(r'<td class="doc-id">(\w+)</td>.*?<td class="(after|before)">', page, re.S)
    assert flags == [("late", "after"), ("ok", "before")]
    assert "AFTER the cutoff" in page


def test_path_traversal_is_neutralised(client: TestClient) -> None:
    for url in (
        "/../../etc/passwd",
        "/event/../../etc/passwd",
        "/event/..%2F..%2Fetc%2Fpasswd",
        "/step/..%2F..%2Fetc%2Fpasswd",
        "/static/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/forecasts?agent=../../etc/passwd&setting=x",
    ):
        res = client.get(url)
        assert res.status_code == 404, url
        assert "root:" not in res.text
        assert "text/html" in res.headers["content-type"]


def test_html_in_documents_is_escaped(client: TestClient, index: RunIndex) -> None:
    i = _step_id(index, agent="scripted", setting="memory_free", event_id="ev-rocket",
                 step_index=0, rollout=0)  # fmt: skip
    res = client.get(f"/step/{i}")
    assert "d-xss" in res.text
    assert "<script" in XSS_TEXT and "<img" in XSS_TEXT
    assert "<script" not in res.text and "<img" not in res.text
    assert "&lt;script&gt;alert(document.cookie)&lt;/script&gt;" in res.text
    # no page runs a script even if one slipped through
    assert "script-src" not in res.headers["content-security-policy"]
    assert "default-src 'none'" in res.headers["content-security-policy"]
    # a query parameter is escaped too
    res = client.get("/?category=<script>alert(1)</script>")
    assert "<script>alert(1)" not in res.text


def test_dashboard_is_read_only(client: TestClient) -> None:
    for method in ("post", "put", "delete", "patch"):
        assert getattr(client, method)("/").status_code == 405
    assert client.get("/docs").status_code == 404
    assert client.get("/openapi.json").status_code == 404


def test_pages(client: TestClient) -> None:
    base = "/forecasts?agent=uniform&setting=memory_free"
    first = _rows(client.get(base).text, "forecasts")
    second = _rows(client.get(base + "&page=2").text, "forecasts")
    assert (len(first), len(second)) == (50, 14)
    assert _rows(client.get(base + "&page=99").text, "forecasts") == second
    assert _rows(client.get(base + "&page=abc").text, "forecasts") == first
    assert client.get("/forecasts?agent=nobody&setting=memory_free").status_code == 404


def test_view_refuses_a_path_without_run_logs(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["view", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "no such run directory" in res.stderr
    res = runner.invoke(cli, ["view", str(tmp_path)])
    assert res.exit_code == 2 and "no run log" in res.stderr
