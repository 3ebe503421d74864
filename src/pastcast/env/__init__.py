"""The episode environment: a forecast step, its cutoff-bound tools, budgets and notebook."""

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.env._check import EnvCheckError, EnvCheckReport, check_env
    from pastcast.env._config import EnvConfig
    from pastcast.env._episode import Episode, ForecastEnv, PublicHistory
    from pastcast.env._question import QuestionView, question_view
    from pastcast.env._toolkit import (
        BudgetExceeded,
        DocumentText,
        ListedPost,
        MarketDay,
        PythonResult,
        SearchResult,
        ToolDef,
        ToolError,
    )
    from pastcast.env._tools import TOOLS, Toolbox

__all__ = [
    "TOOLS",
    "BudgetExceeded",
    "DocumentText",
    "EnvCheckError",
    "EnvCheckReport",
    "EnvConfig",
    "Episode",
    "ForecastEnv",
    "ListedPost",
    "MarketDay",
    "PublicHistory",
    "PythonResult",
    "QuestionView",
    "SearchResult",
    "ToolDef",
    "ToolError",
    "Toolbox",
    "check_env",
    "question_view",
]

__getattr__, __dir__ = lazy_exports(__name__)
