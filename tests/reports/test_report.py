"""`pastcast report`: the HTML report of a recorded run, its numbers against `pastcast score`,
its files, which figures it draws, and what it escapes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the report needs the reports extra")
pytest.importorskip("jinja2", reason="the report needs the reports extra")

from html_tables import tables as _tables
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.dataset import save_dataset
from pastcast.reports import Runs, scorecard
from pastcast.reports.figures import FIGURES, ReportData
from pastcast.runlog import read_run_log

runner = CliRunner()
BOOT = "300"


def _ci(m: dict[str, Any]) -> str:
    return f"{m['mean']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]"


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory, dataset) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("ds") / "dataset"
    save_dataset(dataset, out)
    return out


@pytest.fixture(scope="module")
def written(recorded_log: Path, dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("report")
    args = ["report", str(recorded_log), "--out", str(out), "--dataset", str(dataset_dir)]
    args += ["--bootstrap", BOOT, "--lookback", "0.25,0.5,0.75,1", "--json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return out, json.loads(res.stdout)


def test_report_numbers_are_those_of_score(written, recorded_log: Path) -> None:  # type: ignore[no-untyped-def]
    out, _ = written
    res = runner.invoke(app, ["score", str(recorded_log), "--bootstrap", BOOT, "--json"])
    assert res.exit_code == 0, res.output
    score = json.loads(res.stdout)
    by_group = {(g["agent"], g["setting"]): g for g in score["groups"]}
    details = {(d["agent"], d["setting"]): d for d in score["details"]}
    tables = _tables((out / "report.html").read_text())
    header, *rows = tables["table-1"]
    assert header[:6] == ["agent", "setting", "n", "Brier", "accuracy", "info-alpha"]
    assert len(rows) == len(by_group) == 7
    col = {name: i for i, name in enumerate(header)}
    for row in rows:
        key = (row[0].removesuffix(" (reference)"), row[1])
        g, d = by_group[key], details[key]
        m = g["metrics"]
        assert row[col["n"]] == str(g["n_recorded"])
        assert row[col["Brier"]] == _ci(m["brier"])
        assert row[col["accuracy"]] == _ci(m["accuracy"])
        assert row[col["info-alpha"]] == _ci(m["info_alpha"])
        assert row[col["failure rate"]] == f"{g['scheduled_failure_rate']:.1%}"
        assert row[col["cost/forecast ($)"]] == f"{d['resources_per_forecast']['cost_usd']:.4f}"
        assert row[col["rollout SD"]] == f"{m['brier']['rollout_std']:.3f}"
        assert row[col["uniform Brier"]] == f"{d['references']['uniform_brier']:.3f}"
        assert row[col["market Brier"]] == f"{d['references']['market_brier']:.3f}"
    # agents ranked by Brier, the market reference last
    assert rows[-1][0] == "market (reference)"
    briers = [by_group[(r[0], r[1])]["metrics"]["brier"]["mean"] for r in rows[:-1]]
    assert briers == sorted(briers)
    # the calibration table: ECE and Murphy components
    header, *rows = tables["table-2"]
    col = {name: i for i, name in enumerate(header)}
    for row in rows:
        d = details[(row[0].removesuffix(" (reference)"), row[1])]
        cal = d["calibration"]
        assert row[col["ECE"]] == f"{cal['ece']:.3f}"
        assert row[col["REL"]] == f"{cal['murphy']['reliability']:.4f}"
        assert row[col["RES"]] == f"{cal['murphy']['resolution']:.4f}"
        assert row[col["Brier [0,1]"]] == _ci(
            by_group[(row[0].removesuffix(" (reference)"), row[1])]["metrics"]["binary_brier"]
        )


def test_report_writes_its_files(written) -> None:  # type: ignore[no-untyped-def]
    out, got = written
    html = (out / "report.html").read_text()
    # self-contained: no reference to anything outside the file
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    figures = sorted(p.name for p in (out / "figures").iterdir())
    names = sorted({n.rsplit(".", 1)[0] for n in figures})
    assert names == sorted(FIGURES.names())  # the recorded run has what every figure needs
    assert html.count("data:image/png;base64,") == len(names)
    for n in names:
        assert (out / "figures" / f"{n}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in (out / "figures" / f"{n}.svg").read_text()[:2000]
    md = (out / "tables.md").read_text()
    tex = (out / "tables.tex").read_text()
    brier = _ci(got["groups"][0]["metrics"]["brier"])
    assert brier in md and brier in tex and brier in html
    assert "memory\\_on" in tex and "\\begin{tabular}" in tex
    assert json.loads((out / "scorecard.json").read_text())["groups"] == got["groups"]


def _data(log: Path, **kw: Any) -> ReportData:
    runs = Runs.from_logs([read_run_log(log)])
    card = scorecard(runs, bootstrap=0)
    return ReportData(runs, card, **kw)


def test_figures_are_drawn_only_when_the_run_has_what_they_need(
    recorded_log: Path, tmp_path: Path
) -> None:
    # baselines only: no memory-on notebooks, no no-tools setting, one setting per agent
    log = tmp_path / "run.jsonl"
    shutil.copy(recorded_log.with_suffix(".header.json"), tmp_path / "run.header.json")
    lines = recorded_log.read_text().splitlines(keepends=True)
    log.write_text(
        "".join(ln for ln in lines if '"agent":"uniform"' in ln or '"agent":"market"' in ln)
    )
    data = _data(log)
    drawn = {n for n in FIGURES.names() if FIGURES.build(n, data=data) is not None}
    assert {"reliability", "murphy", "cumulative-alpha", "thirds", "market"} <= drawn
    assert not drawn & {"memory-cost", "evidence", "recoveries", "lookback", "capture-gain"}
    assert not drawn & {"cost-by-step"}  # baselines and the market cost nothing
    full = _data(recorded_log)
    assert FIGURES.build("lookback", data=full) is None  # only when given the fractions
    assert FIGURES.build("recoveries", data=full) is not None


def test_report_options_are_checked(recorded_log: Path, tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["report", str(recorded_log), "--out", str(tmp_path), "--figure", "pie"]
    )
    assert res.exit_code == 2 and "--figure 'pie': unknown figure" in res.stderr
    res = runner.invoke(
        app, ["report", str(recorded_log), "--out", str(tmp_path), "--event", "nope"]
    )
    assert res.exit_code == 2 and "--event 'nope'" in res.stderr
    res = runner.invoke(
        app, ["report", str(recorded_log), "--out", str(tmp_path), "--lookback", "1,0.5"]
    )
    assert res.exit_code == 2 and "--lookback" in res.stderr
    assert not (tmp_path / "report.html").exists()


def test_report_escapes_what_the_logs_hold(recorded_log: Path, tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    for name in ("run.jsonl", "run.header.json"):
        src = recorded_log.with_name(name).read_text()
        (tmp_path / name).write_text(src.replace('"heuristic"', json.dumps(evil)))
    out = tmp_path / "out"
    args = ["report", str(tmp_path / "run.jsonl"), "--out", str(out), "--bootstrap", "0"]
    res = runner.invoke(app, [*args, "--figure", "murphy", "--event", "ev-rocket"])
    assert res.exit_code == 0, res.output
    html = (out / "report.html").read_text()
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
