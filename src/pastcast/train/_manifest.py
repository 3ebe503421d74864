"""The manifest beside every exported file (``FILE.manifest.json``): where its rows came from and
under which guard; its fields: docs/training.md ("The manifest").
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, JsonValue, ValidationError

from pastcast.atomic import atomic_path, write_atomic
from pastcast.errors import FieldError
from pastcast.records import Record, UtcDatetime
from pastcast.runlog import StepColumns
from pastcast.runner import code_version
from pastcast.train._guard import SplitPolicy, split_name
from pastcast.train._source import DatasetRef, Selected, StepRow
from pastcast.validation import first_problem

MANIFEST_VERSION = 1

ExportKind = Literal["sft", "rewards", "table"]


class RunRef(Record):
    run_id: str
    log: str
    dataset_id: str
    code_version: str
    corpus_sha256: str | None = None
    steps: int = Field(ge=0)
    """Steps of this run behind the exported rows."""


class RowSource(Record):
    """The step a row of a chat export was taken from."""

    run_id: str
    agent: str
    event_id: str
    step_index: int
    rollout: int
    conversation: int


class ExportManifest(Record):
    format: Literal["pastcast-export"] = "pastcast-export"
    format_version: int = MANIFEST_VERSION
    kind: ExportKind
    shape: str | None = None
    file: str
    sha256: str
    rows: int = Field(ge=0)
    created_at: UtcDatetime
    code_version: str
    splits: tuple[str, ...]
    """The splits of the exported steps (``unsplit`` for events without one)."""
    guarded: bool
    """Whether the training-split guard applied (chat and reward exports; not the table)."""
    force_eval: bool = False
    left_out: dict[str, int] = Field(default_factory=dict)
    """Steps left out by the guard, per split."""
    datasets: tuple[DatasetRef, ...]
    runs: tuple[RunRef, ...]
    first_cutoff: UtcDatetime | None
    last_cutoff: UtcDatetime | None
    options: dict[str, JsonValue] = Field(default_factory=dict)
    """The export's options (selection, score, penalty, fallback, ...)."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Admitted steps that gave no row, by reason (unusable forecast, no model call, ...)."""
    sources: tuple[RowSource, ...] = ()
    """For chat exports: the source step of each row, in file order."""


def manifest_path(path: str | Path) -> Path:
    """``out/sft.jsonl`` -> ``out/sft.manifest.json`` (like the run header beside a run log)."""
    return Path(path).with_suffix(".manifest.json")


def read_manifest(path: str | Path) -> ExportManifest:
    """The manifest of an exported file (the file's path or the manifest's own)."""
    p = Path(path)
    mp = p if p.name.endswith(".manifest.json") else manifest_path(p)
    try:
        return ExportManifest.model_validate_json(mp.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FieldError("", f"{mp}: unreadable manifest ({exc.strerror})") from None
    except ValidationError as exc:
        raise FieldError("", first_problem(exc, str(mp))) from None


def run_refs(chosen: Sequence[tuple[StepColumns, StepRow]]) -> tuple[RunRef, ...]:
    counts = Counter(step.run_id for _, step in chosen)
    logs = {step.run_id: log for log, step in chosen}
    return tuple(
        RunRef(
            run_id=run_id,
            log=str(log.path),
            dataset_id=log.header.dataset_id,
            code_version=log.header.code_version,
            corpus_sha256=log.header.corpus.content_sha256 if log.header.corpus else None,
            steps=counts[run_id],
        )
        for run_id, log in logs.items()  # the runs in the order of their first steps
    )


def write_export(
    out: str | Path,
    write: Callable[[Path], int],
    *,
    kind: ExportKind,
    selected: Selected,
    policy: SplitPolicy | None,
    chosen: Sequence[tuple[StepColumns, StepRow]] | None = None,
    shape: str | None = None,
    options: Mapping[str, JsonValue] | None = None,
    skipped: Mapping[str, int] | None = None,
    sources: Sequence[RowSource] = (),
) -> ExportManifest:
    """Write an export and its manifest so that neither is ever half-written: ``write`` fills a
    temporary file and returns its row count; both files are then renamed into place. The rows
    came from ``chosen`` (default: every step ``selected``), admitted by ``policy`` (None: the
    export is not guarded)."""
    chosen = selected.steps if chosen is None else chosen
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as tmp:
        rows = write(tmp)
        with tmp.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        cutoffs = [s.cutoff for _, s in chosen]
        manifest = ExportManifest(
            kind=kind,
            shape=shape,
            file=target.name,
            sha256=digest,
            rows=rows,
            created_at=datetime.now(UTC),
            code_version=code_version(),
            splits=tuple(sorted({split_name(s.split) for _, s in chosen})),
            guarded=policy is not None,
            force_eval=policy is not None and policy.force_eval,
            left_out=selected.left_out,
            datasets=selected.datasets,
            runs=run_refs(chosen),
            first_cutoff=min(cutoffs, default=None),
            last_cutoff=max(cutoffs, default=None),
            options=dict(options or {}),
            skipped=dict(skipped or {}),
            sources=tuple(sources),
        )
    text = json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False)
    write_atomic(manifest_path(target), text + "\n")
    return manifest
