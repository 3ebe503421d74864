"""The cell texts of an HTML page's tables, for the report and dashboard tests."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    """Cell texts of every <table> with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self._table = str(a["id"])
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> dict[str, list[list[str]]]:
    """Rows of cell texts (header row first) of every table with an id, by id."""
    p = _Tables()
    p.feed(html)
    return p.tables
