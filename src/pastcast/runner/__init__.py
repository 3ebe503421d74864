"""The runner: plans agents x events x steps x rollouts, runs them on an executor (threads, or
Dask workers) under per-provider limits, writes and resumes logs, and accounts for the work."""

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.runner._accounting import Accounting
    from pastcast.runner._config import MAX_ROLLOUTS, MAX_WORKERS, RunConfig
    from pastcast.runner._determinism import check_deterministic
    from pastcast.runner._estimate import PlanEstimate, estimate_plan
    from pastcast.runner._executors import Executor, executors
    from pastcast.runner._limits import ProviderGates
    from pastcast.runner._plan import ExperimentPlan, load_plan, reschedule
    from pastcast.runner._plan_file import load_record, read_plan_file, write_record
    from pastcast.runner._presets import (
        Preset,
        PresetRecord,
        PresetSetting,
        deep_merge,
        preset,
        preset_names,
        presets,
        with_preset,
    )
    from pastcast.runner._run import RunResult, code_version, new_run_header, run_benchmark
    from pastcast.runner._work import (
        CorpusRef,
        StepOutcome,
        StepTask,
        WorkContext,
        agent_env_config,
        grade_step,
        graded_step_record,
        play_episode,
    )

__all__ = [
    "MAX_ROLLOUTS",
    "MAX_WORKERS",
    "Accounting",
    "CorpusRef",
    "Executor",
    "ExperimentPlan",
    "PlanEstimate",
    "Preset",
    "PresetRecord",
    "PresetSetting",
    "ProviderGates",
    "RunConfig",
    "RunResult",
    "StepOutcome",
    "StepTask",
    "WorkContext",
    "agent_env_config",
    "check_deterministic",
    "code_version",
    "deep_merge",
    "estimate_plan",
    "executors",
    "grade_step",
    "graded_step_record",
    "load_plan",
    "load_record",
    "new_run_header",
    "play_episode",
    "preset",
    "preset_names",
    "presets",
    "read_plan_file",
    "reschedule",
    "run_benchmark",
    "with_preset",
    "write_record",
]

__getattr__, __dir__ = lazy_exports(__name__)
