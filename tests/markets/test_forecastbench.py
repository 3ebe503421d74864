"""ForecastBench importer: fixtures in the upstream shapes, real data, download, CLI."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from loopback import serve
from markets_factories import at
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.cutoff import last_complete_day
from pastcast.dataset import load_dataset
from pastcast.errors import FieldError
from pastcast.markets.sources import download_files, read_forecastbench
from pastcast.markets.sources._html import html_to_text

FIXTURES = Path(__file__).parent / "fixtures"


def _fb(tmp_path: Path) -> Path:
    """The small hand-written ForecastBench fixture, laid out under the upstream file names.

    The fixture files carry other names in the repository so they are never mistaken for the
    real upstream data.
    """
    root = tmp_path / "fb"
    shutil.copytree(FIXTURES / "fb", root)
    derived = root / "derived"
    (derived / "questions.fixture.jsonl").rename(derived / "markets_resolved.jsonl")
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")
    return root


def test_html_backgrounds_become_text_without_links() -> None:
    text = html_to_text(
        '<div>A <b>b</b> (<a href="https://x.example/later">News</a>)</div><p>c&amp;d</p>'
    )
    assert text == "A b (News)\n\nc&d"
    assert "https://" not in text


def test_derived_files_early_resolution_and_post_resolution_prints(tmp_path: Path) -> None:
    result = read_forecastbench(_fb(tmp_path))
    by_id = {h.event.id: h for h in result.histories}
    assert set(by_id) == {"polymarket:0xaaa", "manifold:m-1"}
    assert result.skipped["not a market source"] == 1
    pm = by_id["polymarket:0xaaa"]
    # nominal date 2025-03-31, but the series settled at 0.9995 from 2025-02-15
    assert pm.resolution.resolved_at == at("2025-02-15") and pm.resolution.label == "Yes"
    assert max(b.day for b in pm.beliefs) == date(2025, 2, 7)
    assert pm.event.close_time == at("2025-03-31") and pm.event.source == "polymarket"
    assert "<" not in pm.event.description and "later.example" not in pm.event.description
    mf = by_id["manifold:m-1"]
    # the resolution set's earlier date (2025-02-18) wins over the derived one (2025-02-20)
    assert mf.resolution.resolved_at == at("2025-02-18") and mf.resolution.label == "No"
    assert max(b.day for b in mf.beliefs) == date(2025, 2, 17)
    assert mf.event.open_time == at("2025-01-25")  # no market open date: first price day
    assert mf.event.resolution_criteria == "Resolves YES if Y."
    for h in result.histories:
        assert all(b.day <= last_complete_day(h.resolution.resolved_at) for b in h.beliefs)


def test_upstream_question_and_resolution_sets() -> None:
    result = read_forecastbench(FIXTURES / "fb_upstream")
    (h,) = result.histories
    assert h.event.id == "polymarket:0xaaa"
    assert [(b.day, b.probs["Yes"]) for b in h.beliefs] == [(date(2024, 12, 25), 0.31)]
    assert result.skipped["unresolved"] == 1 and result.skipped["not a market source"] == 1


def test_malformed_inputs_name_file_line_and_field(tmp_path: Path) -> None:
    root = _fb(tmp_path)
    csv_path = root / "derived" / "daily_values.csv"
    lines = csv_path.read_text().splitlines()
    lines[3] = "polymarket,0xaaa,2025-01-14,abc"
    csv_path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FieldError, match=r"daily_values\.csv:4: field value"):
        read_forecastbench(root)
    shutil.copy(FIXTURES / "fb" / "derived" / "values.fixture.csv", csv_path)
    jl = root / "derived" / "markets_resolved.jsonl"
    recs = [json.loads(x) for x in jl.read_text().splitlines()]
    recs[1]["market_info_open_datetime"] = "yesterday"
    jl.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(FieldError, match=r"markets_resolved\.jsonl:2: field market_info_open"):
        read_forecastbench(root)


def test_resumable_download_from_loopback(tmp_path: Path) -> None:
    src = _fb(tmp_path / "src")
    name = "derived/daily_values.csv"
    dest = tmp_path / "dl"
    (dest / "derived").mkdir(parents=True)
    full = (src / name).read_bytes()
    (dest / (name + ".part")).write_bytes(full[:100])  # an interrupted earlier download
    with serve(root=src) as url:
        download_files(url, dest, [name, "derived/markets_resolved.jsonl"])
        assert any(True for _ in serve.log)  # type: ignore[attr-defined]
    assert (dest / name).read_bytes() == full
    assert not (dest / (name + ".part")).exists()
    assert read_forecastbench(dest).histories


def test_download_retries_server_errors(tmp_path: Path) -> None:
    calls = {"n": 0}

    def route(path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        calls["n"] += 1
        return (503, {}, b"busy") if calls["n"] == 1 else (200, {}, b"ok\n")

    with serve(route=route) as url:
        (out,) = download_files(url, tmp_path, ["a.txt"], backoff_s=0.01)
    assert out.read_text() == "ok\n" and calls["n"] == 2


@pytest.mark.shared_data
def test_real_forecastbench_has_no_post_resolution_prices(shared_data_dir: Path) -> None:
    result = read_forecastbench(shared_data_dir / "forecastbench")
    assert len(result.histories) > 1000
    sources = {h.event.source for h in result.histories}
    assert sources == {"polymarket", "manifold", "metaculus", "infer"}
    for h in result.histories:
        assert all(b.day <= last_complete_day(h.resolution.resolved_at) for b in h.beliefs)
        assert "<a " not in h.event.description


runner = CliRunner()


@pytest.mark.shared_data
def test_cli_import_and_info_on_real_data(shared_data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    res = runner.invoke(
        app,
        [
            "data",
            "import",
            "forecastbench",
            str(shared_data_dir / "forecastbench"),
            "--out",
            str(out),
            "--source",
            "polymarket",
            "--split",
            "2024-01-01,2025-10-01,2026-09-01",
        ],
    )
    assert res.exit_code == 0, res.output
    info = runner.invoke(app, ["data", "info", str(out), "--json"])
    assert info.exit_code == 0, info.output
    summary = json.loads(info.stdout)
    assert set(summary["by_source"]) == {"polymarket"}
    assert summary["events"] == sum(summary["by_label"].values()) > 0
    assert set(summary["by_split"]) <= {"train", "eval"}
    stages = [s["stage"] for s in summary["funnel"]]
    assert stages[0] == "imported" and "faithful days" in stages and "temporal split" in stages
    assert summary["funnel"][-1]["remaining"] == summary["events"]
    ds = load_dataset(out)
    assert ds.id == summary["dataset_id"] and ds.id.startswith("forecastbench:")
    for s in ds.steps:
        assert s.cutoff < ds.resolutions[s.event_id].resolved_at


def test_cli_import_from_url_and_schedules(tmp_path: Path) -> None:
    with serve(root=_fb(tmp_path / "src")) as url:
        res = runner.invoke(
            app,
            [
                "data",
                "import",
                "forecastbench",
                url,
                "--out",
                str(tmp_path / "d"),
                "--schedule",
                "lookback",
            ],
        )
    assert res.exit_code == 0, res.output
    summary = json.loads(runner.invoke(app, ["data", "info", str(tmp_path / "d"), "--json"]).stdout)
    assert summary["steps"]["schedule"] == "lookback"


def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    root = _fb(tmp_path / "src")
    (root / "derived" / "markets_resolved.jsonl").write_text("{not json\n")
    res = runner.invoke(
        app, ["data", "import", "forecastbench", str(root), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2
    assert "markets_resolved.jsonl:1" in res.output
    assert not (tmp_path / "o").exists()
    bad = runner.invoke(app, ["data", "info", str(tmp_path), "--json"])
    assert bad.exit_code == 2 and "manifest.json" in bad.output


def test_cli_import_json_is_one_object_on_stdout(tmp_path: Path) -> None:
    out = tmp_path / "d"
    res = runner.invoke(
        app,
        [
            "data",
            "import",
            "forecastbench",
            str(_fb(tmp_path / "src")),
            "--out",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    ds = load_dataset(out)
    assert summary["dataset_id"] == ds.id and summary["out"] == str(out)
    assert summary["events"] == len(ds.events) and summary["steps"] == len(ds.steps)
    assert summary["funnel"][0]["stage"] == "imported"
    assert summary["funnel"][-1]["remaining"] == len(ds.events)
