"""The episode environment: a forecast step, its cutoff-bound tools, budgets and notebook."""

from pastcast.env._config import EnvConfig
from pastcast.env._episode import Episode, ForecastEnv, PublicHistory
from pastcast.env._question import QuestionView, question_view
from pastcast.env._tools import BudgetExceeded, Toolbox, ToolError

__all__ = [
    "BudgetExceeded",
    "EnvConfig",
    "Episode",
    "ForecastEnv",
    "PublicHistory",
    "QuestionView",
    "ToolError",
    "Toolbox",
    "question_view",
]
