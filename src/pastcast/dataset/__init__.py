"""The benchmark dataset: the in-memory form every source is converted into, and its on-disk
store (Parquet tables plus a manifest, content-addressed)."""

from pastcast.dataset._dataset import Dataset
from pastcast.dataset._edits import body_as_of, find_edits
from pastcast.dataset._store import (
    content_hash,
    load_dataset,
    read_manifest,
    read_metadata,
    save_dataset,
    with_content_id,
)

__all__ = [
    "Dataset",
    "body_as_of",
    "content_hash",
    "find_edits",
    "load_dataset",
    "read_manifest",
    "read_metadata",
    "save_dataset",
    "with_content_id",
]
