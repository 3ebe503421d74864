"""Every command that builds a workflow's record takes it from a file too (``--config FILE``, as
``write_plan`` writes it): the same output as the options, an option given beside the file set
over it, a bad file one line naming the file and the field (exit 2, nothing written)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.app import (
    ConstructionAuditPlan,
    CorpusBuildPlan,
    CurationPlan,
    ForecastBenchImport,
    PolymarketImport,
    RunAuditPlan,
    write_plan,
)
from pastcast.cli import app
from pastcast.curate import CurationConfig
from pastcast.records import Record

TESTS = Path(__file__).resolve().parents[1]
for folder in ("app", "curate", "markets"):
    sys.path.insert(0, str(TESTS / folder))
from app_runs import archive, judge, run_baselines  # noqa: E402
from loopback import serve  # noqa: E402
from test_polymarket import BINARY, NEG_RISK, make_route  # noqa: E402

__all__ = ["archive", "judge"]  # imported fixtures, used by name below

runner = CliRunner()


@dataclass(frozen=True)
class Case:
    """A command: its words and options, the record they build (``out``: where it writes,
    None for a command that writes nothing), what of its JSON output must match, and an option
    that changes that output with its field's value."""

    words: tuple[str, ...]
    options: Callable[[Path | None], list[str]]
    record: Callable[[Path | None], Record]
    shown: Callable[[dict[str, Any]], Any]
    override: tuple[str, str, str, Any]
    """(option, value, field of the output's ``plan``, the value the field then holds)."""


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_baselines("world:0", tmp_path_factory.mktemp("run") / "run.jsonl", events=2)


@pytest.fixture(scope="module")
def forecastbench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fb") / "fb"
    shutil.copytree(TESTS / "markets" / "fixtures" / "fb", root)
    derived = root / "derived"
    (derived / "questions.fixture.jsonl").rename(derived / "markets_resolved.jsonl")
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")
    return root


@pytest.fixture(scope="module")
def polymarket() -> Iterator[str]:
    with serve(route=make_route([BINARY, NEG_RISK], fail_first=False)) as url:
        yield url


def _plan(out: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in out["plan"].items() if k != "out"}


def _lines(out: dict[str, Any]) -> list[str]:
    return [line.replace(out["into"], "OUT") for line in out["report"]]


def _dataset(out: dict[str, Any]) -> Any:
    return (out["dataset_id"], out["events"], out["steps"], out["funnel"])


def _cases(
    archive: Path, run_log: Path, forecastbench: Path, polymarket: str, judge: str
) -> dict[str, Case]:
    urls = {"base_url": polymarket, "clob_url": polymarket, "data_url": polymarket}
    url_options = ["--base-url", polymarket, "--clob-url", polymarket, "--data-url", polymarket]
    audit = {"dataset_only": True, "folds": 2, "draws": 100, "permutations": 20}
    return {
        "corpus build": Case(
            ("corpus", "build"),
            lambda out: ["world:0", "--out", str(out), "--workers", "1"],
            lambda out: CorpusBuildPlan(source="world:0", out=out, workers=1),
            lambda got: (got["indexed"], _lines(got), _plan(got)),
            ("--workers", "2", "workers", 2),
        ),
        "import forecastbench": Case(
            ("data", "import", "forecastbench"),
            lambda out: [str(forecastbench), "--out", str(out)],
            lambda out: ForecastBenchImport(path_or_url=str(forecastbench), out=str(out)),
            _dataset,
            ("--schedule", "hindcast", "schedule", "hindcast"),
        ),
        "import polymarket": Case(
            ("data", "import", "polymarket"),
            lambda out: [*url_options, "--out", str(out), "--schedule", "hindcast"],
            lambda out: PolymarketImport(out=str(out), schedule="hindcast", **urls),
            _dataset,
            ("--schedule", "causal-dojo", "schedule", "causal-dojo"),
        ),
        "data curate": Case(
            ("data", "curate"),
            lambda out: [
                *("world:0", "--corpus", str(archive), "--judge", judge, "--out", str(out)),
                *("--retrieval", "bm25", "--no-coverage", "--no-balance", "--min-dates", "1"),
            ],
            lambda out: CurationPlan(
                dataset="world:0",
                corpus=str(archive),
                judge=judge,
                out=str(out),
                retrieval="bm25",
                config=CurationConfig(coverage=False, balance=False, min_dates=1),
            ),
            lambda got: (got["events"], got["funnel"], got["judgements"]),
            ("--min-dates", "2", "config", None),
        ),
        "audit construction": Case(
            ("audit", "construction"),
            lambda out: (
                ["world:0", "--dataset-only", "--folds", "2", "--draws", "100"]
                + ["--permutations", "20"]
            ),
            lambda out: ConstructionAuditPlan(datasets=("world:0",), **audit),
            lambda got: (got["results"], got["plan"]),
            ("--seed", "7", "seed", 7),
        ),
        "audit run": Case(
            ("audit", "run"),
            lambda out: [str(run_log), "--dataset", "world:0"],
            lambda out: RunAuditPlan(run_log=str(run_log), dataset="world:0"),
            lambda got: (got["steps"], got["findings"], got["counts"], got["plan"]),
            ("--examples", "0", "examples", 0),
        ),
    }


