"""Work a Stop must not cut in half: a write under way, a process being killed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def to_the_end(aw: Awaitable[T]) -> tuple[T, bool]:
    """Await ``aw`` to its end even if the caller is cancelled meanwhile.

    Returns the result and whether a cancel arrived; the caller must then re-raise it.
    """
    task = asyncio.ensure_future(aw)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = cancelled or not task.cancelled()
    return task.result(), cancelled
