"""The README's "From Python" section, run verbatim in a fresh process and folder: one route
into pastcast, the one the commands take, down to a frame with a column per outcome."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    """The Python blocks of the README's "From Python" section."""
    text = README.read_text(encoding="utf-8")
    start = text.index("From Python")
    section = text[start : text.index("\n## ", start)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_python_section_shows_one_route_and_runs_as_written(tmp_path: Path) -> None:
    (block,) = python_blocks()  # one route, not two
    assert "import pastcast" in block and "pastcast.app" not in block
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    ranked = [line.split() for line in lines if line.split()[1:2] == ["memory_free"]]
    assert {r[0] for r in ranked} == {"heuristic", "market"}
    assert all(0.0 <= float(r[-1]) <= 2.0 for r in ranked)  # a Brier on the multiclass scale
    assert (tmp_path / "runs" / "py" / "run.jsonl").is_file()
    means = {line.split()[0]: line.split()[1:] for line in lines if len(line.split()) == 3}
    assert "p_yes" in done.stdout and "market_p_yes" in done.stdout
    market_p, market_market_p = (float(x) for x in means["market"])
    assert 0.0 < market_p < 1.0 and market_p == market_market_p  # the market agent says the price
