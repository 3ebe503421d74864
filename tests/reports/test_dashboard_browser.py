"""The dashboard in headless Chromium (Debian's chromium and chromium-driver, through
Selenium): click from the leaderboard to an event to a trajectory and find the documents the
agent saw with their dates; a screenshot of each page is kept as a test artifact
(``$PASTCAST_TEST_ARTIFACTS``, default ``test-artifacts/dashboard`` in the checkout)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the dashboard needs the reports extra")
pytest.importorskip("uvicorn", reason="the dashboard needs the reports extra")

from pastcast.dataset import Dataset
from pastcast.reports.dashboard import RunIndex, create_app

CHROMIUM = Path(os.environ.get("PASTCAST_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("PASTCAST_CHROMEDRIVER", "/usr/bin/chromedriver"))
ARTIFACTS = Path(
    os.environ.get(
        "PASTCAST_TEST_ARTIFACTS",
        Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard",
    )
)
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--window-size=1400,1000",
)


def _browser_or_skip() -> Any:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (it comes with the dev extra)")
    for exe, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            pytest.skip(f"{exe} not found: install the Debian package {package} (make test does)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


@pytest.fixture(scope="module")
def server(recorded_log: Path, dataset: Dataset) -> Iterator[str]:
    import uvicorn

    app = create_app(RunIndex.load([recorded_log.parent], dataset))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the dashboard did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = _browser_or_skip()
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def test_click_from_leaderboard_to_event_to_trajectory(server: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    browser.get(server + "/")
    assert browser.title.startswith("Leaderboard")
    rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    assert len(rows) == 7
    _shot(browser, "1-leaderboard")

    browser.find_element(By.LINK_TEXT, "ev-rocket").click()
    assert browser.current_url.endswith("/event/ev-rocket")
    assert "outcome: Yes" in browser.find_element(By.ID, "outcome").text
    assert browser.find_element(By.ID, "chart").is_displayed()
    _shot(browser, "2-event")

    row = next(
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "#event-forecasts tbody tr")
        if [c.text for c in r.find_elements(By.TAG_NAME, "td")][:5]
        == ["1", "2024-03-12 00:00", "scripted", "memory_on", "0"]
    )
    row.find_element(By.LINK_TEXT, "trajectory").click()
    assert "/step/" in browser.current_url
    assert browser.find_element(By.ID, "cutoff").text == "2024-03-12 00:00 UTC"
    docs = {
        tuple(c.text for c in r.find_elements(By.TAG_NAME, "td"))
        for r in browser.find_elements(By.CSS_SELECTOR, "table.docs tr.doc")
    }
    assert ("d-xss", "2024-03-03 00:00", "before the cutoff") in {(d[0], d[2], d[3]) for d in docs}
    assert ("d-rocket-2", "2024-03-10 00:00", "before the cutoff") in {
        (d[0], d[2], d[3]) for d in docs
    }
    # the document's script and image tags are text on the page, never elements
    assert "<script>alert(document.cookie)</script>" in browser.page_source.replace(
        "&lt;", "<"
    ).replace("&gt;", ">")
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    _shot(browser, "3-trajectory")

    browser.find_element(By.ID, "prev").click()
    assert browser.find_element(By.ID, "cutoff").text == "2024-03-05 00:00 UTC"
    browser.get(server + "/?model=reports-test%3Am")
    groups = browser.find_elements(By.CSS_SELECTOR, "#leaderboard a.group")
    assert sorted(g.text for g in groups) == ["scripted", "scripted"]
    groups[0].click()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#forecasts tbody tr")) == 50
    _shot(browser, "4-forecasts")
    assert sorted(p.name for p in ARTIFACTS.iterdir()) == [
        "1-leaderboard.png",
        "2-event.png",
        "3-trajectory.png",
        "4-forecasts.png",
    ]


def test_raw_paths_with_dot_segments_are_refused(server: str) -> None:
    """Over a real socket, paths are sent exactly as written (no client normalises them)."""
    import http.client

    host, port = server.removeprefix("http://").split(":")
    for path in (
        "/../../etc/passwd",
        "/event/../../../etc/passwd",
        "/step/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/event/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    ):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", path)
        res = conn.getresponse()
        body = res.read().decode("utf-8", "replace")
        conn.close()
        assert res.status == 404, path
        assert "root:" not in body


OVERFLOW_JS = """
const found = [];
for (const e of document.querySelectorAll('body, body *')) {
  const s = getComputedStyle(e);
  if (s.display === 'inline' || s.display === 'none' || e.clientWidth === 0) continue;
  if (['auto', 'scroll'].includes(s.overflowX)) continue;  // a box meant to scroll
  if (e.scrollWidth > e.clientWidth + 1) {
    found.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}: ` +
               `${e.scrollWidth} > ${e.clientWidth}: ${e.textContent.trim().slice(0, 60)}`);
  }
}
return found;
"""
"""Every element whose content is wider than its box (text running out of it, or cut by an
ellipsis), unless the box is made to scroll."""

SCROLLED_JS = """
const found = [];
for (const e of document.querySelectorAll('table')) {
  if (e.scrollWidth > e.clientWidth + 1) {
    found.push(`${e.id || 'table'}: ${e.scrollWidth} > ${e.clientWidth}: ` +
               `${e.textContent.trim().slice(0, 60)}`);
  }
}
return found;
"""
"""Every table wider than its box: one that scrolls hides columns from a reader (and from a
screenshot) although nothing overflows."""


def test_no_text_overflows_its_box(
    server: str, browser: Any, recorded_log: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from typer.testing import CliRunner

    from pastcast.cli._app import app

    browser.get(server + "/")
    forecasts = browser.find_element(By.CSS_SELECTOR, "#leaderboard a.group").get_attribute("href")
    for page in ("/", forecasts, "/event/ev-rocket", "/step/0", "/compare", "/leakage"):
        browser.get(page if page.startswith("http") else server + page)
        assert browser.execute_script(OVERFLOW_JS) == [], page
    # the HTML report's tables and captions too (one figure: the tables are what is wide)
    out = tmp_path / "report"
    args = ["report", str(recorded_log), "--out", str(out), "--bootstrap", "0"]
    made = CliRunner().invoke(app, [*args, "--figure", "market"])
    assert made.exit_code == 0, made.output
    browser.get((out / "report.html").as_uri())
    assert browser.execute_script(OVERFLOW_JS) == [], "report.html"
    # no table of the dashboard's summary pages needs its scroll bar at 1400 px, nor any of the
    # report's in a narrower window
    for page in ("/", "/compare"):
        browser.get(server + page)
        assert browser.execute_script(SCROLLED_JS) == [], page
    browser.set_window_size(1200, 1000)
    try:
        browser.get((out / "report.html").as_uri())
        assert browser.execute_script(SCROLLED_JS) == [], "report.html"
    finally:
        browser.set_window_size(1400, 1000)
