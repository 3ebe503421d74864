"""`pastcast models probe-cutoff`: questions cached on disk, the measured cutoff kept in the
knowledge-cutoff registry with its provenance and used by `score --after-knowledge-cutoff`."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from _probe_corpus import probe_corpus
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import (
    ChatRequest,
    ScriptedModel,
    knowledge_cutoff,
    knowledge_cutoff_source,
    measured_cutoffs,
    register_provider,
)
from pastcast.models._knowledge_cutoffs import MEASURED_CUTOFFS_ENV

runner = CliRunner()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probe-index")
    EmbeddedIndex.build(probe_corpus(months=12, per_month=12), root / "index")
    return root / "index"


def _knows_until(last: str) -> Any:
    """A provider whose model knows every real item through ``last`` (it reads them from the
    corpus, as a model trained on it would) and guesses after."""
    real = {d.text.removesuffix(" (Reuters)"): f"{d.timestamp:%Y-%m}" for d in probe_corpus(12, 12)}

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        lines = [ln[3:] for ln in user.splitlines() if ln[:3] in ("A. ", "B. ", "C. ", "D. ")]
        for i, text in enumerate(lines):
            if text in real and real[text] <= last:
                return json.dumps({"answer": "ABCD"[i]})
        h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
        return json.dumps({"answer": "ABCD"[h % 4]})

    def factory(rest: str, **options: Any) -> ScriptedModel:
        return ScriptedModel(responder=respond, name=f"knows:{rest}")

    return factory


def test_probe_registers_the_measured_cutoff(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = tmp_path / "cutoffs.json"
    monkeypatch.setenv(MEASURED_CUTOFFS_ENV, str(registry))
    register_provider("knows")(_knows_until("2023-07"))
    args = ["models", "probe-cutoff", "knows:m1", "--corpus", str(index), "--per-month", "8"]
    args += ["--cache", str(tmp_path / "cache"), "--draws", "200"]
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["knowledge_cutoff"] == "2023-07-31", data["estimate"]
    assert data["cached"] == 0 and data["calls"] == data["questions"] == 96
    assert Path(data["questions_file"]).is_file()
    kept = measured_cutoffs(registry)["knows:m1"]
    assert kept.knowledge_cutoff == date(2023, 7, 31)
    assert kept.low <= kept.knowledge_cutoff <= kept.high and "change point" in kept.method
    assert str(index) in kept.corpus and kept.questions == 96
    assert knowledge_cutoff("knows:m1") == date(2023, 7, 31)
    source = knowledge_cutoff_source("knows:m1")
    assert source is not None and "measured" in source and "interval" in source
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "96 of 96 answers cached" in again.stdout
    assert "knowledge cutoff: 2023-07-31" in again.stdout


def test_a_model_without_recall_registers_nothing(
    index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = tmp_path / "cutoffs.json"
    monkeypatch.setenv(MEASURED_CUTOFFS_ENV, str(registry))
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps([json.dumps({"answer": "B"})]))
    res = runner.invoke(
        app,
        ["models", "probe-cutoff", f"scripted:{answers}", "--corpus", str(index)]
        + ["--per-month", "4", "--cache", str(tmp_path / "c"), "--draws", "100"],
    )
    assert res.exit_code == 0, res.output
    assert "no recall above chance detected" in res.stdout
    assert not registry.exists()


def test_bad_months_are_usage_errors(index: Path) -> None:
    res = runner.invoke(
        app,
        ["models", "probe-cutoff", "scripted:x.json", "--corpus", str(index), "--since", "2023-13"],
    )
    assert res.exit_code == 2 and "--since" in res.output


def test_a_broken_registry_file_never_breaks_a_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "cutoffs.json"
    broken.write_text("[1, 2")
    monkeypatch.setenv(MEASURED_CUTOFFS_ENV, str(broken))
    assert knowledge_cutoff("openai:gpt-4o") == date(2023, 10, 31)  # the vendor's, as before
    with pytest.raises(ValueError, match="not a file of measured cutoffs"):
        measured_cutoffs()
