"""The split guard: training exports read training-split events only, unless told otherwise
(docs/training.md, "The split guard")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from pastcast.errors import FieldError

TRAIN_SPLIT = "train"
UNSPLIT = "unsplit"
"""The name that selects the events of a dataset without a split."""

T = TypeVar("T")


def split_name(split: str) -> str:
    """The split as selected and reported: ``unsplit`` for an event without one."""
    return split or UNSPLIT


@dataclass(frozen=True)
class SplitPolicy:
    """Which splits an export (or an environment) may draw events from.

    ``splits`` name the splits to use (``unsplit`` for events without one); a split other than
    ``train`` and ``unsplit`` holds evaluation events and is refused unless ``force_eval``.
    """

    splits: tuple[str, ...] = (TRAIN_SPLIT,)
    force_eval: bool = False

    def __post_init__(self) -> None:
        if not self.splits:
            raise FieldError("", "no split selected")
        evaluation = [s for s in self.splits if s not in (TRAIN_SPLIT, UNSPLIT)]
        if evaluation and not self.force_eval:
            raise FieldError(
                "",
                f"split {evaluation[0]!r} holds evaluation events: training on them is refused "
                "unless forced (--force-eval, force_eval=True)",
            )

    def admits(self, split: str) -> bool:
        return split_name(split) in self.splits

    def select(
        self, items: Iterable[T], split_of: Callable[[T], str], where: str
    ) -> tuple[list[T], dict[str, int]]:
        """The items whose split is admitted, and how many of each other split were left out.

        Raises ``FieldError`` when nothing is left, naming the splits that were found."""
        kept: list[T] = []
        left_out: Counter[str] = Counter()
        for item in items:
            split = split_of(item)
            if self.admits(split):
                kept.append(item)
            else:
                left_out[split_name(split)] += 1
        if not kept:
            found = ", ".join(f"{n} {s}" for s, n in sorted(left_out.items())) or "nothing"
            hint = (
                f"; events without a split are used only when selected ({UNSPLIT!r}: "
                "--split unsplit)"
                if UNSPLIT in left_out
                else ""
            )
            raise FieldError(
                "", f"{where}: no steps of split {', '.join(self.splits)} (found {found}){hint}"
            )
        return kept, dict(sorted(left_out.items()))
