"""The dataset specs every command that takes a dataset accepts, as parametrize values: the
embedded world with a field, a dataset directory and a Forecast-Dojo release folder.
``materialize`` turns the two that name a folder into one under a test's directory."""

from __future__ import annotations

import sys
from pathlib import Path

DATASET_SPECS = [
    "world:1,hindsight_fraction=0.2",
    "directory",
    "release",
]


def materialize(spec: str, root: Path) -> str:
    """The spec as a command takes it: a world spec as it is, ``directory`` as a saved dataset
    directory (the world's first events) and ``release`` as a tiny release folder."""
    if spec == "directory":
        from pastcast.dataset import Dataset, save_dataset
        from pastcast.world import build_world

        ds = build_world(2).dataset
        ids = set(ds.event_ids_with_steps()[:4])
        small = Dataset(
            "tiny-directory",
            tuple(e for e in ds.events if e.id in ids),
            {k: v for k, v in ds.resolutions.items() if k in ids},
            {k: v for k, v in ds.beliefs.items() if k in ids},
            tuple(s for s in ds.steps if s.event_id in ids),
        )
        return str(save_dataset(small, root / "dataset"))
    if spec == "release":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "markets"))
        from release_factories import release_row, write_release

        rows = [release_row("r1", resolved_label="Yes"), release_row("r2")]
        return str(write_release(root / "release", rows[:1], rows[1:]))
    return spec
