from datetime import UTC, date, datetime

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.markets._news import daily_news_counts
from pastcast.records import Document


def test_daily_news_counts_count_documents_per_utc_day() -> None:
    stamps = [
        datetime(2024, 5, 1, 0, 0, tzinfo=UTC),
        datetime(2024, 5, 1, 23, 59, 59, tzinfo=UTC),
        datetime(2024, 5, 3, 12, tzinfo=UTC),
        datetime(2024, 5, 4, 0, 0, tzinfo=UTC),
    ]
    docs = [Document(id=f"d{i}", timestamp=t, text="news") for i, t in enumerate(stamps)]
    counts = daily_news_counts(EmbeddedIndex.in_memory(docs), date(2024, 4, 30), date(2024, 5, 4))
    assert counts == {
        date(2024, 4, 30): 0,
        date(2024, 5, 1): 2,
        date(2024, 5, 2): 0,
        date(2024, 5, 3): 1,
        date(2024, 5, 4): 1,
    }
