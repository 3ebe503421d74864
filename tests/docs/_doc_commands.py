"""The ``pastcast`` command lines the README and the docs show, read out of their shell blocks.

A line continued with a backslash is joined to the next; a comment (`` # ...`` after the
command, or a whole line) is dropped; commands chained with ``&&`` or ``;`` are split.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGUAGES = frozenset({"", "bash", "sh", "shell", "console"})


@dataclass(frozen=True)
class DocCommand:
    """One command line of a page: where it is, and its words after ``pastcast``."""

    page: str
    line: int
    text: str

    @property
    def words(self) -> list[str]:
        """The words after ``pastcast``; a synopsis's ``[--option VALUE]`` brackets and ``...``
        are notation, not words."""
        words = [w.strip("[]") for w in shlex.split(self.text)[1:]]
        return [w for w in words if w and w != "..."]


def without_comment(line: str) -> str:
    """The line up to a comment: a '#' at the start or after whitespace, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def shell_lines(block: str, first_line: int) -> list[tuple[int, str]]:
    """The block's command lines (comments dropped, continuations joined), with line numbers."""
    out: list[tuple[int, str]] = []
    pending = ""
    start = first_line
    for offset, raw in enumerate(block.splitlines()):
        line = without_comment(raw).rstrip()
        if not pending:
            start = first_line + offset
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined = " ".join((pending + line).split())
        pending = ""
        for part in re.split(r"\s*(?:&&|;)\s*", joined):
            if part:
                out.append((start, part))
    return out


def shell_blocks(text: str) -> list[tuple[int, str]]:
    """The page's fenced blocks in a shell language or none, with their first line numbers."""
    blocks: list[tuple[int, str]] = []
    language: str | None = None
    body: list[str] = []
    first = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if language is None:
                language, body, first = line[3:].strip(), [], number + 1
            else:
                if language in SHELL_LANGUAGES:
                    blocks.append((first, "\n".join(body)))
                language = None
        elif language is not None:
            body.append(line)
    return blocks


def doc_commands(page: Path) -> list[DocCommand]:
    """Every ``pastcast ...`` command in the page's shell blocks."""
    found: list[DocCommand] = []
    for first, block in shell_blocks(page.read_text(encoding="utf-8")):
        for number, line in shell_lines(block, first):
            if line.startswith("pastcast "):
                found.append(DocCommand(str(page.relative_to(ROOT)), number, line))
    return found


def documented_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def tour_commands() -> list[DocCommand]:
    """The README tour's commands, in order."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    start = text.index("## A five-minute tour")
    end = text.index("\n## ", start + 1)
    return [c for c in doc_commands(readme) if start < _offset(text, c.line) < end]


def _offset(text: str, line: int) -> int:
    return sum(len(row) + 1 for row in text.splitlines()[: line - 1])
