"""Every relative link of the README and the docs leads somewhere: the file exists and, for a
page, the heading its anchor names is on it (anchors as GitHub makes them from headings). A page
moved or a heading renamed fails here instead of leaving a reader at a dead link."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", ROOT / "ARCHITECTURE.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(page.read_text(encoding="utf-8")):
        if match := re.match(r"#{1,6}\s+(.*)", line):
            base = slug(match.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def broken(page: Path, root: Path = ROOT) -> list[str]:
    out = []
    for line in prose(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # a URL: not checked here
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}: {target}"
            if not dest.exists():
                out.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                out.append(f"{where}: no such heading")
    return out


def test_every_relative_link_resolves() -> None:
    assert len(PAGES) > 20
    assert [problem for page in PAGES for problem in broken(page)] == []


def test_the_check_sees_a_dead_link(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## Run `x --y` (z)\n\n## Run `x --y` (z)\n")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#run-x---y-z) [again](a.md#run-x---y-z-1) [top](#b) [web](https://x.y/#q)\n"
        "# B\n[gone](c.md) [bad](a.md#nothing)\n```\n[in code](d.md)\n```\n"
    )
    assert broken(page, tmp_path) == [
        "b.md: c.md: no such file",
        "b.md: a.md#nothing: no such heading",
    ]
