"""Learning from replays: training exports of run logs (chat fine-tuning records, rewards, a
Parquet table of forecasts) behind the training-split guard, each with a manifest, and the
per-step rewards; supervised fine-tuning on an export with TRL (``sft_train``, the ``train``
extra; ``tiny_base``: a student built offline). The Gymnasium environment over the same steps is in
``pastcast.integrations.gym`` (the ``gym`` extra)."""

from pastcast.train._chat import chat_message, conversations
from pastcast.train._finetune import SftTraining, load_export, sft_train, tiny_base
from pastcast.train._guard import SplitPolicy
from pastcast.train._manifest import ExportManifest, manifest_path, read_manifest
from pastcast.train._reward_export import RewardRecord, export_rewards, reward_schema
from pastcast.train._rewards import RewardMetric, StepRewards, step_rewards
from pastcast.train._sft import (
    Keep,
    OpenAiRecord,
    SftRecord,
    SftShape,
    export_sft,
    read_sft,
    sft_messages,
    sft_schema,
)
from pastcast.train._source import SOURCE_COLUMNS
from pastcast.train._table import TABLE_COLUMNS_READ, export_table, table_schema

__all__ = [
    "SOURCE_COLUMNS",
    "TABLE_COLUMNS_READ",
    "ExportManifest",
    "Keep",
    "OpenAiRecord",
    "RewardMetric",
    "RewardRecord",
    "SftRecord",
    "SftShape",
    "SftTraining",
    "SplitPolicy",
    "StepRewards",
    "chat_message",
    "conversations",
    "export_rewards",
    "export_sft",
    "export_table",
    "load_export",
    "manifest_path",
    "read_manifest",
    "read_sft",
    "reward_schema",
    "sft_messages",
    "sft_schema",
    "sft_train",
    "step_rewards",
    "table_schema",
    "tiny_base",
]
