"""The static embedder: distilled once from a transformer (a tiny one made here), cached, and a
text's vector the normalised mean of its tokens' vectors."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pastcast.corpus.dense import (
    STATIC_EMBEDDER,
    DenseIndex,
    StaticEmbedder,
    distill_static,
    embedders,
)
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.owned import cache_root
from pastcast.records import Document

# Found, not imported: torch and transformers are imported by the fixture that builds the model,
# so collecting this module stays cheap.
for _name in ("torch", "transformers"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"could not import {_name!r}", allow_module_level=True)

WORDS = ["rocket", "launch", "orbit", "election", "vote", "ballot", "storm", "rain", "flood"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer BERT with a word-level vocabulary, saved as a Hugging Face folder."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    BertModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def distilled(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("distilled") / "m"
    distill_static(tiny_model, folder)
    return folder


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PASTCAST_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_distilled_once_then_read_from_the_cache(
    tiny_model: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = StaticEmbedder.distilled_from(tiny_model, "tiny-static")
    assert cache_root() == cache
    (folder,) = (cache / "embedders").iterdir()
    assert folder.name.startswith("tiny-static-")
    assert np.load(folder / "vectors.npy").shape == (14, 16)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("distilled again")

    monkeypatch.setattr("pastcast.corpus.dense._static.distill_static", refuse)
    again = StaticEmbedder.distilled_from(tiny_model, "tiny-static")
    texts = ["rocket launch", "storm rain flood"]
    assert np.array_equal(first.encode(texts), again.encode(texts))


def test_a_text_is_the_mean_of_its_token_vectors(distilled: Path) -> None:
    model = StaticEmbedder(distilled, "tiny-static")
    vectors = np.load(distilled / "vectors.npy")
    got = model.encode(["rocket orbit", "orbit rocket", "zzz unknown", "", "rocket"])
    assert got.dtype == np.float32 and got.shape == (5, 16)
    want = vectors[[5, 7]].mean(axis=0)
    assert np.allclose(got[0], want / np.linalg.norm(want), atol=1e-6)
    assert np.array_equal(got[0], got[1])  # a bag of tokens
    assert not got[2].any() and not got[3].any()  # unknown and special tokens are left out
    assert np.allclose(np.linalg.norm(got[[0, 1, 4]], axis=1), 1.0, atol=1e-6)
    alone = model.encode(["rocket"])
    assert np.array_equal(alone[0], got[4])  # a row does not depend on the batch


def test_dense_search_with_a_static_model(distilled: Path) -> None:
    model = StaticEmbedder(distilled, "tiny-static")
    t = datetime(2024, 1, 1, tzinfo=UTC)
    docs = [
        Document(id=f"d{i}", timestamp=t.replace(day=i + 1), title="", text=text)
        for i, text in enumerate(["rocket launch orbit", "election vote ballot", "storm rain"])
    ]
    dense = DenseIndex(EmbeddedIndex.in_memory(docs), model, quantized_min=None)
    hits = dense.search("rocket orbit", as_of=datetime(2024, 2, 1, tzinfo=UTC), k=1)
    assert [h.id for h in hits] == ["d0"]
    assert dense.search("rocket orbit", as_of=t.replace(day=2), k=3)[0].id == "d0"
    assert "d2" not in [h.id for h in dense.search("storm", as_of=t.replace(day=3), k=3)]


def test_registered_beside_minilm() -> None:
    assert {"all-minilm-l6-v2", STATIC_EMBEDDER} <= set(embedders.names())
    assert "faster on CPUs" in embedders.get(STATIC_EMBEDDER).description
