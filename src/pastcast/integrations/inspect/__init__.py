"""pastcast inside Inspect (the ``inspect`` extra): the task ``pastcast/forecast``, its solver
and scorer, Inspect's models as the ``inspect`` model provider, Inspect logs as run logs, and
run logs as Inspect logs (for ``inspect view``).

Registered through Inspect's entry point (group ``inspect_ai``), so ``inspect eval
pastcast/forecast -T dataset=world --model ...`` finds the task. See docs/integrations.md.
"""

from pastcast.integrations.inspect._export import export_inspect_logs
from pastcast.integrations.inspect._log import import_inspect_log
from pastcast.integrations.inspect._task import forecast, forecast_score, pastcast_agent
from pastcast.integrations.inspect._tokens import seed_tiktoken_cache

__all__ = [
    "export_inspect_logs",
    "forecast",
    "forecast_score",
    "import_inspect_log",
    "pastcast_agent",
    "seed_tiktoken_cache",
]
