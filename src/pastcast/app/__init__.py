"""The application layer: every name a user types and every workflow, as Python functions.

The CLI, the integrations (Inspect, verifiers) and the Gymnasium environment sit on top of it:
they parse their own inputs, call a function here and present its result. Problems are raised
as ``AppError``, one line naming the field (``dataset``, ``corpus``, ``agents[1].model``),
never a command-line flag.
"""

from pastcast.app._datasets import DATASET_SPEC_HELP, open_dataset
from pastcast.app._errors import AppError

__all__ = ["DATASET_SPEC_HELP", "AppError", "open_dataset"]
