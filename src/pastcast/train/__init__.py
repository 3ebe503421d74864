"""Learning from replays: training exports of run logs (chat fine-tuning records, rewards, a
Parquet table of forecasts) behind the training-split guard, each with a manifest, and the
per-step rewards. The Gymnasium environment over the same steps is in
``pastcast.integrations.gym`` (the ``gym`` extra)."""

from pastcast.train._chat import (
    ChatFunction,
    ChatMessage,
    ChatToolCall,
    Conversation,
    OpenAiMessage,
    OpenAiTool,
    ToolFunction,
    chat_message,
    conversations,
    from_chat_message,
    tool_definitions,
)
from pastcast.train._guard import TRAIN_SPLIT, UNSPLIT, SplitPolicy, split_name
from pastcast.train._manifest import (
    DatasetRef,
    ExportKind,
    ExportManifest,
    RowSource,
    RunRef,
    manifest_path,
    read_manifest,
)
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
from pastcast.train._table import (
    TABLE_COLUMNS_READ,
    export_table,
    table_schema,
)

__all__ = [
    "SOURCE_COLUMNS",
    "TABLE_COLUMNS_READ",
    "TRAIN_SPLIT",
    "UNSPLIT",
    "ChatFunction",
    "ChatMessage",
    "ChatToolCall",
    "Conversation",
    "DatasetRef",
    "ExportKind",
    "ExportManifest",
    "Keep",
    "OpenAiMessage",
    "OpenAiRecord",
    "OpenAiTool",
    "RewardMetric",
    "RewardRecord",
    "RowSource",
    "RunRef",
    "SftRecord",
    "SftShape",
    "SplitPolicy",
    "StepRewards",
    "ToolFunction",
    "chat_message",
    "conversations",
    "export_rewards",
    "export_sft",
    "export_table",
    "from_chat_message",
    "manifest_path",
    "read_manifest",
    "read_sft",
    "reward_schema",
    "sft_messages",
    "sft_schema",
    "split_name",
    "step_rewards",
    "table_schema",
    "tool_definitions",
]
