"""Token usage and its price."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import TypeAdapter


@dataclass(kw_only=True, slots=True)
class Usage:
    """Tokens of one call or a sum of calls, and what they cost.

    A plain dataclass: a run adds usages up at every step. One from outside is checked
    on the way in: by :data:`UsageAdapter` (a replay file) or by the model that holds it
    (a saved session's metadata)."""

    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    """Calls whose price is unknown (a local or compatible model no table lists): their
    cost counts as 0 in ``cost_usd``, so a frontend can say the total is incomplete."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            calls=self.calls + other.calls,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def cached_share(self) -> float:
        """Share of input tokens read from the prompt cache."""
        total = self.total_input_tokens
        return self.cache_read_input_tokens / total if total else 0.0


UsageAdapter: TypeAdapter[Usage] = TypeAdapter(Usage)


def cost_text(cost_usd: float, unpriced_calls: int) -> str:
    """A cost as the user reads it, plain about what is not known: ``$0.0123``, ``cost
    unknown`` (a model whose price no table has), ``$0.0123 + unknown (2 calls unpriced)``."""
    if not unpriced_calls:
        return f"${cost_usd:.4f}"
    if not cost_usd:
        return "cost unknown"
    calls = "call" if unpriced_calls == 1 else "calls"
    return f"${cost_usd:.4f} + unknown ({unpriced_calls} {calls} unpriced)"


@dataclass(frozen=True)
class Pricing:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float | None = None
    """Defaults to 1.25 × input (5-minute cache writes)."""
    cache_read: float | None = None
    """Defaults to 0.1 × input."""
    estimated: bool = False
    """True when the model was not in the table and a family price was assumed."""

    def cost(self, usage: Usage) -> float:
        write = self.cache_write if self.cache_write is not None else self.input * 1.25
        read = self.cache_read if self.cache_read is not None else self.input * 0.1
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * write
            + usage.cache_read_input_tokens * read
        ) / 1_000_000


# Public list prices per family (USD per million tokens). Pass ``pricing=`` to a
# model to override; unknown models fall back to their family's price, flagged estimated.
_FAMILY_PRICES: list[tuple[str, Pricing]] = [
    ("opus-4-0", Pricing(15.0, 75.0)),
    ("opus-4-1", Pricing(15.0, 75.0)),
    ("opus-4-2025", Pricing(15.0, 75.0)),
    ("opus", Pricing(5.0, 25.0)),
    ("sonnet", Pricing(3.0, 15.0)),
    ("3-5-haiku", Pricing(0.8, 4.0)),
    ("3-haiku", Pricing(0.25, 1.25)),
    ("haiku", Pricing(1.0, 5.0)),
]
_KNOWN_PREFIXES = (
    "claude-opus-4",
    "claude-sonnet-4",
    "claude-haiku-4-5",
    "claude-3-5-haiku",
    "claude-3-haiku",
)


def pricing_for(model: str) -> Pricing:
    """The list price of ``model``, or its family's price flagged as estimated. Claude's
    ids on Amazon Bedrock (``us.anthropic.claude-…-v1:0``, or an inference profile's ARN)
    and on Vertex AI (``claude-…@20250929``) are priced as the model they name."""
    name = model.lower().rpartition("/")[2].rpartition("anthropic.")[2].replace("@", "-")
    for key, price in _FAMILY_PRICES:
        if key in name:
            if name.startswith(_KNOWN_PREFIXES):
                return price
            return Pricing(price.input, price.output, estimated=True)
    return Pricing(3.0, 15.0, estimated=True)


# OpenAI's public list prices (USD per million tokens; cached input as the cache read).
# OpenAI charges nothing extra to write its prompt cache. Only these models and their
# dated snapshots are priced: any other model behind the Chat Completions API (Ollama,
# vLLM, a gateway) has no price we could know.
_OPENAI_PRICES: dict[str, Pricing] = {
    "gpt-4o": Pricing(2.5, 10.0, cache_write=2.5, cache_read=1.25),
    "gpt-4o-2024-05-13": Pricing(5.0, 15.0, cache_write=5.0, cache_read=5.0),
    "gpt-4o-mini": Pricing(0.15, 0.6, cache_write=0.15, cache_read=0.075),
    "gpt-4.1": Pricing(2.0, 8.0, cache_write=2.0, cache_read=0.5),
    "gpt-4.1-mini": Pricing(0.4, 1.6, cache_write=0.4, cache_read=0.1),
    "gpt-4.1-nano": Pricing(0.1, 0.4, cache_write=0.1, cache_read=0.025),
    "gpt-5": Pricing(1.25, 10.0, cache_write=1.25, cache_read=0.125),
    "gpt-5-mini": Pricing(0.25, 2.0, cache_write=0.25, cache_read=0.025),
    "gpt-5-nano": Pricing(0.05, 0.4, cache_write=0.05, cache_read=0.005),
    "o3": Pricing(2.0, 8.0, cache_write=2.0, cache_read=0.5),
    "o4-mini": Pricing(1.1, 4.4, cache_write=1.1, cache_read=0.275),
}
_SNAPSHOT = re.compile(r"(.+?)-\d{4}-\d{2}-\d{2}")


def openai_pricing_for(model: str) -> Pricing | None:
    """The list price of an OpenAI model (or a dated snapshot of one, such as
    ``gpt-4o-2024-08-06``); None for any other model: its cost is unknown."""
    name = model.lower().removeprefix("openai/")
    price = _OPENAI_PRICES.get(name)
    if price is None and (snapshot := _SNAPSHOT.fullmatch(name)):
        price = _OPENAI_PRICES.get(snapshot.group(1))
    return price
