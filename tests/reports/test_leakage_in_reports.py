"""The report and the dashboard show each run's leakage card, the same record the command line
prints (``pastcast.audit.leakage_card``)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from pastcast.app import dashboard, read_runs, report_runs
from pastcast.app._audits import run_leakage_cards
from pastcast.audit import audit_texts
from pastcast.dataset import Dataset


def test_the_report_and_the_dashboard_show_the_runs_leakage_card(
    recorded_log: Path, dataset: Dataset, tmp_path: Path
) -> None:
    (card,) = run_leakage_cards(read_runs([recorded_log], dataset))
    texts = audit_texts(dataset)
    assert card.dataset_id == dataset.id and card.steps == len(dataset.steps)
    assert card.sibling_steps == texts.sibling_steps and card.run_id
    assert {m.model for m in card.models} == {"reports-test:m"}  # the run's model
    report_runs([recorded_log], tmp_path / "report", dataset=dataset, bootstrap=100)
    written = json.loads((tmp_path / "report" / "leakage.json").read_text())
    assert written == [card.model_dump(mode="json")]
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Leakage card" in html and "construction audit" in html
    page = TestClient(dashboard([recorded_log], dataset).app).get("/leakage")
    assert page.status_code == 200
    for channel, _ in card.rows():
        assert channel.replace("'", "&#39;") in page.text
