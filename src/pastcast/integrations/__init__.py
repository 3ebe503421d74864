"""pastcast inside the tools people already use: Inspect (``pastcast.integrations.inspect``, the
``inspect`` extra), ``verifiers`` (``pastcast.integrations.verifiers``, the ``verifiers``
extra) and Gymnasium (``pastcast.integrations.gym``, the ``gym`` extra). Each replays the same
forecast steps as ``pastcast run``, with the same cutoff-bound tools and the same scores,
through the application layer's replay (``pastcast.app.shared_replay``): the same dataset and
corpus specs as every command.

This package imports none of the frameworks; its sub-packages do.
"""
