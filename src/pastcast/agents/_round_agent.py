"""Foresight Arena's LLM benchmark agent (appendix D.1; docs/arena.md): one conversation per
round over all its markets, with native tools. Each market is one ``Episode`` at the round's
commit deadline: prices come from its ``market_history`` and searches are the step's own tools,
so neither the outcome nor the benchmark price can reach the model. The conversation runs through
the first market's episode; a round without a valid submission gives every market an unusable
forecast.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import timedelta
from typing import Any

from pastcast.agents._answer import Decoding
from pastcast.agents._prompts import load_prompt
from pastcast.agents._tool_agent import _tools_text
from pastcast.env import BudgetExceeded, Episode, ToolError
from pastcast.models import Model, ToolSpec
from pastcast.records import FailureReason, Forecast, Message, RequestedToolCall

ROUND_PROMPT = "round_benchmark.v1"
HISTORY_DAYS = 7

_INDEX = {"index": {"type": "integer", "minimum": 0, "description": "the market's index"}}
_MARKET_TOOLS = (
    ToolSpec(
        name="getMarketDetails",
        description="A market's question, description, resolution criteria, category, dates "
        "and latest daily YES price (of the last day that ended before the deadline).",
        parameters={"type": "object", "properties": _INDEX, "required": ["index"]},
    ),
    ToolSpec(
        name="getPriceHistory",
        description=f"A market's daily YES prices over the last {HISTORY_DAYS} days before the "
        "deadline, oldest first.",
        parameters={"type": "object", "properties": _INDEX, "required": ["index"]},
    ),
)
_CORPUS_TOOLS = (
    ToolSpec(
        name="searchNews",
        description="Search the news archive (only documents published before the deadline).",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "search terms"},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 10},
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        name="readDocument",
        description="Read the full text of a document returned by an earlier search.",
        parameters={
            "type": "object",
            "properties": {"doc_id": {"type": "string", "description": "a search result's id"}},
            "required": ["doc_id"],
        },
    ),
)
_SUBMIT = ToolSpec(
    name="submitPredictions",
    description="Submit the round's forecasts: one probability of YES per market, in index "
    "order (0 to the last). Call it once, last.",
    parameters={
        "type": "object",
        "properties": {
            "probabilities": {
                "type": "array",
                "items": {"type": "number", "minimum": 0, "maximum": 1},
                "description": "P(YES) of market 0, market 1, ...",
            }
        },
        "required": ["probabilities"],
    },
)
ROUND_TOOLS: tuple[ToolSpec, ...] = (*_MARKET_TOOLS, *_CORPUS_TOOLS, _SUBMIT)
"""Every tool the agent may offer (the corpus tools only where the step has a corpus)."""
_STEP_TOOL = {"searchNews": "search", "readDocument": "read"}

_SUBMIT_NOW = (
    "Your answer counts only through the submitPredictions tool. Call submitPredictions now, "
    "with one probability of YES per market, in index order."
)


@dataclass
class RoundBenchmarkAgent:
    """The round-level benchmark agent; ``forecast`` is a round of one market (an ordinary
    step), ``forecast_round`` a round's episodes, one per market, at one deadline."""

    model: Model
    _: KW_ONLY
    max_turns: int = 20
    max_tool_calls: int = 60
    max_result_chars: int = 12_000
    decoding: Decoding = field(default_factory=Decoding)

    def forecast(self, episode: Episode) -> Forecast:
        return self.forecast_round([episode])[0]

    def forecast_round(self, episodes: Sequence[Episode]) -> tuple[Forecast, ...]:
        if not episodes:
            raise ValueError("a round needs at least one market")
        if len({e.question.cutoff for e in episodes}) != 1:
            raise ValueError("a round's markets share one commit deadline")
        for e in episodes:
            if len(e.question.labels) != 2:
                raise ValueError(f"market {e.question.event_id!r} is not a binary market")
        lead = episodes[0]
        specs = self._specs(lead)
        calls_left = min(self.max_tool_calls, lead.config.max_tool_calls)
        messages = _prompt(episodes, specs, calls_left)
        turns = min(self.max_turns, lead.config.max_tool_iterations)
        for turn in range(turns + 1):
            final = turn == turns or calls_left <= 0
            if final:  # the budget is spent: one last turn, offered the submission only
                messages.append(Message(role="user", content=_SUBMIT_NOW))
            offered = (_SUBMIT,) if final else specs
            reply = lead.chat(self.model, self.decoding.request(messages, tools=offered))
            messages.append(
                Message(role="assistant", content=reply.content or "", tool_calls=reply.tool_calls)
            )
            if not reply.tool_calls:
                if final:
                    break
                messages.append(Message(role="user", content=_SUBMIT_NOW))
                continue
            submitted: tuple[float, ...] | None = None
            for call in reply.tool_calls:
                if calls_left <= 0 and call.name != _SUBMIT.name:
                    text = _error("tool call budget spent: call submitPredictions")
                else:
                    text, probs = self._run(episodes, call, offered)
                    calls_left -= 1
                    submitted = submitted or probs
                messages.append(
                    Message(role="tool", content=text, tool_call_id=call.id, name=call.name)
                )
            if submitted is not None:
                raw = json.dumps({"probabilities": list(submitted)})
                return tuple(_binary(e, p, raw) for e, p in zip(episodes, submitted, strict=True))
            if final:
                break
        last = next((m.content for m in reversed(messages) if m.role == "tool"), "")
        reason: FailureReason = "budget_exhausted" if calls_left <= 0 else "no_answer_block"
        why = f"no valid submitPredictions call in the round ({last[:300]})"
        return tuple(Forecast(usable=False, failure_reason=reason, raw_text=why) for _ in episodes)

    @staticmethod
    def _specs(lead: Episode) -> tuple[ToolSpec, ...]:
        step_tools = {s.name for s in lead.tools.specs()}
        corpus = tuple(t for t in _CORPUS_TOOLS if _STEP_TOOL[t.name] in step_tools)
        return (*_MARKET_TOOLS, *corpus, _SUBMIT)

    def _run(
        self, episodes: Sequence[Episode], call: RequestedToolCall, offered: Sequence[ToolSpec]
    ) -> tuple[str, tuple[float, ...] | None]:
        """A tool call's result as the text the model reads, and the submission if it is one."""
        if call.name not in {s.name for s in offered}:
            names = ", ".join(s.name for s in offered)
            return _error(f"unknown or unavailable tool {call.name!r} (offered: {names})"), None
        args = dict(call.arguments)
        try:
            if call.name == _SUBMIT.name:
                probs = _submission(args, len(episodes))
                return json.dumps({"accepted": len(probs)}), probs
            if call.name in _STEP_TOOL:
                text = episodes[0].call_tool(
                    _STEP_TOOL[call.name], args, max_chars=self.max_result_chars
                )
                return text, None
            episode = episodes[_index(args, len(episodes))]
            if call.name == "getMarketDetails":
                result: Any = _details(episode)
            else:
                result = _history(episode)
        except ToolError as exc:
            return _error(f"{call.name}: {exc}"), None
        except BudgetExceeded as exc:
            return _error(f"{call.name}: {exc}: call submitPredictions"), None
        return json.dumps(result, ensure_ascii=False)[: self.max_result_chars], None