COMMANDS = [
    "corpus build",
    "import forecastbench",
    "import polymarket",
    "data curate",
    "audit construction",
    "audit run",
]


@pytest.fixture
def case(
    request: pytest.FixtureRequest,
    archive: Path,
    run_log: Path,
    forecastbench: Path,
    polymarket: str,
    judge: str,
) -> Case:
    return _cases(archive, run_log, forecastbench, polymarket, judge)[request.param]


def _json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code in (0, 1), result.output  # an audit's findings exit 1
    return dict(json.loads(result.stdout))


def _writes(case: Case) -> bool:
    return case.words[0] in ("corpus", "data")


@pytest.mark.parametrize("case", COMMANDS, indirect=True)
def test_a_record_file_runs_as_its_options(case: Case, tmp_path: Path) -> None:
    outs = (tmp_path / "a", tmp_path / "b") if _writes(case) else (None, None)
    given = _json(*case.words, *case.options(outs[0]))
    config = write_plan(case.record(outs[1]), tmp_path / "plan.toml")
    from_file = _json(*case.words, "--config", str(config))
    assert case.shown(from_file) == case.shown(given)
    if outs[1] is not None:
        assert outs[1].is_dir() and any(outs[1].iterdir())


@pytest.mark.parametrize("case", COMMANDS, indirect=True)
def test_an_option_given_beats_the_file(case: Case, tmp_path: Path) -> None:
    out = tmp_path / "a" if _writes(case) else None
    config = write_plan(case.record(out), tmp_path / "plan.yaml")
    option, value, field, expected = case.override
    got = _json(*case.words, "--config", str(config), option, value)
    if "plan" in got:
        assert got["plan"][field] == expected
    else:  # an import or a curation: the dataset records its plan
        from pastcast.dataset import read_metadata

        assert out is not None
        meta = read_metadata(out)
        plan = meta["curation" if "curation" in meta else "provenance"]["plan"]
        if field == "config":
            assert plan["config"]["min_dates"] == int(value)
        else:
            assert plan[field] == expected


@pytest.mark.parametrize("case", COMMANDS, indirect=True)
def test_a_bad_file_is_one_line_naming_it_and_the_field(case: Case, tmp_path: Path) -> None:
    out = tmp_path / "a" if _writes(case) else None
    data = {**case.record(out).model_dump(mode="json", exclude_none=True), "workerz": 1}
    config = tmp_path / "plan.json"
    config.write_text(json.dumps(data))
    result = runner.invoke(app, [*case.words, "--config", str(config)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {config}: field workerz: Extra inputs are not permitted"
    ]
    assert out is None or not out.exists()


def test_a_command_without_its_record_says_what_is_missing() -> None:
    result = runner.invoke(app, ["corpus", "build"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: SOURCE: required (or give --config FILE)"
