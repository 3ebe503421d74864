"""The dashboard's comparison page: the paired differences are `paired_comparison`'s, the
steps where two agents disagree most link to both trajectories, and agents carry short labels
with their full spec on hover. In headless Chromium too (skipped where it is absent)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")

from fastapi.testclient import TestClient
from html_tables import tables as _tables
from test_dashboard_browser import _shot, browser, server  # the browser tests' fixtures
from typer.testing import CliRunner

from pastcast.cli._app import app as cli
from pastcast.dataset import Dataset
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, fmt_number
from pastcast.reports.dashboard import RunIndex, create_app
from pastcast.reports.dashboard._compare import short_labels
from pastcast.runlog import read_run_log
from pastcast.scoring import paired_comparison, table_from_records


@pytest.fixture(scope="module")
def index(recorded_log: Path, dataset: Dataset) -> RunIndex:
    return RunIndex.load([recorded_log.parent], dataset)


@pytest.fixture(scope="module")
def client(index: RunIndex) -> TestClient:
    return TestClient(create_app(index))


def _key(index: RunIndex, agent: str, setting: str) -> str:
    return f"{agent}@{setting}@{index.logs[0].header.run_id}"


def _expected(recorded_log: Path, a: dict[str, str], b: dict[str, str]) -> Any:
    """Recomputed from the log itself, not from the dashboard's index, with the command line's
    default draws and seed."""
    table = table_from_records(read_run_log(recorded_log).steps)
    return paired_comparison(table, a, b, bootstrap=BOOTSTRAP_DRAWS, seed=BOOTSTRAP_SEED)


def test_the_page_shows_the_paired_difference(
    client: TestClient, index: RunIndex, recorded_log: Path
) -> None:
    a, b = _key(index, "heuristic", "no_tools"), _key(index, "heuristic", "memory_free")
    page = client.get("/compare", params={"a": a, "b": b})
    assert page.status_code == 200
    want = _expected(
        recorded_log,
        {"agent": "heuristic", "setting": "no_tools"},
        {"agent": "heuristic", "setting": "memory_free"},
    )
    paired = _tables(page.text)["paired"]
    brier = next(r for r in paired if r[0] == "Brier")
    d = want["brier"]
    assert brier[1:4] == [fmt_number(d.mean_a), fmt_number(d.mean_b), fmt_number(d.mean, 3, True)]
    ci = f"[{fmt_number(d.ci_low, 3, True)}, {fmt_number(d.ci_high, 3, True)}]"
    assert brier[4] == ci
    # the interval `pastcast score --paired` prints for the same pair, with its defaults
    pair_spec = "heuristic@memory_free:heuristic@no_tools"  # BASE:OTHER, OTHER - BASE = A - B
    got = CliRunner().invoke(cli, ["score", str(recorded_log), "--json", "--paired", pair_spec])
    assert got.exit_code == 0, got.output
    (pair,) = json.loads(got.stdout)["paired"]
    m = pair["metrics"]["brier"]
    assert brier[4] == f"[{fmt_number(m['ci_low'], 3, True)}, {fmt_number(m['ci_high'], 3, True)}]"
    assert f"{want.n_matched} steps (event, step, rollout) both recorded" in page.text
    rows = _tables(page.text)["disagreements"][1:]
    assert 0 < len(rows) <= 25
    gaps = [abs(float(r[5]) - float(r[6])) for r in rows]
    assert all(x >= y - 1e-9 for x, y in itertools.pairwise(gaps))  # printed rounded
    links = re.findall(r'href="/step/(\d+)"', page.text)
    assert len(links) == 2 * len(rows)
    first_a, first_b = index.record(int(links[0])), index.record(int(links[1]))
    assert (first_a.setting, first_b.setting) == ("no_tools", "memory_free")
    assert first_a.event_id == first_b.event_id and first_a.step_index == first_b.step_index


def test_the_page_without_a_choice_compares_settings_of_one_agent(client: TestClient) -> None:
    page = client.get("/compare")
    assert page.status_code == 200 and 'id="paired"' in page.text


@pytest.mark.parametrize(
    "query", [{"a": "nobody@memory_free@x", "b": "x"}, {"a": "broken", "b": "broken"}]
)
def test_unknown_agents_are_a_message_not_an_error(client: TestClient, query: dict) -> None:
    page = client.get("/compare", params=query)
    assert page.status_code == 400 and 'id="error"' in page.text


def test_the_same_agent_twice_is_refused(client: TestClient, index: RunIndex) -> None:
    a = _key(index, "heuristic", "memory_free")
    page = client.get("/compare", params={"a": a, "b": a})
    assert page.status_code == 400 and "two different" in page.text


def test_short_labels_keep_the_full_spec_on_hover(client: TestClient) -> None:
    labels = short_labels(
        [
            "tool-agent:model=openai:gpt-4o-mini,top_k=5",
            "tool-agent:model=openai:gpt-4o-mini,top_k=9",
            "two-stage:model=local:qwen/Qwen2.5-1.5B-Instruct-GGUF",
            "heuristic",
            "a-very-long-agent-name-without-arguments-at-all",
        ]
    )
    assert labels["tool-agent:model=openai:gpt-4o-mini,top_k=5"] == "tool-agent · gpt-4o-mini"
    assert labels["tool-agent:model=openai:gpt-4o-mini,top_k=9"] == "tool-agent · gpt-4o-mini #2"
    assert labels["two-stage:model=local:qwen/Qwen2.5-1.5B-Instruct-GGUF"].startswith(
        "two-stage · Qwen2.5"
    )
    assert labels["heuristic"] == "heuristic"
    assert len(labels["a-very-long-agent-name-without-arguments-at-all"]) == 28
    board = client.get("/").text
    assert re.search(
        r'<a class="group" title="heuristic" href="/forecasts[^"]*">heuristic</a>', board
    )


# -- in the browser: the browser tests' server and headless Chromium (skipped without it) ------

__all__ = ["browser", "server"]  # imported fixtures, used by name below


def test_compare_two_agents_in_the_browser(
    server: str, browser: Any, index: RunIndex, recorded_log: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server + "/")
    browser.find_element(By.ID, "nav-compare").click()
    assert browser.title.startswith("Compare")
    Select(browser.find_element(By.NAME, "a")).select_by_value(_key(index, "scripted", "memory_on"))
    Select(browser.find_element(By.NAME, "b")).select_by_value(
        _key(index, "heuristic", "memory_on")
    )
    browser.find_element(By.CSS_SELECTOR, "#pick button").click()
    want = _expected(
        recorded_log,
        {"agent": "scripted", "setting": "memory_on"},
        {"agent": "heuristic", "setting": "memory_on"},
    )["brier"]
    row = browser.find_element(By.ID, "paired-brier")
    assert row.find_element(By.CSS_SELECTOR, ".diff").text == fmt_number(want.mean, 3, True)
    assert row.find_element(By.CSS_SELECTOR, ".ci").text.startswith(
        f"[{fmt_number(want.ci_low, 3, True)}"
    )
    spans = browser.find_elements(By.CSS_SELECTOR, "#paired th .agent")
    assert [s.text for s in spans] == ["scripted", "heuristic"]
    assert spans[0].get_attribute("title").startswith("scripted (memory_on, run ")
    _shot(browser, "5-compare")
    first = browser.find_elements(By.CSS_SELECTOR, "#disagreements tbody tr")[0]
    cells = [c.text for c in first.find_elements(By.TAG_NAME, "td")]
    first.find_element(By.CSS_SELECTOR, "a.traj-b").click()
    assert "/step/" in browser.current_url
    assert browser.find_element(By.ID, "cutoff").text == f"{cells[2]} UTC"
    browser.back()
    browser.find_elements(By.CSS_SELECTOR, "#disagreements a.traj-a")[0].click()
    assert browser.find_element(By.ID, "cutoff").text == f"{cells[2]} UTC"
    assert browser.execute_script("return document.scripts.length") == 0