def _error(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _index(args: dict[str, Any], count: int) -> int:
    index = args.get("index")
    if isinstance(index, float) and index.is_integer():
        index = int(index)
    if not isinstance(index, int) or isinstance(index, bool):
        raise ToolError(f"index must be an integer from 0 to {count - 1}, not {index!r:.40}")
    if not 0 <= index < count:
        raise ToolError(f"index {index} is out of range: this round's markets are 0 to {count - 1}")
    return index


def _submission(args: dict[str, Any], count: int) -> tuple[float, ...]:
    probs = args.get("probabilities")
    if not isinstance(probs, list):
        raise ToolError(f"probabilities must be a list of {count} numbers, not {probs!r:.60}")
    bad = [
        i
        for i, p in enumerate(probs)
        if isinstance(p, bool)
        or not isinstance(p, int | float)
        or not math.isfinite(p)
        or not 0 <= p <= 1
    ]
    if bad:
        raise ToolError(f"probabilities must be numbers in [0, 1]; not those at {bad[:10]}")
    if len(probs) < count:
        missing = list(range(len(probs), count))
        raise ToolError(f"{count} probabilities needed, {len(probs)} given: markets {missing} "
                        "have none")  # fmt: skip
    if len(probs) > count:
        raise ToolError(f"{count} probabilities needed (markets 0 to {count - 1}), {len(probs)} "
                        "given")  # fmt: skip
    return tuple(float(p) for p in probs)


def _priced(episode: Episode) -> bool:
    return any(s.name == "market_history" for s in episode.tools.specs())


def _prices(episode: Episode) -> list[tuple[str, float | None]]:
    """(day, YES price) of the market's daily history (days that ended by the deadline)."""
    if not _priced(episode):
        raise ToolError("market prices are not available in this setting")
    yes = episode.question.labels[0]
    days = episode.tools.call("market_history", {})
    return [(d["day"], None if (p := d["probs"].get(yes)) is None else round(p, 4)) for d in days]


def _details(episode: Episode) -> dict[str, Any]:
    q = episode.question
    prices = _prices(episode) if _priced(episode) else []
    day, price = prices[-1] if prices else (None, None)
    return {
        "question": q.title,
        "description": q.description,
        "resolution_criteria": q.resolution_criteria,
        "category": q.category,
        "opened": q.open_time.strftime("%Y-%m-%d"),
        "scheduled_close": q.close_time.strftime("%Y-%m-%d"),
        "yes_price": price,
        "yes_price_day": day,
    }


def _history(episode: Episode) -> list[dict[str, Any]]:
    first = (episode.question.cutoff - timedelta(days=HISTORY_DAYS)).date().isoformat()
    return [{"day": d, "yes": p} for d, p in _prices(episode) if d >= first]


def _binary(episode: Episode, p: float, raw: str) -> Forecast:
    yes, no = episode.question.labels
    return Forecast(probs={yes: p, no: 1.0 - p}, raw_text=raw)


def _prompt(episodes: Sequence[Episode], specs: Sequence[ToolSpec], calls: int) -> list[Message]:
    cutoff = episodes[0].question.cutoff
    markets = "\n".join(f"{i}. {e.question.title}" for i, e in enumerate(episodes))
    fields = {
        "tools": _tools_text(tuple(specs)),
        "max_tool_calls": str(calls),
        "cutoff": f"{cutoff:%Y-%m-%d %H:%M} UTC",
        "count": str(len(episodes)),
        "last_index": str(len(episodes) - 1),
        "markets": markets,
    }
    return list(load_prompt(ROUND_PROMPT).render(fields).messages())
