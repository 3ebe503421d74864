"""Invented names for people, places, organisations and things.

Names are built from syllables rather than picked from lists of real names, so that the world
never talks about real people or companies. Each generator keeps the names it has handed out, so
two events never share their key entity by accident (shared words are planted on purpose).
"""

from __future__ import annotations

import random
import re

from pastcast.world._phrases import NAME_PARTS

_SLOT = re.compile(r"\{(\w+)\}")
_KIND_OF_SLOT = {
    "P": "person",
    "C": "city",
    "N": "country",
    "K": "company",
    "T": "team",
    "X": "product",
    "W": "word",
    "B": "body",
}
"""A template slot's first letter: the kind of name it takes (``{K2}``: a second company)."""


class NameGen:
    """Deterministic, collision-free name factory driven by one ``random.Random``."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def fill(self, template: str, values: dict[str, str]) -> str:
        """``template`` with each ``{slot}`` filled: one new name per slot not yet in ``values``
        (which keeps it, so texts filled with the same ``values`` share their names)."""
        for slot in _SLOT.findall(template):
            if slot not in values:
                values[slot] = self.name(_KIND_OF_SLOT[slot[0]])
        return template.format(**values)

    def name(self, kind: str) -> str:
        """A name of ``kind`` (``person``, ``city``, ...) not handed out before; a ``body`` (a
        celestial target) may repeat across events."""
        if kind == "body":
            return self._rng.choice(NAME_PARTS["body"])
        for _ in range(1000):
            name = getattr(self, f"_{kind}")()
            if name not in self._used:
                self._used.add(name)
                return str(name)
        raise RuntimeError(f"could not invent a new {kind} name")  # pragma: no cover

    def _stem(self, syllables: int) -> str:
        r = self._rng
        parts = [
            r.choice(NAME_PARTS["onsets"]) + r.choice(NAME_PARTS["vowels"])
            for _ in range(syllables)
        ]
        return ("".join(parts) + r.choice(NAME_PARTS["codas"])).capitalize()

    def _person(self) -> str:
        r = self._rng
        first = self._stem(1) + r.choice(NAME_PARTS["first_end"])
        last = self._stem(r.choice((1, 2))) + r.choice(NAME_PARTS["last_end"])
        return f"{first} {last}"

    def _country(self) -> str:
        return self._stem(self._rng.choice((1, 2))) + self._rng.choice(NAME_PARTS["country_end"])

    def _city(self) -> str:
        r = self._rng
        return (
            r.choice(NAME_PARTS["city_pre"])
            + self._stem(r.choice((1, 2)))
            + r.choice(NAME_PARTS["city_end"])
        )

    def _company(self) -> str:
        return f"{self._stem(2)} {self._rng.choice(NAME_PARTS['company_end'])}"

    def _team(self) -> str:
        return f"{self.name('city')} {self._rng.choice(NAME_PARTS['team_mascot'])}"

    def _product(self) -> str:
        r = self._rng
        word = r.choice(NAME_PARTS["product_word"])
        return f"{word} {r.choice(('', 'X', 'S', 'Pro '))}{r.randint(2, 9)}"

    def _word(self) -> str:
        """An invented proper noun (for missions, bills, drugs, alliances, prizes)."""
        return self._stem(2)
