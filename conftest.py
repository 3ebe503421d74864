"""Fixtures shared by the core's tests (tests/) and the arena's (arena/tests/). Real data lives in
../shared/data beside the checkout (present in CI)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent


def _shared_data() -> Path:
    env = os.environ.get("PASTCAST_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real data folder; tests using it skip with a clear reason where it is absent."""
    path = _shared_data()
    if not (path / "README.md").is_file():
        pytest.skip(f"real data not found at {path} (set PASTCAST_SHARED_DATA to its location)")
    return path


@pytest.fixture(autouse=True)
def _registries_restored() -> Iterator[None]:
    """Every pastcast registry holds after a test what it held before: a registration made for
    one test never leaks into the next. What a module first imported during the test registered
    at its import stays (it registers only once)."""
    from pastcast.registry import all_registries

    loaded = set(sys.modules)
    saved = [(registry, registry.snapshot()) for registry in all_registries()]
    yield
    for registry, state in saved:
        now = registry.snapshot().entries
        keep = [
            e
            for name, e in now.items()
            if name not in state.entries and _module_of(e.factory) not in loaded
        ]
        registry.restore(state)
        for entry in keep:
            registry.add(entry.name, entry.factory, description=entry.description, **entry.meta)


def _module_of(factory: object) -> str:
    return str(getattr(getattr(factory, "func", factory), "__module__", None) or "")


# Kinds of test that are slow whatever they check: a real model server, a fine-tuning run.
_SLOW_KINDS = ("local_llm", "remote_llm", "train")
# Modules whose tests each take seconds by design: several sandboxes signalling each other over
# timed slots, kernel memory held for a while, a checkout copied aside, an EVM deployed.
_SLOW_MODULES = frozenset(
    {
        "tests/sandbox/test_covert_channels.py",
        "tests/sandbox/test_kernel_memory.py",
        "tests/sandbox/test_attack_signals.py",
        "tests/sandbox/test_attack_kernel.py",
        "tests/sandbox/test_escape.py",
        "tests/sandbox/test_start.py",
        "tests/isolation/test_channels.py",
        "tests/isolation/test_cheater.py",
        "tests/isolation/test_closed_checkout.py",
        "tests/corpus/test_static_embedder.py",
        "tests/corpus/test_leakage.py",
        "tests/corpus/test_run_corpus.py",
        "tests/corpus/test_scale_build.py",
        "tests/corpus/test_remote_embedder.py",  # a job killed mid-way, servers with latency
        "tests/corpus/test_sharded.py",
        "tests/corpus/test_sharded_run.py",
        "arena/tests/test_evm.py",
        "tests/models/test_openai_provider.py",
        "tests/reports/test_score_options.py",
        "tests/reports/test_leakage_in_reports.py",
        "tests/runner/test_columns_kill.py",
        "tests/audit/test_retrieval_audit.py",
        "tests/audit/test_cutoff_probe_cli.py",
    }
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::")[0]
        if module in _SLOW_MODULES or any(item.get_closest_marker(k) for k in _SLOW_KINDS):
            item.add_marker(pytest.mark.slow)
