"""pastcast inside Inspect (the ``inspect`` extra): the task ``pastcast/forecast``, its solver
and scorer, Inspect's models as the ``inspect`` model provider, Inspect logs as run logs, and
run logs as Inspect logs (for ``inspect view``).

Registered through Inspect's entry point (group ``inspect_ai``), so ``inspect eval
pastcast/forecast -T dataset=world --model ...`` finds the task. See docs/integrations.md.
"""

from pastcast.integrations.inspect._export import (
    INSPECT_LOGS,
    InspectExport,
    export_inspect_logs,
)
from pastcast.integrations.inspect._log import InspectImport, import_inspect_log
from pastcast.integrations.inspect._model import InspectChatModel, inspect_messages, inspect_model
from pastcast.integrations.inspect._task import STORE_KEY, forecast, forecast_score, pastcast_agent
from pastcast.integrations.inspect._tokens import seed_tiktoken_cache, tiktoken_cache_path

__all__ = [
    "INSPECT_LOGS",
    "STORE_KEY",
    "InspectChatModel",
    "InspectExport",
    "InspectImport",
    "export_inspect_logs",
    "forecast",
    "forecast_score",
    "import_inspect_log",
    "inspect_messages",
    "inspect_model",
    "pastcast_agent",
    "seed_tiktoken_cache",
    "tiktoken_cache_path",
]
