"""A small clone of the upstream ForecastBench datasets repository, built with git in a test:
one question set and a resolution set rewritten every night (the upstream layout)."""

from __future__ import annotations

import json
import math
import os
import subprocess
from datetime import date, timedelta
from pathlib import Path
from typing import Any

FIRST_NIGHT = date(2025, 1, 5)
NIGHTS = 30
RESOLVED_ON = date(2025, 2, 15)


def _question(qid: str, source: str, title: str) -> dict[str, Any]:
    return {
        "id": qid,
        "source": source,
        "question": title,
        "resolution_criteria": f"Resolves to the outcome of the question found at u/{qid}.",
        "background": "<p>Background.</p>",
        "market_info_open_datetime": "2025-01-01",
        "market_info_close_datetime": "2025-03-31T00:00:00+00:00",
        "market_info_resolution_criteria": "N/A",
        "url": f"https://example.org/{qid}",
        "freeze_datetime": "2025-01-05T00:00:00+00:00",
        "freeze_datetime_value": "0.4",
        "freeze_datetime_value_explanation": "The market price.",
        "source_intro": "",
        "resolution_dates": "N/A",
    }


QUESTIONS = [
    _question("0xabc", "polymarket", "Will the Lakers win the NBA Finals?"),
    _question("m-2", "manifold", "Will Bitcoin reach $150,000 in 2025?"),
    {**_question("f1", "fred", "Data question?"), "freeze_datetime_value": "3.2"},
]


def price(qid: str, night: int) -> float:
    """The market value the night's version carries (moves enough to pass the filters)."""
    base = 0.35 if qid == "0xabc" else 0.6
    return round(base + 0.2 * math.sin(night / 3.0), 4)


def _row(qid: str, source: str, resolved: bool, day: date, value: float) -> dict[str, Any]:
    return {
        "id": qid,
        "source": source,
        "direction": None,
        "resolution_date": day.isoformat(),
        "resolved_to": value,
        "resolved": resolved,
    }


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        env=env,
    )


def _write(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1), encoding="utf-8")


def build_clone(repo: Path, *, broken_night: int | None = None) -> Path:
    """A git repository laid out as the upstream one, with one commit per night."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    datasets = repo / "datasets"
    _write(
        datasets / "question_sets" / "2025-01-05-llm.json",
        {"forecast_due_date": "2025-01-05", "question_set": "x", "questions": QUESTIONS},
    )
    rs = datasets / "resolution_sets" / "2025-01-05_resolution_set.json"
    for night in range(NIGHTS):
        day = FIRST_NIGHT + timedelta(days=night)  # the value of `day`, committed the next night
        rows = [_row(q, s, False, day, price(q, night)) for q, s in (("0xabc", "polymarket"),)]
        rows.append(_row("m-2", "manifold", False, day, price("m-2", night)))
        rows.append(_row("f1", "fred", True, day, 1.0))
        if night == broken_night:
            rs.parent.mkdir(parents=True, exist_ok=True)
            rs.write_text("{not json", encoding="utf-8")
        else:
            _write(rs, {"forecast_due_date": "2025-01-05", "resolutions": rows})
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"nightly {day}")
    final = [
        _row("0xabc", "polymarket", True, RESOLVED_ON, 1.0),
        _row("m-2", "manifold", True, RESOLVED_ON, 0.0),
    ]
    _write(rs, {"forecast_due_date": "2025-01-05", "resolutions": final})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "resolved")
    return repo
