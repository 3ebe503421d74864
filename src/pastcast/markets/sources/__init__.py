"""Importers of resolved markets: ForecastBench files (and the nightly history of a clone of its
datasets repository, and the text snapshots of its question sets), Polymarket's public APIs
(and a cache of CLOB deadline prices and trade windows), the Forecast-Dojo release layout, and
resumable downloads of upstream files."""

from pastcast.markets.sources._clob import ClobCache
from pastcast.markets.sources._download import FORECASTBENCH_FILES, DownloadError, download_files
from pastcast.markets.sources._fbsnapshots import collected_at, read_text_versions
from pastcast.markets.sources._forecastbench import (
    HISTORY_REPO_HINT,
    ImportResult,
    read_forecastbench,
)
from pastcast.markets.sources._polymarket import (
    OpenMarket,
    PolymarketClient,
    PolymarketError,
    daily_yes_beliefs,
    fetch_histories,
    open_market,
    resolution_payouts,
)
from pastcast.markets.sources._release import load_release

__all__ = [
    "FORECASTBENCH_FILES",
    "HISTORY_REPO_HINT",
    "ClobCache",
    "DownloadError",
    "ImportResult",
    "OpenMarket",
    "PolymarketClient",
    "PolymarketError",
    "collected_at",
    "daily_yes_beliefs",
    "download_files",
    "fetch_histories",
    "load_release",
    "open_market",
    "read_forecastbench",
    "read_text_versions",
    "resolution_payouts",
]
