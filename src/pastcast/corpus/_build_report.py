"""``CorpusBuildReport``: what a corpus build did (counts, removals, time, memory, workers),
stored with the index it built (``build_report.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pastcast import safejson
from pastcast.atomic import write_atomic

BUILD_REPORT = "build_report.json"


class CorpusBuildReport(BaseModel):
    """One build of an index. ``removed``: documents or lines left out before indexing, by
    reason; ``notes``: the report lines of the build's stages (screens, allow-list, filters)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    documents: int = Field(ge=0)
    partitions: int = Field(ge=0)
    partitions_reused: int = Field(
        ge=0, description="complete partitions kept from a build cut short"
    )
    read_reused: int = Field(
        default=0, ge=0, description="documents spooled by a build cut short (read phase skipped)"
    )
    partitions_kept: int = Field(
        default=0, ge=0, description="an append's partitions kept as they were (not re-indexed)"
    )
    workers: int = Field(ge=1)
    seconds: float = Field(ge=0)
    cpu_seconds: float = Field(
        ge=0,
        description="CPU time of the build and its workers (what it costs on an idle machine)",
    )
    phase_seconds: dict[str, float] = Field(default_factory=dict, description="wall, by phase")
    phase_cpu_seconds: dict[str, float] = Field(default_factory=dict, description="CPU, by phase")
    peak_rss_bytes: int = Field(ge=0, description="the building process's peak resident memory")
    worker_peak_rss_bytes: int = Field(ge=0, description="the largest worker's; 0 without any")
    removed: dict[str, int] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    plan: dict[str, Any] | None = Field(
        default=None,
        description="the record the build ran, its preset merged (the application layer's "
        "CorpusBuildPlan); None for a build made below that layer, or an append",
    )

    def lines(self) -> list[str]:
        """The build's own facts for a terminal (the removals are the stages' to report)."""
        mib = max(self.peak_rss_bytes, self.worker_peak_rss_bytes) / 2**20
        out = [
            f"indexed {self.documents} documents into {self.partitions} month partitions "
            f"in {self.seconds:.1f} s with {self.workers} worker(s), peak memory {mib:.0f} MiB"
        ]
        if self.partitions_reused or self.read_reused:
            read = f"read phase reused ({self.read_reused} documents spooled), "
            out.append(
                f"resumed: {read if self.read_reused else ''}reused {self.partitions_reused} of "
                f"{self.partitions} partitions from the build that stopped"
            )
        if self.partitions_kept:
            out.append(
                f"appended: {self.partitions - self.partitions_kept} of {self.partitions} "
                f"partitions indexed again, {self.partitions_kept} kept as they were"
            )
        return out

    def save(self, index_dir: Path) -> None:
        write_atomic(index_dir / BUILD_REPORT, self.model_dump_json(indent=2) + "\n")

    @classmethod
    def load(cls, index_dir: Path) -> CorpusBuildReport | None:
        """The report stored in ``index_dir``, or None (an index built before reports)."""
        try:
            return cls.model_validate(safejson.loads((index_dir / BUILD_REPORT).read_bytes()))
        except (FileNotFoundError, ValueError):
            return None
