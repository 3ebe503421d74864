"""A small dated corpus of made-up news items (names, places, numbers) for the cutoff probe's
tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from pastcast.records import Document

PEOPLE = ["Anna Kowal", "Rui Matos", "Lena Brandt", "Omar Haddad", "Ida Lund", "Tomas Rey"]
PLACES = ["Valmora", "Kestrel Bay", "Ostrava", "Lindholm", "Port Edda", "Sarnia"]
ORGS = ["the Coastal Union", "the Harbour League", "Northwind Bank", "the Grain Council"]


def probe_corpus(months: int = 18, per_month: int = 14) -> list[Document]:
    rng = random.Random(5)
    docs = []
    start = datetime(2023, 1, 1, tzinfo=UTC)
    for m in range(months):
        first = (start.replace(day=1) + timedelta(days=32 * m)).replace(day=1)
        for i in range(per_month):
            text = (
                f"{rng.choice(PEOPLE)} of {rng.choice(ORGS).title()} announces a deal with "
                f"{rng.choice(PLACES)} worth {rng.randint(12, 900)} million euros after talks "
                f"in {rng.choice(PLACES)}. (Reuters)"
            )
            docs.append(
                Document(
                    id=f"d-{m:02d}-{i:02d}",
                    timestamp=first + timedelta(days=i, hours=23),
                    title="Business",
                    text=text,
                    source="wire",
                )
            )
    return docs
