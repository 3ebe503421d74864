"""Fixtures of the report and dashboard tests: the scoring tests' record builders on the path."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scoring"))
