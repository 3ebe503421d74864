"""Versioned prompt files shipped with the package (``prompts/NAME.vN.txt``, a ``[system]`` and a
``[user]`` section), registered on ``prompt_registry`` by id ``name.vN`` (entry-point group
``pastcast.prompts``), and filling their ``{lower_case}`` placeholders; docs/models.md,
"Prompts". Prompts are filled from an ``Event`` or its ``QuestionView`` at a step only
(``question_fields``): no resolved label or market price can reach them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, time
from functools import cache, partial
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

from pastcast.records import BINARY_LABELS, Event, Message, Record
from pastcast.registry import Registry

if TYPE_CHECKING:
    from pastcast.env import QuestionView

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_ID = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)$")
_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


class RenderedPrompt(Record):
    system: str
    user: str

    def messages(self) -> tuple[Message, Message]:
        return (
            Message(role="system", content=self.system),
            Message(role="user", content=self.user),
        )


class Prompt(Record):
    """One versioned prompt file."""

    name: str
    version: int
    text: str
    sha256: str

    @property
    def id(self) -> str:
        """``name.vN``, as recorded in run logs."""
        return f"{self.name}.v{self.version}"

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.text))

    def sections(self) -> tuple[str, str]:
        parts = _SECTION.split(self.text)
        found = dict(zip(parts[1::2], parts[2::2], strict=True))
        if set(found) != {"system", "user"}:
            raise ValueError(f"prompt {self.id}: needs one [system] and one [user] section")
        return found["system"].strip(), found["user"].strip()

    def render(self, fields: Mapping[str, str]) -> RenderedPrompt:
        """Fill every placeholder; a missing field is an error, extra fields are ignored."""
        missing = sorted(self.placeholders - set(fields))
        if missing:
            raise ValueError(f"prompt {self.id}: missing fields {', '.join(missing)}")

        def fill(part: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(fields[m.group(1)]), part)

        system, user = self.sections()
        return RenderedPrompt(system=fill(system), user=fill(user))


prompt_registry: Registry[str] = Registry("prompt")
"""Prompt texts by id ``name.vN``."""


def _packaged_text(filename: str) -> str:
    # Agents load their prompt every step: the file is found once, read again only when it
    # changed.
    entry = _packaged_file(filename)
    if not isinstance(entry, os.PathLike):  # a zipped package: nothing to stat
        return entry.read_text(encoding="utf-8")
    stat = os.stat(entry)
    return _read_text(os.fspath(entry), stat.st_mtime_ns, stat.st_size)


@cache
def _packaged_file(filename: str) -> Traversable:
    return resources.files("pastcast.agents") / "prompts" / filename


@cache
def _read_text(path: str, mtime_ns: int, size: int) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _register_packaged() -> None:
    for entry in (resources.files("pastcast.agents") / "prompts").iterdir():
        pid = entry.name.removesuffix(".txt")
        if entry.name.endswith(".txt") and _ID.match(pid):
            prompt_registry.add(
                pid, partial(_packaged_text, entry.name), description=f"packaged {pid}"
            )


_register_packaged()


def _versions() -> dict[str, list[int]]:
    """Every registered prompt name with its versions (ids that are not ``name.vN`` are left
    out: ``load_prompt`` could never name them)."""
    out: dict[str, list[int]] = {}
    for pid in prompt_registry.names():
        m = _ID.match(pid)
        if m:
            out.setdefault(m.group("name"), []).append(int(m.group("version")))
    return out


def list_prompts() -> list[str]:
    """Every registered prompt as ``name.vN``."""
    return [f"{n}.v{v}" for n, vs in sorted(_versions().items()) for v in sorted(vs)]


def load_prompt(name: str) -> Prompt:
    """Load ``name.vN`` exactly, or the highest version of ``name``."""
    base, _, ver = name.partition(".v")
    if ver:  # an exact id, looked up alone (agents load theirs every step)
        version = int(ver) if ver.isdigit() else None
    else:
        version = max(_versions().get(base, []), default=None)
    pid = f"{base}.v{version}"
    if version is None or not _ID.match(pid) or pid not in prompt_registry:
        raise KeyError(f"unknown prompt {name!r}; known: {', '.join(list_prompts())}")
    return _prompt(base, version, prompt_registry.build(pid))


@cache
def _prompt(name: str, version: int, text: str) -> Prompt:
    """Hashed once per text (a ``Prompt`` is immutable)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Prompt(name=name, version=version, text=text, sha256=digest)


def prob_key(label: str) -> str:
    """The key of ``label``'s probability in Hindcast's answer shape: ``"Yes"`` -> ``prob_yes``."""
    return "prob_" + re.sub(r"[^0-9a-z]+", "_", label.casefold()).strip("_")


def answer_template(labels: Sequence[str]) -> str:
    """The answer format with the outcome names and placeholder numbers (never real values)."""
    pairs = ", ".join(f"{json.dumps(label, ensure_ascii=False)}: <probability>" for label in labels)
    return f'{{"probabilities": {{{pairs}}}, "rationale": "<a few sentences>"}}'


def choice_template(labels: Sequence[str]) -> str:
    """Hindcast's answer format (its zero-shot prompt, appendix B.1), for these outcomes: the
    chosen option, a probability per option, a self-reported confidence and brief reasoning."""
    options = " | ".join(json.dumps(label, ensure_ascii=False) for label in labels)
    if tuple(labels) == BINARY_LABELS:
        probs = [f'  "{prob_key(label)}": 0.0-1.0,' for label in labels]
    else:
        pairs = ", ".join(f"{json.dumps(label, ensure_ascii=False)}: 0.0-1.0" for label in labels)
        probs = [f'  "probabilities": {{{pairs}}},']
    lines = ["{", f'  "choice": {options},', *probs]
    lines += ['  "confidence": 0.0-1.0,', '  "reasoning": "brief"', "}"]
    return "\n".join(lines)


def _when(instant: datetime) -> str:
    if instant.time() == time(0, 0):
        return instant.date().isoformat()
    return instant.strftime("%Y-%m-%d %H:%M UTC")


def question_fields(event: Event | QuestionView, cutoff: datetime) -> dict[str, str]:
    """The question placeholders, built from what an agent may see of the event: the event, or
    its view at a step (the same fields, as the step is shown them)."""
    return {
        "title": event.title,
        "description": event.description.strip() or "(none)",
        "resolution_criteria": event.resolution_criteria.strip() or "(see description)",
        "labels": "\n".join(f"- {label}" for label in event.labels),
        "labels_json": json.dumps(list(event.labels), ensure_ascii=False),
        "category": event.category or "(none)",
        "close_date": _when(event.close_time),
        "cutoff_date": _when(cutoff),
        "answer_template": answer_template(event.labels),
        "choice_template": choice_template(event.labels),
        "options": " | ".join(json.dumps(label, ensure_ascii=False) for label in event.labels),
    }
