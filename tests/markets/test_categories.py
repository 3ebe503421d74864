"""Topic categories from a question's tags or text (ForecastBench gives none)."""

from __future__ import annotations

import pytest

from pastcast.markets import CATEGORIES, OTHER, categorize


@pytest.mark.parametrize(
    ("title", "category"),
    [
        ("Will the Houston Rockets make the NBA Playoffs?", "Sports"),
        ("Will Avatar: Fire and Ash win Best Picture at the 98th Academy Awards?", "Awards"),
        ("Will Bitcoin dip to $50,000 by December 31, 2025?", "Crypto"),
        ("Will Chappell Roan perform during the Super Bowl LX halftime show?", "Entertainment"),
        ("Will Joe Baldacci be the Democratic nominee for ME-02?", "Elections/politics"),
        ("Will Israel annex any territory by June 30?", "Geopolitics"),
        ("Will there be no change in Fed interest rates after the July 2026 meeting?", "Economic"),
        ("Will xAI have the best AI model at the end of February 2026?", "Tech/AI"),
        ("Will July 2026 be the warmest July on record, according to Copernicus?", "Weather"),
        ("Will the WHO declare a Public Health Emergency in 2026?", "Health"),
        ("Will the price of gold close above $3,000?", "Trading/commodities"),
        ("Will it happen?", OTHER),
    ],
)
def test_titles(title: str, category: str) -> None:
    assert categorize(title) == category
    assert category in CATEGORIES


def test_whole_words_only() -> None:
    assert categorize("He said the method works") == OTHER  # not "ai", not "eth"


def test_tags_come_before_text_and_text_before_description() -> None:
    assert categorize("Will X win?", tags=["Crypto", "Politics"]) == "Crypto"
    assert categorize("Will X win?", "An election in May.") == "Elections/politics"
    assert categorize("Will the NBA expand?", "An election in May.") == "Sports"
