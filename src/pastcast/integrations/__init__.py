"""pastcast inside the tools people already use: Inspect (``pastcast.integrations.inspect``, the
``inspect`` extra) and ``verifiers`` (``pastcast.integrations.verifiers``, the ``verifiers``
extra). Each replays the same forecast steps as ``pastcast run``, with the same cutoff-bound
tools and the same scores; ``open_replay`` is what they share.

This package imports neither framework; its sub-packages do.
"""

from pastcast.integrations._replay import Replay, ReplayError, open_replay

__all__ = ["Replay", "ReplayError", "open_replay"]
