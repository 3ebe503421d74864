"""A deterministic model that replays given outputs, for tests and offline demos."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from threading import Lock
from typing import Any

from pastcast import safejson
from pastcast.models._protocol import ChatRequest, ChatResponse, ModelError
from pastcast.records import Usage
from pastcast.textfiles import read_text_file

Responder = Callable[[ChatRequest], str | ChatResponse]


class ScriptedModel:
    """Replays ``outputs`` in order (cycling when ``cycle``), or calls ``responder``.

    Every request is kept in ``requests`` so tests can audit exactly what a model was sent.
    """

    def __init__(
        self,
        outputs: Sequence[str | ChatResponse] = (),
        *,
        responder: Responder | None = None,
        cycle: bool = False,
        name: str = "scripted",
    ) -> None:
        if not outputs and responder is None:
            raise ValueError("ScriptedModel needs outputs or a responder")
        self._outputs = list(outputs)
        self._responder = responder
        self._cycle = cycle
        self._next = 0
        self._lock = Lock()
        self._name = name
        self.requests: list[ChatRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @classmethod
    def from_file(cls, path: str | Path, *, cycle: bool = True) -> ScriptedModel:
        """Load outputs from a JSON list of strings or a text file (one output per line)."""
        p = Path(path)
        text = read_text_file(p)
        if p.suffix == ".json":
            data = safejson.loads(text)
            if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
                raise ValueError(f"{p}: expected a JSON list of strings")
            outputs = list(data)
        else:
            outputs = [line for line in text.splitlines() if line.strip()]
        return cls(outputs, cycle=cycle, name=f"scripted:{p.name}")

    def chat(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.requests.append(request)
            if self._responder is not None:
                out = self._responder(request)
            else:
                if self._next >= len(self._outputs):
                    if not self._cycle:
                        raise ModelError("scripted model ran out of outputs")
                    self._next = 0
                out = self._outputs[self._next]
                self._next += 1
        if isinstance(out, ChatResponse):
            return out
        prompt_chars = sum(len(m.content) for m in request.messages)
        usage = Usage(model_calls=1, input_tokens=prompt_chars // 4, output_tokens=len(out) // 4)
        return ChatResponse(content=out, usage=usage, model=self._name, finish_reason="stop")


def scripted_model(rest: str, **options: Any) -> ScriptedModel:
    """``scripted:FILE``: replies read from a file, in order."""
    return ScriptedModel.from_file(rest, **options)
