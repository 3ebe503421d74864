"""A Hugging Face model directory as a chat model, generating in this process on the CPU:
``transformers:PATH`` (docs/models.md, "Local Hugging Face checkpoints"). Needs the ``train``
extra; nothing is downloaded.
"""

from __future__ import annotations

import importlib
import json
import re
import threading
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.models._context import ContextLimits, ContextOverflow
from pastcast.models._openai import to_openai_messages, to_openai_tools
from pastcast.models._protocol import ChatRequest, ChatResponse, ModelError
from pastcast.records import RequestedToolCall, Usage

DEFAULT_MAX_TOKENS = 512
"""The reply cap of a request that names none (CPU generation: a few tokens a millisecond for a
tiny model, tens a second for a 1B one)."""
_POSITION_KEYS = ("max_position_embeddings", "n_positions", "n_ctx")
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _window(path: Path) -> int:
    try:
        config = safejson.loads((path / "config.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: not a Hugging Face model directory ({exc})") from None
    sizes = [config.get(k) for k in _POSITION_KEYS] if isinstance(config, dict) else []
    found = [int(v) for v in sizes if isinstance(v, int) and v > 0]
    if not found:
        raise ModelError(f"{path}/config.json states no context size ({', '.join(_POSITION_KEYS)})")
    return found[0]


def transformers_context_limits(rest: str, options: dict[str, Any]) -> ContextLimits:
    """The context limits of ``transformers:REST`` (the provider's ``context_limits``)."""
    return ContextLimits(
        window=_window(Path(rest)),
        default_max_tokens=int(options.get("reply_cap", DEFAULT_MAX_TOKENS)),
    )


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = safejson.loads(raw)
        except ValueError:
            return {"_raw": raw}
    return raw if isinstance(raw, dict) else {"_raw": json.dumps(raw)}


def read_tool_calls(text: str) -> tuple[str, tuple[RequestedToolCall, ...]]:
    """The text outside ``<tool_call>`` blocks and the calls the blocks hold (a block that is not
    a JSON object naming a tool is kept verbatim, so the agent shows the model its mistake)."""
    calls = []
    for i, m in enumerate(_TOOL_CALL.finditer(text)):
        try:
            data = safejson.loads(m.group(1))
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            calls.append(RequestedToolCall(id=f"call-{i}", name="", arguments={"_raw": m.group(1)}))
            continue
        args = _arguments(data.get("arguments", {}))
        calls.append(RequestedToolCall(id=f"call-{i}", name=data["name"], arguments=args))
    return _TOOL_CALL.sub("", text).strip(), tuple(calls)


class TransformersModel:
    """A causal language model loaded from ``path`` (weights, tokenizer and chat template), one
    generation at a time. Sampling follows the request (greedy without a temperature); a request
    without a seed is seeded by its rollout, so a run is reproducible and rollouts differ."""

    def __init__(
        self,
        path: str | Path,
        *,
        reply_cap: int = DEFAULT_MAX_TOKENS,
        threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.context_limits = ContextLimits(window=_window(self.path), default_max_tokens=reply_cap)
        try:  # untyped at this boundary: the libraries' own annotations are partial
            torch: Any = importlib.import_module("torch")
            hf: Any = importlib.import_module("transformers")
        except ImportError:
            raise ModelError(
                "transformers models need the 'train' extra: pip install 'pastcast[train]'"
            ) from None
        if threads is not None:
            torch.set_num_threads(threads)
        self._torch = torch
        self._tokenizer: Any = hf.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        self._model: Any = hf.AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True)
        self._model.eval()
        self._lock = threading.Lock()  # one generation at a time: the cores are shared anyway

    @property
    def name(self) -> str:
        return f"transformers:{self.path.name}"

    def chat(self, request: ChatRequest) -> ChatResponse:
        if request.reasoning_effort is not None:
            raise ModelError(f"{self.name}: reasoning_effort is not a setting of local generation")
        window = self.context_limits.window
        wanted = request.max_tokens or self.context_limits.default_max_tokens
        with self._lock:
            prompt = self._tokenizer.apply_chat_template(
                to_openai_messages(request.messages),
                tools=to_openai_tools(request.tools) or None,
                add_generation_prompt=True,
                tokenize=False,
            )
            ids = self._tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
            ids = ids["input_ids"]
            used = int(ids.shape[1])
            room = min(wanted, window - used)
            if room < 1:  # the byte count the episode fits by can under-count this tokenizer
                raise ContextOverflow(
                    f"{self.name}: a prompt of {used} tokens fills the {window}-token context",
                    used,
                    window,
                )
            sample = bool(request.temperature)
            options: dict[str, Any] = {"max_new_tokens": room, "do_sample": sample}
            if sample:
                options.update(temperature=request.temperature, top_p=request.top_p or 1.0)
            self._torch.manual_seed(request.seed if request.seed is not None else request.rollout)
            with self._torch.no_grad():
                out = self._model.generate(
                    ids,
                    attention_mask=self._torch.ones_like(ids),
                    pad_token_id=self._tokenizer.pad_token_id or self._tokenizer.eos_token_id,
                    **options,
                )
        new = out[0, used:].tolist()
        eos = self._tokenizer.eos_token_id
        stopped = eos in new
        text = self._tokenizer.decode(new[: new.index(eos)] if stopped else new)
        for token in (self._tokenizer.pad_token, self._tokenizer.eos_token):
            text = text.replace(token, "") if token else text
        content, calls = read_tool_calls(text) if request.tools else (text.strip(), ())
        return ChatResponse(
            content=content,
            tool_calls=calls,
            usage=Usage(model_calls=1, input_tokens=used, output_tokens=len(new)),
            model=self.name,
            finish_reason="stop" if stopped or len(new) < room else "length",
        )


def transformers_model(rest: str, **options: Any) -> TransformersModel:
    """``transformers:PATH``: the Hugging Face model directory at PATH (options
    ``reply_cap``: the reply cap of a request naming none; ``threads``)."""
    return TransformersModel(rest, **options)
