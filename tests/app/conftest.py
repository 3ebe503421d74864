"""The specs every entry point is tested with (``specs.py``), made once per session."""

from __future__ import annotations

import pytest
from specs import Made, make_specs


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    return make_specs(tmp_path_factory.mktemp("specs"))
