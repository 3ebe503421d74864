"""The README's "From Python" section, run verbatim in a fresh process and folder: one route
into pastcast, the one the commands take."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("From Python")
    section = text[start : text.index("\n## ", start)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_python_section_shows_one_route_and_runs_as_written(tmp_path: Path) -> None:
    (block,) = _python_blocks()  # one route, not two
    assert "import pastcast" in block and "pastcast.app" not in block
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    assert [r[0] for r in rows] == ["heuristic", "market"] or {r[0] for r in rows} == {
        "heuristic",
        "market",
    }
    assert all(0.0 <= float(r[-1]) <= 2.0 for r in rows)  # a Brier on the multiclass scale
    assert (tmp_path / "runs" / "py" / "run.jsonl").is_file()
