"""pastcast as a ``verifiers`` environment (the ``verifiers`` extra): the same forecast steps,
cutoff-bound tools and scores as ``pastcast run``, for RL trainers that consume verifiers
environments. ``verifiers.load_environment("pastcast.integrations.verifiers", dataset=...)``
finds ``load_environment`` here. See docs/integrations.md.
"""

from pastcast.integrations.verifiers._env import PastcastEnv, load_environment

__all__ = ["PastcastEnv", "load_environment"]
