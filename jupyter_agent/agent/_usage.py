"""Counting a model call's tokens and cost into its run and session, and showing them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import UsageEvent
from ..models import Usage

if TYPE_CHECKING:
    from ._run import Run


def count_usage(run: Run, usage: Usage) -> None:
    """Add one call's usage to the run and its session, and to every run that delegated
    it (a parent's usage, and its budget, include its subagents'), and tell the panel."""
    for counted in (run, *run.ancestors):
        _count_one(counted, usage)


def _count_one(run: Run, usage: Usage) -> None:
    run.usage = run.usage + usage
    meta = run.session.metadata
    meta.usage = meta.usage + usage
    run.emit(
        UsageEvent(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
            cost_usd=usage.cost_usd,
            run_cost_usd=run.usage.cost_usd,
            session_cost_usd=meta.usage.cost_usd,
            run_input_tokens=run.usage.total_input_tokens,
            run_output_tokens=run.usage.output_tokens,
            run_cache_read_input_tokens=run.usage.cache_read_input_tokens,
            run_unpriced_calls=run.usage.unpriced_calls,
            session_unpriced_calls=meta.usage.unpriced_calls,
        )
    )
